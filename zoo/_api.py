"""The public Python API: one ``Zoo`` ties config, plugins and targets together."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from zoo._config import Config, cache_dir, load_config
from zoo._errors import SpecError
from zoo._spec import ModelSpec
from zoo.registry.plugin_loader import LoadOptions, PluginStatus, Registry
from zoo.registry.targets import Target, TargetTable

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from zoo.registry.cache import Cache, Entry
    from zoo.registry.fetcher import Artifact, Notice, Progress, Source
    from zoo.registry.keys import BuildRequest
    from zoo.registry.remotes import Remote
    from zoo.registry.remotes.base import PublishReport
    from zoo.registry.verification import Verification


@dataclass
class ZooOptions:
    plugins: tuple[str, ...] = ()
    model_files: tuple[Path, ...] = ()
    strict: bool = False
    config_path: Path | None = None


class Zoo:
    """Loads config and plugins once; everything else asks it."""

    def __init__(self, options: ZooOptions | None = None, *, registry: Registry | None = None, stderr: TextIO | None = None) -> None:
        self.options = options or ZooOptions()
        self._registry = registry
        self._stderr = stderr

    @cached_property
    def config(self) -> Config:
        return load_config(self.options.config_path)

    @property
    def registry(self) -> Registry:
        if self._registry is None:
            cfg = self.config
            load = LoadOptions.from_env(
                modules=self.options.plugins,
                model_files=self.options.model_files,
                strict=self.options.strict,
                config_only=cfg.plugins_enabled,
                config_disabled=cfg.plugins_disabled,
                config_modules=cfg.plugin_modules,
            )
            self._registry = Registry(stderr=self._stderr).load(load)
        return self._registry

    @cached_property
    def targets(self) -> TargetTable:
        return TargetTable.from_config(self.config)

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
        from zoo._errors import UsageError

        chosen = name or self.config.default_target
        if not chosen:
            raise UsageError("no target given: pass --target (e.g. --target u55-128) or set default_target in zoo.toml")
        return self.targets.resolve(chosen, system_config=system_config, memory_mode=memory_mode, sram_budget=sram_budget)

    def target_names(self, names: str | None) -> list[str | None]:
        """``all`` (every Ethos-U accelerator), a comma-separated list, or one name (None: the default)."""
        from zoo._errors import UsageError
        from zoo.registry.targets import ACCELERATORS

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
        from zoo.registry.cache import Cache

        return Cache(self.cache_dir)

    def remotes(self, urls: Sequence[str] | None = None) -> list[Remote]:
        """The given remotes, else zoo.toml's ``remotes`` (relative paths from the config's folder)."""
        from zoo.registry.remotes import parse_remote

        if urls:
            return [parse_remote(u) for u in urls]
        base = self.config.path.parent if self.config.path else None
        return [parse_remote(u, base=base) for u in self.config.remotes]

    def request(
        self,
        model: str,
        target: str | None = None,
        *,
        weights: str | None = None,
        calibration_dir: Path | None = None,
        system_config: str | None = None,
        memory_mode: str | None = None,
        sram_budget: int | None = None,
    ) -> BuildRequest:
        """Resolve names into a validated build request, before anything compiles."""
        from zoo._errors import UsageError
        from zoo.registry.keys import BuildRequest

        spec = self.model(model)
        resolved = self.target(target, system_config=system_config, memory_mode=memory_mode, sram_budget=sram_budget)
        calibration = None
        if calibration_dir is not None:
            if spec.calibration_from_dir is None:
                raise UsageError(f"model {spec.name!r} does not take --calibration-dir")
            if not Path(calibration_dir).is_dir():
                raise UsageError(f"--calibration-dir {calibration_dir} is not a directory")
            calibration = spec.calibration_from_dir(Path(calibration_dir))
        try:
            return BuildRequest.create(spec, resolved, weights=weights, calibration=calibration)
        except SpecError as exc:
            raise UsageError(str(exc)) from None

    def fetch(self, model: str, target: str | None = None, **options: Any) -> Artifact:
        """The cached artifact, else a prebuilt one from the remotes, else a fresh
        local build; verified before it is returned. Options as for ``fetch_many``."""
        return self.fetch_many([model], [target], **options)[0]

    def fetch_many(
        self,
        models: Sequence[str],
        targets: Sequence[str | None],
        *,
        weights: str | None = None,
        calibration_dir: Path | None = None,
        system_config: str | None = None,
        memory_mode: str | None = None,
        sram_budget: int | None = None,
        out_dir: Path | None = None,
        header_array: str = "model_pte",
        header_section: str = "network_model_sec",
        labels_header: bool = False,
        build: bool = True,
        force_build: bool = False,
        progress: Progress | None = None,
        notice: Notice | None = None,
        verify: bool | None = None,
        bundle: bool = False,
        remotes: Sequence[str] | None = None,
        any_toolchain: bool = False,
        offline: bool | None = None,
        jobs: int = 1,
        progress_for: Callable[[str], Progress] | None = None,
    ) -> list[Artifact]:
        """Every model for every target, in that order. What must be compiled is
        compiled once per model and TOSA specification (``pipeline.compile_targets``);
        ``jobs`` > 1 spreads that over processes. With several artifacts, ``out_dir``
        gets a folder per artifact.

        ``remotes`` replaces zoo.toml's; ``offline`` (default: config / ZOO_OFFLINE)
        skips remotes that need the network. ``sram_budget`` (bytes; default: a
        board's SRAM) picks the fastest Vela options that fit. The structural
        checks always run. ``verify=True`` also needs the numerical check (run at
        build time; a cached artifact without it is lowered again); ``verify=False``
        hands out an artifact that fails a check instead of raising VerificationError.
        ``bundle`` adds the .bpte self-test (and its header). ``progress_for(label)``
        gives the progress callback of one build (``label`` names model and targets).
        """
        from zoo._errors import UsageError
        from zoo.registry.c_header import HeaderOptions
        from zoo.registry.fetcher import export, resolve_many

        if jobs < 1:
            raise UsageError(f"--jobs must be at least 1, got {jobs}")
        try:
            header = HeaderOptions(header_array, header_section)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        requests = [
            self.request(m, t, weights=weights, calibration_dir=calibration_dir, system_config=system_config,
                         memory_mode=memory_mode, sram_budget=sram_budget)
            for m in models for t in targets
        ]
        cache = self.cache
        built: set[str] = set()
        if jobs > 1 and build:
            from zoo.registry.parallel import build_in_processes, tasks_for

            tasks = tasks_for(requests)
            if len(tasks) > 1:
                built = build_in_processes(self.options, tasks, {
                    "weights": weights, "calibration_dir": calibration_dir, "system_config": system_config,
                    "memory_mode": memory_mode, "sram_budget": sram_budget, "force_build": force_build,
                    "verify": verify, "bundle": bundle, "remotes": remotes, "any_toolchain": any_toolchain,
                    "offline": offline,
                }, jobs=jobs, progress_for=progress_for)
                force_build = False  # built above: what follows only reads the cache
        lookup: dict[str, Any] = {
            "allow_build": build, "notice": notice, "verify": verify, "bundle": bundle,
            "remotes": [] if force_build else self.remotes(remotes), "any_toolchain": any_toolchain,
            "offline": self.config.offline if offline is None else offline,
        }
        found: list[tuple[Entry, Source]] = []
        for group in _by_model(requests):
            label = f"{group[0].spec.name} → {', '.join(r.target.name for r in group)}"
            report = progress_for(label) if progress_for else progress
            found += resolve_many(group, cache, force_build=force_build, progress=report, **lookup)
        several = len(requests) > 1
        return [
            export(entry, "build" if entry.key in built else source, out_dir=out_dir / r.stem if several and out_dir else out_dir, header=header,
                   derived_root=cache.base / "derived", want_labels=labels_header, verify=verify, want_bundle=bundle)
            for r, (entry, source) in zip(requests, found, strict=True)
        ]

    def verify(
        self,
        model: str,
        target: str | None = None,
        *,
        weights: str | None = None,
        calibration_dir: Path | None = None,
        system_config: str | None = None,
        memory_mode: str | None = None,
        sram_budget: int | None = None,
        numerics: bool = True,
        build: bool = True,
        progress: Progress | None = None,
        notice: Notice | None = None,
    ) -> Verification:
        """Check ``model`` for ``target``: the structure of the cached artifact and its
        recorded numerics. With ``numerics`` an artifact cached without them is lowered
        again to run them (same .pte bytes); a missing artifact is built unless ``build``
        is False. Never raises for a failing check: the result says what failed."""
        from zoo.registry.fetcher import resolve_many
        from zoo.registry.verification import verify_entry

        req = self.request(
            model, target, weights=weights, calibration_dir=calibration_dir,
            system_config=system_config, memory_mode=memory_mode, sram_budget=sram_budget,
        )
        [(entry, _)] = resolve_many([req], self.cache, allow_build=build, progress=progress, notice=notice,
                                    verify=True if numerics else None)
        return verify_entry(entry)

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
        notice: Notice | None = None,
    ) -> PublishReport:
        """Publish cached artifacts to a remote: one model for one target, or ``everything``."""
        import sys

        from zoo._errors import UsageError
        from zoo.registry.cache import CorruptEntry
        from zoo.registry.remotes import parse_remote

        say = notice or (lambda msg: print(f"zoo: {msg}", file=sys.stderr))
        if to:
            remote = parse_remote(to)
        elif self.config.remotes:
            remote = self.remotes()[0]
        else:
            raise UsageError("say where to publish: --to REMOTE (hf://ORG/REPO, a directory), or set remotes in zoo.toml")
        if not remote.writable:
            raise UsageError(f"{remote} is a read-only {remote.kind} remote; publish to the directory it serves instead")
        if remote.network and self.config.offline:
            raise UsageError(f"offline mode is on (offline in zoo.toml or ZOO_OFFLINE): cannot publish to {remote}")
        cache = self.cache
        if everything:
            if model:
                raise UsageError("give a MODEL or --all, not both")
            entries = []
            for key, entry, problem in cache.scan(verify=True):
                if entry is None:
                    say(f"skipping cache entry {key[:12]}: {problem} (run 'zoo cache prune --corrupt')")
                else:
                    entries.append(entry)
            if not entries:
                raise UsageError("the cache is empty: nothing to publish")
        else:
            if not model:
                raise UsageError("give a MODEL to publish (see 'zoo cache ls'), or --all")
            req = self.request(model, target, weights=weights, system_config=system_config, memory_mode=memory_mode,
                               sram_budget=sram_budget)
            try:
                found = cache.get(req.key())
            except CorruptEntry as exc:
                raise UsageError(f"{exc}: run 'zoo build {req.spec.name} -t {req.target.name}' and publish again") from None
            if found is None:
                raise UsageError(
                    f"{req.spec.name} for {req.target.name} is not in the cache (with this install's tool versions); "
                    f"run 'zoo build {req.spec.name} -t {req.target.name}' first"
                )
            entries = [found]
        return remote.publish(entries, say=say)


def _by_model(requests: Sequence[BuildRequest]) -> list[list[BuildRequest]]:
    """The requests grouped by model, keeping their order."""
    groups: dict[str, list[BuildRequest]] = {}
    for r in requests:
        groups.setdefault(r.spec.name, []).append(r)
    return list(groups.values())


def fetch(model: str, target: str | None = None, **kwargs: Any) -> Artifact:
    """Fetch ``model`` for ``target``: from the cache, else built locally. See ``Zoo.fetch``."""
    return Zoo().fetch(model, target, **kwargs)


def build(model: str, target: str | None = None, **kwargs: Any) -> Artifact:
    """Build ``model`` for ``target`` locally, replacing any cached artifact."""
    return Zoo().fetch(model, target, force_build=True, **kwargs)
