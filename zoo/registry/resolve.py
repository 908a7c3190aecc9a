"""Resolve each request to a cache entry: the cache first, then the remotes
in order (``remotes/download.py``), then a local build. A remote that fails
costs only itself: the next remote, then the build, is tried.

What must be built is grouped into build units (one per model and TOSA
specification), built by an executor under the lock of every key the units
make, and checked before it is stored (``build_units/accept.py``). The cache's
locks make one build per key, across threads and processes.

A build that fails is a ``Failure``: the cache records the deterministic ones
(``failures.py``), so a fetch reports a known failure without compiling again.
With ``keep_going`` the other builds go on and every failure is returned as
data; without it the first one is raised.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from zoo._errors import BuildError, IntegrityError, MissingExtraError, PluginError
from zoo._options import FetchOptions
from zoo._units import human_bytes
from zoo.registry.catalog.plugin_loader import LoadOptions
from zoo.registry.events import Notice, Progress, stderr_notice
from zoo.registry.offline import no_network
from zoo.registry.request.io_boundary import Boundary
from zoo.registry.request.keys import BuildRequest, can_compile_here
from zoo.registry.request.precision import DEFAULT as DEFAULT_PRECISION
from zoo.registry.request.precision import Precision
from zoo.registry.skipped import Skipped
from zoo.registry.store import evaluations
from zoo.registry.store.cache import Cache, CorruptEntry, Entry
from zoo.registry.store.failures import Failure, first_error, recordable

if TYPE_CHECKING:
    from pathlib import Path

    from zoo.registry.build_units.unit import BuildUnit, UnitFailure, UnitTarget
    from zoo.registry.catalog.catalog import Catalog
    from zoo.registry.remotes import Remote

Source = Literal["cache", "remote", "build"]
Found = tuple[Entry, Source]
Outcome = Found | Failure | Skipped


@dataclass
class _Pending:
    """A key that needs a local build, and the requests that want it."""

    request: BuildRequest
    key: str
    data: str | None
    indexes: list[int]
    previous: Entry | None = None
    bundle: bool = False


@dataclass
class Resolver:
    """Finds or builds the entries for a batch of requests, as ``options`` allow."""

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

    def resolve(self, requests: Sequence[BuildRequest]) -> list[Found]:
        """An entry for each request, in order; raises the first failure. ``verify=True``
        needs numerical results and ``bundle`` a .bpte: a cached entry without them is
        lowered again (same key, same .pte bytes) and replaced by one that has them."""
        found: list[Found] = []
        failures: list[Failure] = []
        for outcome in self.outcomes(requests):
            if isinstance(outcome, Failure):
                failures.append(outcome)
            elif not isinstance(outcome, Skipped):
                found.append(outcome)
        if failures:
            raise first_error(failures)
        return found

    def outcomes(self, requests: Sequence[BuildRequest]) -> list[Outcome]:
        """An entry or a failure for each request, in order. Without ``keep_going``
        the first failure is raised and the builds not yet started are not.

        Offline, no thread of this process opens a connection meanwhile: keys ask the
        plugins' ``identity()``, and inline builds run their code. Except with Ray, whose
        driver must reach its cluster; its tasks build offline where they run."""
        with no_network(self.offline and self.options.executor != "ray"):
            return self._outcomes(requests)

    def _outcomes(self, requests: Sequence[BuildRequest]) -> list[Outcome]:
        done: dict[int, Outcome] = {}
        pending: dict[str, _Pending] = {}
        shard = self.options.shard
        if shard is not None:
            # Before any lookup, so that jobs with different caches agree on the partition.
            from zoo.registry.build_units.shard import in_shard

            for i, (request, mine) in enumerate(zip(requests, in_shard(requests, *shard), strict=True)):
                if not mine:
                    done[i] = Skipped(request.spec.name, request.target.name, shard)
        for group in _by_model(requests):
            group = [(i, r) for i, r in group if i not in done]
            if not group:
                continue
            report = self._progress(f"{group[0][1].spec.name} → {', '.join(r.target.name for _, r in group)}")
            for i, request in group:
                try:
                    key, data, hit = self._lookup(request, report)
                except PluginError as exc:  # e.g. identity() of its weights: this request alone fails
                    if not self.options.keep_going:
                        raise
                    done[i] = Failure(request.spec.name, request.target.name, request.weights.name, "",
                                      "PluginError", str(exc), stage="identity")
                    continue
                if hit is not None:
                    done[i] = hit
                elif key in pending:
                    pending[key].indexes.append(i)
                else:
                    pending[key] = _Pending(request, key, data, [i])
        if pending:
            self._build(list(pending.values()), done)
        return [done[i] for i in range(len(requests))]

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

    def _build(self, pending: list[_Pending], done: dict[int, Outcome]) -> None:
        from zoo.registry.build_units.accept import accept
        from zoo.registry.build_units.executors import executor_for
        from zoo.registry.build_units.unit import BuiltArtifact, UnitFailure

        opts = self.options
        with contextlib.ExitStack() as locks:
            for p in sorted(pending, key=lambda p: p.key):  # one order everywhere: no deadlock between processes
                locks.enter_context(self.cache.lock(p.key))
            todo: list[_Pending] = []
            for p in pending:
                # Another process may have finished the same build while we waited.
                entry = None if opts.force_build else self._checked_get(p.key)
                refusal = self._refusal(entry)
                if refusal is not None:  # a build of our own replaces it, as with --force-build
                    self.cache.evict(p.key)
                    entry = None
                if entry is not None and self._has(entry, p.data, opts.bundle):
                    done.update((i, (entry, "cache")) for i in p.indexes)
                    continue
                if entry is not None:
                    self.notice(
                        f"{p.request.spec.name} for {p.request.target.name} is cached without "
                        f"{_missing(entry, p.data, opts.bundle, user=self._unevaluated(entry))}; lowering it again to add it "
                        "(the .pte bytes must come out identical)"
                    )
                    p.previous = entry
                    p.bundle = opts.bundle or entry.file("bundle") is not None  # an upgrade never loses what it had
                else:
                    if opts.force_build:
                        self.cache.evict(p.key)
                    p.bundle = opts.bundle
                todo.append(p)
            if not opts.force_build:
                todo = [p for p in todo if not self._from_default(p, done)]
            if not todo:
                return
            units, members = self._units(todo)
            executor = executor_for(opts.executor, jobs=opts.jobs, units=len(units), catalog=self.catalog,
                                    ray_address=opts.ray_address, ray_results=opts.ray_results,
                                    ray_address_from=self.ray_address_from)
            failures: dict[int, list[UnitFailure]] = {}
            for result in executor.map(units, lambda u: self._progress(u.label)):
                n = units.index(result.unit)
                for outcome, p in zip(result.outcomes, members[n], strict=True):
                    wanted = next(t for t in result.unit.targets if t.key == p.key)
                    if isinstance(outcome, UnitFailure):
                        if outcome not in failures.setdefault(n, []):
                            failures[n].append(outcome)
                        done.update((i, self._failed(p, wanted, outcome)) for i in p.indexes)
                        continue
                    measured = None
                    if opts.eval_dir is not None and p.data is not None:
                        # The user's evaluation never becomes the artifact's own numerics (evaluations.py).
                        own = (p.previous.manifest.verification or {}).get("numerics") if p.previous else None
                        manifest, measured = evaluations.split(outcome.manifest, own)
                        outcome = BuiltArtifact(manifest, outcome.files)
                    entry = accept(outcome, wanted, self.cache, previous=p.previous)
                    if measured is not None and p.data is not None:
                        evaluations.record(self.cache.base, entry.key, p.data, measured)
                        self.evaluated[entry.key] = measured
                    done.update((i, (entry, "build")) for i in p.indexes)
                if failures and not (opts.keep_going or executor.keeps_going):
                    break
            if failures and not opts.keep_going:
                # The first unit's failure, whichever finished first, so the message does not depend on timing.
                ordered = [f for n in sorted(failures) for f in failures[n]]
                more = f" ({len(ordered) - 1} more build(s) failed too)" if len(ordered) > 1 else ""
                raise ordered[0].to_error(more=more)

    def _failed(self, p: _Pending, wanted: UnitTarget, outcome: UnitFailure) -> Failure:
        """The failure as data, recorded in the cache (under the key's lock, which
        the caller holds) when trying again would fail the same way."""
        r = p.request
        keep = outcome.error == "BuildError" and recordable(outcome.stage)
        failure = Failure(
            model=r.spec.name, target=r.target.name, weights=r.weights.name, key=p.key,
            error=outcome.error, message=outcome.message, stage=outcome.stage, operator=outcome.operator,
            pass_name=outcome.pass_name, tools=wanted.key_inputs.get("tools"), recorded=keep,
            variant={k: wanted.key_inputs[k] for k in ("target", "io") if k in wanted.key_inputs}
            | ({"precision": r.precision.name} if r.precision != DEFAULT_PRECISION else {}),
        )
        if keep:
            self.cache.record_failure(failure)
        return failure

    def _from_default(self, p: _Pending, done: dict[int, Outcome]) -> bool:
        """An SRAM budget that the cached default build's own Vela options meet best is
        answered from it, without compiling (``build_units/derive.py``); the caller holds p's lock."""
        from zoo.registry.build_units import derive
        from zoo.registry.build_units.accept import accept
        from zoo.registry.build_units.unit import UnitFailure, UnitTarget

        r = p.request
        if r.target.sram_budget is None or p.previous is not None or p.bundle or self.options.eval_dir is not None:
            return False
        default = self._checked_get(derive.default_of(r).key())
        if default is None or self._refusal(default) is not None or (p.data is not None and not _has(default, p.data, False)):
            return False
        made = derive.from_default(r, default)
        if made is None:
            return False
        wanted = UnitTarget(r.target, r.key_inputs())
        if isinstance(made, UnitFailure):
            failure = self._failed(p, wanted, made)
            if not self.options.keep_going:
                raise failure.to_error()
            done.update((i, failure) for i in p.indexes)
            return True
        built, chosen = made
        entry = accept(built, wanted, self.cache)
        self.notice(
            f"{r.spec.name} for {r.target.name}: the default build cached here needs {human_bytes(chosen.sram_bytes)} "
            f"of SRAM and its Vela options are the fastest that fit {human_bytes(r.target.sram_budget)}, so it is "
            "the artifact for this budget (no compile)"
        )
        done.update((i, (entry, "build")) for i in p.indexes)
        return True

    def _units(self, todo: list[_Pending]) -> tuple[list[BuildUnit], list[list[_Pending]]]:
        from zoo.registry.build_units.unit import BuildUnit, UnitTarget

        """One unit per model, weights, calibration and TOSA specification, in request order."""
        groups: dict[tuple[str, str, int, str, Boundary, Precision], list[_Pending]] = {}
        together: dict[tuple[str, str, int], list[str]] = {}
        for p in todo:
            r = p.request
            family = r.target.tosa_spec or "portable"
            groups.setdefault((r.spec.name, r.weights.name, id(r.calibration), family, r.boundary, r.precision),
                              []).append(p)
            together.setdefault((r.spec.name, r.weights.name, id(r.calibration)), []).append(r.target.name)
        units: list[BuildUnit] = []
        members: list[list[_Pending]] = []
        for (model, weights, calibration, _, boundary, precision), group in groups.items():
            unit = BuildUnit(
                model=model,
                weights=weights,
                targets=tuple(
                    UnitTarget(p.request.target, p.request.key_inputs(), verify=self._numerics, bundle=p.bundle)
                    for p in group
                ),
                plugins=self.plugins,
                calibration_dir=self.options.calibration_dir,
                boundary=boundary,
                precision=precision,
                eval_dir=self.options.eval_dir,
                built_with=tuple(together[(model, weights, calibration)]),
                offline=self.offline,
            )
            units.append(unit)
            members.append(group)
        return units, members


