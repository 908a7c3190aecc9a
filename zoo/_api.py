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
    from zoo.registry.cache import Cache
    from zoo.registry.fetcher import Artifact, Notice, Progress
    from zoo.registry.keys import BuildRequest


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

    def target(self, name: str | None = None, *, system_config: str | None = None, memory_mode: str | None = None) -> Target:
        from zoo._errors import UsageError

        chosen = name or self.config.default_target
        if not chosen:
            raise UsageError("no target given: pass --target (e.g. --target u55-128) or set default_target in zoo.toml")
        return self.targets.resolve(chosen, system_config=system_config, memory_mode=memory_mode)

    @property
    def cache(self) -> Cache:
        from zoo.registry.cache import Cache

        return Cache(self.cache_dir)

    def request(
        self,
        model: str,
        target: str | None = None,
        *,
        weights: str | None = None,
        calibration_dir: Path | None = None,
        system_config: str | None = None,
        memory_mode: str | None = None,
    ) -> BuildRequest:
        """Resolve names into a validated build request, before anything compiles."""
        from zoo._errors import UsageError
        from zoo.registry.keys import BuildRequest

        spec = self.model(model)
        resolved = self.target(target, system_config=system_config, memory_mode=memory_mode)
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

    def fetch(
        self,
        model: str,
        target: str | None = None,
        *,
        weights: str | None = None,
        calibration_dir: Path | None = None,
        system_config: str | None = None,
        memory_mode: str | None = None,
        out_dir: Path | None = None,
        header_array: str = "model_pte",
        header_section: str = "network_model_sec",
        labels_header: bool = False,
        build: bool = True,
        force_build: bool = False,
        progress: Progress | None = None,
        notice: Notice | None = None,
    ) -> Artifact:
        """The cached artifact, or a fresh local build; verified before it is returned."""
        from zoo._errors import UsageError
        from zoo.registry.c_header import HeaderOptions
        from zoo.registry.fetcher import export, resolve

        try:
            header = HeaderOptions(header_array, header_section)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        req = self.request(
            model, target, weights=weights, calibration_dir=calibration_dir,
            system_config=system_config, memory_mode=memory_mode,
        )
        cache = self.cache
        entry, source = resolve(req, cache, force_build=force_build, allow_build=build, progress=progress, notice=notice)
        return export(entry, source, out_dir=out_dir, header=header, derived_root=cache.base / "derived", want_labels=labels_header)


def fetch(model: str, target: str | None = None, **kwargs: Any) -> Artifact:
    """Fetch ``model`` for ``target``: from the cache, else built locally. See ``Zoo.fetch``."""
    return Zoo().fetch(model, target, **kwargs)


def build(model: str, target: str | None = None, **kwargs: Any) -> Artifact:
    """Build ``model`` for ``target`` locally, replacing any cached artifact."""
    return Zoo().fetch(model, target, force_build=True, **kwargs)
