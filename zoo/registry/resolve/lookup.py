"""Looking a request up: its key, then the cache, then each remote in order
(``remotes/download.py``). A remote that fails costs only itself: the next remote,
then the build, is tried. What a lookup does not find is left to ``schedule``."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from zoo._errors import BuildError, IntegrityError, MissingExtraError
from zoo._options import FetchOptions
from zoo.registry.catalog.plugin_loader import LoadOptions
from zoo.registry.events import Notice, Progress, stderr_notice
from zoo.registry.request.keys import BuildRequest, can_compile_here
from zoo.registry.skipped import Skipped
from zoo.registry.store import evaluations
from zoo.registry.store.cache import Cache, CorruptEntry, Entry
from zoo.registry.store.failures import Failure

if TYPE_CHECKING:
    from pathlib import Path

    from zoo.registry.catalog.catalog import Catalog
    from zoo.registry.remotes import Remote

Source = Literal["cache", "remote", "build"]
Found = tuple[Entry, Source]
Outcome = Found | Failure | Skipped


@dataclass
class Lookup:
    """A request's entry from the cache or the remotes, as ``options`` allow; the state a resolver keeps."""

    cache: Cache
    options: FetchOptions = field(default_factory=FetchOptions)
    remotes: Sequence[Remote] = ()
    offline: bool = False
    plugins: LoadOptions = field(default_factory=LoadOptions)
    """What a build unit's worker loads to find the model."""
    catalog: Catalog | None = None
    """The models, for builds in this process."""
    progress: Progress | None = None
    progress_for: Callable[[str], Progress] | None = None
    """A progress line per label (a model and its targets), when there are several."""
    notice: Notice = stderr_notice
    ray_address_from: str = "--ray-address"
    """Where ``options.ray_address`` came from, for errors (e.g. zoo.toml's ``[executor]``)."""
    evaluated: dict[str, dict[str, Any]] = field(default_factory=dict, init=False)
    """With ``eval_dir``: the numerics on the user's data, by entry key (``evaluations.py``)."""

    def __post_init__(self) -> None:
        from zoo.registry.remotes.trust import CachePolicy

        self._policy = CachePolicy.for_remotes(self.remotes)

    def _refusal(self, entry: Entry | None) -> str | None:
        """Why the trusted keys in force do not let ``entry`` be handed out (``trust.py``)."""
        return None if entry is None or self._policy is None else self._policy.refusal(entry)

    @property
    def _numerics(self) -> bool:
        return self.options.verify is True or self.options.bundle or self.options.eval_dir is not None

    def _progress(self, label: str) -> Progress | None:
        return self.progress_for(label) if self.progress_for else self.progress

    def _lookup(
        self, request: BuildRequest, progress: Progress | None
    ) -> tuple[str, str | None, Outcome | None]:
        """The request's key, the identity of the data its numerics must have run on
        (None when not asked for), and what the cache or a remote has for it (an
        entry, or a recorded failure); raises when nothing is found and building is
        ruled out."""
        opts = self.options
        notes: list[str] = []
        refused = False
        try:
            key: str | None = request.key()
        except MissingExtraError:
            if opts.force_build:
                raise
            key = None  # e.g. calibration data that only the compile extra installs; a remote may still have it
        data = _numerics_data(request, self.options.eval_dir) if self._numerics and key is not None else None
        refused_cache: str | None = None
        if not opts.force_build:
            entry = self._checked_get(key) if key else None
            refused_cache = self._refusal(entry)
            if refused_cache is not None:
                self.notice(f"{request.spec.name} for {request.target.name}: not handing out the cached artifact "
                            f"(key {str(key)[:12]}…): {refused_cache}; looking further")
                entry = None
            if entry is not None and self._has(entry, data, opts.bundle):
                return entry.key, data, (entry, "cache")
            if entry is not None and not opts.build:
                raise BuildError(
                    f"{request.spec.name} for {request.target.name} is cached without "
                    f"{_missing(entry, data, opts.bundle, user=self._unevaluated(entry))}, which needs lowering it again, and building was ruled out"
                    " (--no-build)"
                )
            failure = self._recorded_failure(key) if key and entry is None else None
            if failure is not None:
                if not opts.keep_going:
                    raise failure.to_error()
                return failure.key, data, failure
            if entry is None and (self.remotes or opts.any_toolchain or not can_compile_here() or key is None):
                from zoo.registry.remotes.download import find_prebuilt

                search = find_prebuilt(
                    request, self.cache, self.remotes, any_toolchain=opts.any_toolchain, offline=self.offline,
                    say=self.notice, progress=progress, cached_ok=lambda e: self._refusal(e) is None,
                    replace=refused_cache is not None,
                )
                found, notes, refused = search.found, search.notes, bool(search.refused)
                if found is not None and (not self._numerics or self._has(found.entry, data, opts.bundle)):
                    return found.entry.key, data, (found.entry, found.source)
        if not opts.build:
            cached = "not in the cache" if refused_cache is None else f"the cached artifact is not handed out: {refused_cache}"
            where = "; ".join([cached, *notes])
            # A remote that offered a tampered artifact is the news, more than the missing build.
            error = IntegrityError if refused else BuildError
            light = "" if can_compile_here() else "; nor could this install build it: pip install 'ethosu-zoo[compile]'"
            raise error(
                f"{request.spec.name} for {request.target.name}: {where}; and building was ruled out (--no-build){light}"
            )
        if key is None:
            key = request.key()  # raises: this install cannot build it
        return key, data, None

    def _has(self, entry: Entry, data: str | None, bundle: bool) -> bool:
        """Whether ``entry`` has what was asked for; with ``eval_dir``, the user's evaluation
        on ``data`` is looked up apart from the entry (and kept for ``evaluated``)."""
        if data is None or self.options.eval_dir is None:
            return _has(entry, data, bundle)
        measured = evaluations.recorded(self.cache.base, entry.key, data)
        if measured is not None:
            self.evaluated[entry.key] = measured
        return measured is not None and _has(entry, None, bundle)

    def _unevaluated(self, entry: Entry) -> bool:
        return self.options.eval_dir is not None and entry.key not in self.evaluated

    def _recorded_failure(self, key: str) -> Failure | None:
        try:
            return self.cache.failure(key)
        except CorruptEntry as exc:
            self.notice(f"{exc}; removing it")
            self.cache.forget_failure(key)
            return None

    def _checked_get(self, key: str) -> Entry | None:
        try:
            return self.cache.get(key)
        except CorruptEntry as exc:
            self.notice(f"{exc}; removing it" + (" and building again" if self.options.build else ""))
            with self.cache.lock(key):
                self.cache.evict(key)
            return None


def _numerics_data(request: BuildRequest, eval_dir: Path | None) -> str:
    from zoo.registry.numerics import data_identity, evaluation_from_dir  # torch-free at import

    evaluation = evaluation_from_dir(request.spec, eval_dir) if eval_dir is not None else None
    return data_identity(request.spec, request.calibration, evaluation)


def _has_numerics(entry: Entry, data: str) -> bool:
    """Recorded numerics count only if they ran on today's data with today's check, and zoo
    sealed the record (an edited one is no result: the check runs again)."""
    recorded = entry.record.get("numerics")
    return recorded is not None and recorded.get("data_identity") == data


def _has(entry: Entry, data: str | None, bundle: bool) -> bool:
    return (data is None or _has_numerics(entry, data)) and (not bundle or entry.file("bundle") is not None)


def _missing(entry: Entry, data: str | None, bundle: bool, *, user: bool = False) -> str:
    parts = []
    if user:
        parts.append("an evaluation on the --eval-dir data")
    elif data is not None and not _has_numerics(entry, data):
        recorded = entry.record.get("numerics")
        parts.append("numerical results" if recorded is None else "numerical results for the current data and check")
    if bundle and entry.file("bundle") is None:
        parts.append("a self-test bundle")
    return " and ".join(parts)