def _by_model(requests: Sequence[BuildRequest]) -> list[list[tuple[int, BuildRequest]]]:
    """The requests with their positions, grouped by model, keeping their order."""
    groups: dict[str, list[tuple[int, BuildRequest]]] = {}
    for i, r in enumerate(requests):
        groups.setdefault(r.spec.name, []).append((i, r))
    return list(groups.values())


def _numerics_data(request: BuildRequest, eval_dir: Path | None) -> str:
    from zoo.registry.numerics import data_identity, evaluation_from_dir  # torch-free at import

    evaluation = evaluation_from_dir(request.spec, eval_dir) if eval_dir is not None else None
    return data_identity(request.spec, request.calibration, evaluation)


def _has_numerics(entry: Entry, data: str) -> bool:
    """Recorded numerics count only if they ran on today's data with today's check."""
    recorded = (entry.manifest.verification or {}).get("numerics")
    return recorded is not None and recorded.get("data_identity") == data


def _has(entry: Entry, data: str | None, bundle: bool) -> bool:
    return (data is None or _has_numerics(entry, data)) and (not bundle or entry.file("bundle") is not None)


def _missing(entry: Entry, data: str | None, bundle: bool, *, user: bool = False) -> str:
    parts = []
    if user:
        parts.append("an evaluation on the --eval-dir data")
    elif data is not None and not _has_numerics(entry, data):
        recorded = (entry.manifest.verification or {}).get("numerics")
        parts.append("numerical results" if recorded is None else "numerical results for the current data and check")
    if bundle and entry.file("bundle") is None:
        parts.append("a self-test bundle")
    return " and ".join(parts)

