"""The public Python API: one ``Zoo`` ties config, plugins and targets together."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from zoo._config import Config, cache_dir, load_config
from zoo._errors import SpecError, UsageError
from zoo._options import BuildChoices, Choices, FetchArgs, FetchOptions, choice_args, choices_from
from zoo._spec import ModelSpec
from zoo.registry.catalog.plugin_loader import LoadOptions, PluginStatus, Registry
from zoo.registry.events import Notice, Progress, stderr_notice
from zoo.registry.npu.targets import Target, TargetTable

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from typing_extensions import Unpack

    from zoo._api.tuning import Tuning
    from zoo.registry.handout import Artifact
    from zoo.registry.remotes import Remote
    from zoo.registry.remotes.base import PublishReport
    from zoo.registry.request.keys import BuildRequest
    from zoo.registry.skipped import Skipped
    from zoo.registry.store.cache import Cache
    from zoo.registry.store.failures import Failure
    from zoo.registry.verify.verification import Verification


@dataclass
class ZooOptions:
    plugins: tuple[str, ...] = ()
    model_files: tuple[Path, ...] = ()
    strict: bool = False
    config_path: Path | None = None
    offline: bool = False
    """Open no connection, from plugins' imports on (zoo.toml's ``offline`` and ZOO_OFFLINE too)."""


class Zoo:
    """Loads config and plugins once; everything else asks it."""

    def __init__(self, options: ZooOptions | None = None, *, registry: Registry | None = None, stderr: TextIO | None = None) -> None:
        self.options = options or ZooOptions()
        self._registry = registry
        self._stderr = stderr

    @cached_property
    def config(self) -> Config:
        return load_config(self.options.config_path)

    @cached_property
    def load_options(self) -> LoadOptions:
        """How plugins are found: the options, zoo.toml's [plugins] and the environment."""
        cfg = self.config
        return LoadOptions.from_env(
            modules=self.options.plugins,
            model_files=self.options.model_files,
            strict=self.options.strict,
            config_only=cfg.plugins_enabled,
            config_disabled=cfg.plugins_disabled,
            config_modules=cfg.plugin_modules,
        )

    @property
    def registry(self) -> Registry:
        if self._registry is None:
            from zoo.registry.offline import no_network

            with no_network(self.offline):  # a plugin's import may try to download
                self._registry = Registry(stderr=self._stderr).load(self.load_options)
        return self._registry

    @property
    def offline(self) -> bool:
        return self.options.offline or self.config.offline

    @cached_property
    def targets(self) -> TargetTable:
        """Accelerators, ``portable`` and the boards: built-in, the plugins' and zoo.toml's."""
        return TargetTable.from_config(self.config, self.registry.boards)

    @property
    def plugins(self) -> list[PluginStatus]:
        return self.registry.plugins

    @property
    def cache_dir(self) -> Path:
        return cache_dir(self.config)

    def model(self, name: str) -> ModelSpec:
        return self.registry.catalog.get(name)

    def models(self, pattern: str | None = None) -> list[ModelSpec]:
        return self.registry.catalog.search(pattern)

    def target(
        self,
        name: str | None = None,
        *,
        system_config: str | None = None,
        memory_mode: str | None = None,
        sram_budget: int | None = None,
    ) -> Target:

        chosen = name or self.config.default_target
        if not chosen:
            raise UsageError("no target given: pass --target (e.g. --target u55-128) or set default_target in zoo.toml")
        try:
            return self.targets.resolve(chosen, system_config=system_config, memory_mode=memory_mode,
                                        sram_budget=sram_budget)
        except UsageError as exc:
            if name:
                raise
            raise type(exc)(f"{self.config.path}: key 'default_target': {exc} Fix default_target, "
                            "or pass --target") from None

    def target_names(self, names: str | None) -> list[str | None]:
        """``all`` (every Ethos-U accelerator), a comma-separated list, or one name (None: the default)."""
        from zoo.registry.npu.targets import ACCELERATORS

        if names is None:
            return [None]
        if names.strip().lower() == "all":
            return list(ACCELERATORS)
        out = [n.strip() for n in names.split(",") if n.strip()]
        if not out:
            raise UsageError(f"--target {names!r} names no target")
        return list(dict.fromkeys(out))

    @property
    def cache(self) -> Cache:
        from zoo.registry.store.cache import Cache

        return Cache(self.cache_dir)

    def remotes(self, urls: Sequence[str] | None = None, *, trusted_keys: Sequence[Path] = ()) -> list[Remote]:
        """The given remotes, else zoo.toml's ``remotes`` (relative paths from the config's folder). Each
        trusts zoo.toml's ``trusted_keys`` for its URL and ``trusted_keys``: with any, every artifact
        fetched from it must be signed by one of them."""
        from zoo.registry.remotes import canonical_url, parse_remote

        schemes = self.registry.remote_schemes
        base = self.config.path.parent if self.config.path else None
        # By canonical URL: trusted keys must not depend on how a remote is spelled (../r, ../r/, /abs/r, file://).
        configured: dict[str, tuple[Path, ...]] = {}
        for url, found in self.config.trusted_keys.items():
            canonical = canonical_url(url, base=base)
            configured[canonical] = (*configured.get(canonical, ()), *found)

        def keys(url: str, base: Path | None) -> tuple[Path, ...]:
            return (*configured.get(canonical_url(url, base=base), ()), *trusted_keys)

        if urls:
            return [parse_remote(u, schemes=schemes, trusted_keys=keys(u, None)) for u in urls]
        if self.config.default_remote and not self.offline:
            from zoo.registry.remotes.default import default_remote

            return [default_remote(trusted_keys)]
        return [parse_remote(u, base=base, schemes=schemes, trusted_keys=keys(u, base)) for u in self.config.remotes]

    def request(self, model: str, target: str | None = None, **choices: Unpack[BuildChoices]) -> BuildRequest:
        """Resolve names into a validated build request, before anything compiles. The keywords
        are the fields of ``Choices``, each None by default (``BuildChoices``)."""
        from zoo.registry.request.keys import BuildRequest

        chosen = choices_from(choices, "Zoo.request")
        spec = self.model(model)
        resolved = self.target(target, system_config=chosen.system_config, memory_mode=chosen.memory_mode,
                               sram_budget=chosen.sram_budget)
        calibration_dir, io = chosen.calibration_dir, chosen.io
        calibration = None
        if calibration_dir is not None:
            if spec.calibration_from_dir is None:
                raise UsageError(f"model {spec.name!r} does not take --calibration-dir")
            if not Path(calibration_dir).is_dir():
                raise UsageError(f"--calibration-dir {calibration_dir} is not a directory")
            calibration = spec.calibration_from_dir(Path(calibration_dir))
        # zoo.toml's default_io is for the NPU; the portable target only runs float.
        configured_io = None if io or resolved.is_portable else self.config.default_io
        try:
            return BuildRequest.create(spec, resolved, weights=chosen.weights, calibration=calibration,
                                       io=io or configured_io, layout=chosen.layout, precision=chosen.precision,
                                       recipe=chosen.recipe, qat=chosen.qat,
                                       weights_transform=chosen.weights_transform)
        except (SpecError, UsageError) as exc:
            if configured_io is None:
                raise UsageError(str(exc)) from None
            raise UsageError(f"{self.config.path}: key 'default_io' = {configured_io!r}: {exc}; fix default_io, "
                             "or pass --io") from None

    def fetch(
        self,
        model: str,
        target: str | None = None,
        options: FetchOptions | None = None,
        *,
        progress: Progress | None = None,
        notice: Notice | None = None,
        **changes: Unpack[FetchArgs],
    ) -> Artifact:
        """The cached artifact, else a prebuilt one from the remotes, else a fresh
        local build; verified before it is returned. See ``fetch_many``."""
        return self.fetch_many([model], [target], options, progress=progress, notice=notice, **changes)[0]

    def fetch_many(
        self,
        models: Sequence[str],
        targets: Sequence[str | None],
        options: FetchOptions | None = None,
        *,
        progress: Progress | None = None,
        progress_for: Callable[[str], Progress] | None = None,
        notice: Notice | None = None,
        **changes: Unpack[FetchArgs],
    ) -> list[Artifact]:
        """Every model for every target, in that order (``FetchOptions`` says how;
        keyword arguments change single fields of it). What must be compiled is
        compiled in build units, one per model and TOSA specification, by the
        executor ``options.executor`` names (``processes`` spreads them over
        ``options.jobs`` processes). With several artifacts, ``out_dir`` gets a
        folder per artifact.

        The structural checks always run. ``verify=True`` also needs the numerical
        check (run at build time; a cached artifact without it is lowered again);
        ``verify=False`` hands out an artifact that fails a check instead of raising
        VerificationError. ``progress_for(label)`` gives the progress callback of one
        build (``label`` names a model and its targets).

        A failed build raises BuildError; with ``keep_going`` only after every other
        build has run. ``fetch_outcomes`` returns the failures as data instead.
        """
        from zoo.registry.skipped import Skipped
        from zoo.registry.store.failures import Failure, first_error

        outcomes = self.fetch_outcomes(
            models, targets, options, progress=progress, progress_for=progress_for, notice=notice, **changes
        )
        failures = [o for o in outcomes if isinstance(o, Failure)]
        if failures:
            raise first_error(failures)
        return [o for o in outcomes if not isinstance(o, (Failure, Skipped))]

    def fetch_outcomes(
        self,
        models: Sequence[str],
        targets: Sequence[str | None],
        options: FetchOptions | None = None,
        *,
        progress: Progress | None = None,
        progress_for: Callable[[str], Progress] | None = None,
        notice: Notice | None = None,
        **changes: Unpack[FetchArgs],
    ) -> list[Artifact | Failure | Skipped]:
        """As ``fetch_many``, but a build that fails is returned as a ``Failure``
        (the stage, operator or pass, and the message) in its place, and with
        ``shard`` the requests another shard builds as ``Skipped``. With
        ``keep_going`` every other build still runs; without it the first failure
        is raised. A failure that would recur is recorded in the cache, so the
        next fetch reports it without compiling; ``force_build`` tries again."""
        from zoo._api.fetching import fetch_outcomes

        return fetch_outcomes(self, models, targets, _options(options, changes), progress=progress,
                              progress_for=progress_for, notice=notice)

    def verify(
        self,
        model: str,
        target: str | None = None,
        *,
        eval_dir: Path | None = None,
        numerics: bool = True,
        build: bool = True,
        progress: Progress | None = None,
        notice: Notice | None = None,
        **choices: Unpack[BuildChoices],
    ) -> Verification:
        """Check ``model`` for ``target``: the structure of the cached artifact and its
        recorded numerics. With ``numerics`` an artifact cached without them is lowered
        again to run them (same .pte bytes); a missing artifact is built unless ``build``
        is False. ``eval_dir`` runs the numerical check on those labelled class folders
        instead of the model's own data. Never raises for a failing check: the result
        says what failed."""
        from zoo.registry.resolve import Resolver
        from zoo.registry.verify.verification import verify_entry

        chosen = choices_from(choices, "Zoo.verify")
        if eval_dir is not None and not numerics:
            raise UsageError("--eval-dir measures accuracy with the numerical check; drop --structure-only")
        req = self.request(model, target, **choice_args(chosen))
        opts = FetchOptions(calibration_dir=chosen.calibration_dir, eval_dir=eval_dir, build=build,
                            verify=True if numerics else None)
        resolver = Resolver(self.cache, opts, plugins=self.load_options, catalog=self.registry.catalog,
                            progress=progress, notice=notice or stderr_notice)
        [(entry, _)] = resolver.resolve([req])
        checked = verify_entry(entry, target=req.target)
        if eval_dir is not None:  # the user's data, recorded apart from the artifact's own check
            checked.numerics = resolver.evaluated.get(entry.key)
            checked.numerics_by = "here" if checked.numerics else None
        return checked

    def publish(
        self,
        to: str | None = None,
        *,
        model: str | None = None,
        target: str | None = None,
        weights: str | None = None,
        system_config: str | None = None,
        memory_mode: str | None = None,
        sram_budget: int | None = None,
        everything: bool = False,
        sign_key: Path | None = None,
        release: str | None = None,
        notice: Notice | None = None,
    ) -> PublishReport:
        """Publish cached artifacts to a remote: one model for one target, or ``everything``.
        With ``sign_key`` (an elliptic-curve private key, PEM) each is signed, and its
        signature published beside it (``zoo.registry.remotes.signing``). With ``release`` (a version
        tag such as ``v0.1.0``) the publish to a Hub repository is then tagged, and refused
        before anything is uploaded if the tag exists: published releases are immutable."""
        from zoo._api.publishing import publish

        choices = Choices(weights=weights, system_config=system_config, memory_mode=memory_mode, sram_budget=sram_budget)
        return publish(self, to, model, target, choices, everything=everything, sign_key=sign_key, release=release,
                       notice=notice)

    def tune(self, model: str, target: str | None = None, *, weights: str | None = None, out: Path | None = None,
             max_layers: int = 8, max_drop: dict[str, float] | None = None, build: bool = True,
             transforms: Sequence[str] | None = None, notice: Notice | None = None) -> Tuning:
        """Find a quantization recipe for ``model`` on ``target`` (``zoo.registry.tune``), write it to
        ``out``, then build int8, the recipe and a16w8 with the numerical check and Vela's estimates,
        and the recipe (else int8) with each weight transform of ``transforms`` (None: every one the
        target benefits from; sparse24 fine-tuned where the model has training data). ``Tuning.fastest``
        is the fastest build within the goal. ``max_drop`` tightens (or loosens) the model's allowed
        drops by metric name."""
        from zoo._api.tuning import tune

        return tune(self, model, target, weights=weights, out=out, max_layers=max_layers, max_drop=max_drop,
                    build=build, transforms=transforms, say=notice)


def _options(options: FetchOptions | None, changes: FetchArgs) -> FetchOptions:
    opts = options or FetchOptions()
    if changes:
        unknown = set(changes) - set(FetchArgs.__annotations__)
        if unknown:
            raise TypeError(f"unknown fetch option(s): {', '.join(sorted(unknown))}")
        opts = dataclasses.replace(opts, **changes)
    if opts.remotes is not None and not isinstance(opts.remotes, tuple):
        opts = dataclasses.replace(opts, remotes=tuple(opts.remotes))
    return opts


def fetch(model: str, target: str | None = None, options: FetchOptions | None = None, **changes: Unpack[FetchArgs]) -> Artifact:
    """Fetch ``model`` for ``target``: from the cache, a remote, else built locally. See ``Zoo.fetch_many``."""
    return Zoo().fetch(model, target, options, **changes)


def build(model: str, target: str | None = None, options: FetchOptions | None = None, **changes: Unpack[FetchArgs]) -> Artifact:
    """Build ``model`` for ``target`` locally, replacing any cached artifact."""
    changes["force_build"] = True
    return Zoo().fetch(model, target, options, **changes)
