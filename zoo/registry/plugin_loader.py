"""Find plugins, call their hooks one at a time, and keep a bad one from
taking the rest down.

Sources, in order: the ``zoo`` entry-point group (built-ins included),
modules named with ``--plugin`` / ``ZOO_PLUGINS`` / zoo.toml, and
aot_arm_compiler-style model files (``--model-file``).
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path
from typing import Any, Literal, TextIO

import pluggy

from zoo import _hookspecs
from zoo._errors import PluginError, SpecError
from zoo._spec import ModelSpec
from zoo.registry.catalog import Catalog

BUILTIN_DIST = "ethosu-zoo"

Kind = Literal["entry point", "module", "model file", "registered"]
Status = Literal["ok", "error", "disabled"]


@dataclass
class PluginStatus:
    name: str
    kind: Kind
    dist: str | None = None
    version: str | None = None
    status: Status = "ok"
    models: list[str] = field(default_factory=list)
    error: str | None = None

    @property
    def label(self) -> str:
        where = f" ({self.dist} {self.version})" if self.dist else ""
        return f"plugin {self.name!r}{where}"

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class LoadOptions:
    """How to find plugins. ``only`` is ZOO_LOAD_PLUGINS: the external
    plugins to load (None: all; empty: none). Built-ins always load unless
    listed in ``disabled``."""

    modules: tuple[str, ...] = ()
    model_files: tuple[Path, ...] = ()
    only: tuple[str, ...] | None = None
    disabled: tuple[str, ...] = ()
    strict: bool = False
    entry_points: bool = True

    @classmethod
    def from_env(
        cls,
        *,
        modules: tuple[str, ...] = (),
        model_files: tuple[Path, ...] = (),
        strict: bool = False,
        config_only: tuple[str, ...] | None = None,
        config_disabled: tuple[str, ...] = (),
        config_modules: tuple[str, ...] = (),
    ) -> LoadOptions:
        env = os.environ
        only = config_only
        if "ZOO_LOAD_PLUGINS" in env:
            only = _split(env["ZOO_LOAD_PLUGINS"])
        env_modules = _split(env.get("ZOO_PLUGINS", ""))
        strict = strict or env.get("ZOO_STRICT_PLUGINS", "").strip().lower() in ("1", "true", "yes", "on")
        return cls(
            modules=(*config_modules, *env_modules, *modules),
            model_files=model_files,
            only=only,
            disabled=config_disabled,
            strict=strict,
        )


def _split(value: str) -> tuple[str, ...]:
    return tuple(p.strip() for p in value.split(",") if p.strip())


def _error_text(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    first = text[0] if text else ""
    return f"{type(exc).__name__}: {first}" if first else type(exc).__name__


class Registry:
    """A plugin manager plus the catalog its plugins filled."""

    def __init__(self, *, strict: bool = False, stderr: TextIO | None = None) -> None:
        self.pm = pluggy.PluginManager(_hookspecs.PROJECT)
        self.pm.add_hookspecs(_hookspecs)
        self.catalog = Catalog()
        self.plugins: list[PluginStatus] = []
        self.strict = strict
        self._stderr = stderr

    # -- loading -----------------------------------------------------------

    def load(self, options: LoadOptions) -> Registry:
        self.strict = options.strict
        if options.entry_points:
            for ep in sorted(entry_points(group=_hookspecs.ENTRY_POINT_GROUP), key=_ep_order):
                self._load_entry_point(ep, options)
        for module in options.modules:
            self._load_module(module)
        for path in options.model_files:
            self._load_model_file(path)
        return self

    def _load_entry_point(self, ep: EntryPoint, options: LoadOptions) -> None:
        dist = ep.dist.name if ep.dist else None
        version = ep.dist.version if ep.dist else None
        status = PluginStatus(ep.name, "entry point", dist, version)
        builtin = dist == BUILTIN_DIST
        wanted = builtin or options.only is None or ep.name in options.only or dist in options.only
        if not wanted or ep.name in options.disabled or (dist is not None and dist in options.disabled):
            status.status = "disabled"
            self.plugins.append(status)
            return
        self._guarded(status, ep.load)

    def _load_module(self, module: str) -> None:
        status = PluginStatus(module, "module")
        self._guarded(status, lambda: importlib.import_module(module))

    def _load_model_file(self, path: Path) -> None:
        from zoo.registry.model_file import spec_from_model_file

        status = PluginStatus(str(path), "model file")

        def load() -> object:
            spec = spec_from_model_file(path)

            class _ModelFilePlugin:
                @_hookspecs.hookimpl
                def register_models(self, register: Callable[[ModelSpec], None]) -> None:
                    register(spec)

            return _ModelFilePlugin()

        self._guarded(status, load)

    def add_plugin(self, plugin: object, name: str) -> PluginStatus:
        """Register a plugin object directly (tests, embedding applications)."""
        status = PluginStatus(name, "registered")
        self._guarded(status, lambda: plugin)
        return status

    # -- isolation ---------------------------------------------------------

    def _guarded(self, status: PluginStatus, load: Callable[[], object]) -> None:
        self.plugins.append(status)
        try:
            plugin = load()
        except Exception as exc:
            self._fail(status, f"failed to import: {_error_text(exc)}", exc)
            return
        try:
            self.pm.register(plugin, name=status.name)
        except (pluggy.PluginValidationError, ValueError) as exc:
            self._fail(status, f"invalid hook implementation: {_error_text(exc)}", exc)
            return
        staged: list[ModelSpec] = []
        try:
            self._call_register_models(plugin, staged.append)
            self._admit(status, staged)
        except Exception as exc:
            self.pm.unregister(plugin)
            self._fail(status, str(exc) if isinstance(exc, SpecError) else f"hook register_models raised {_error_text(exc)}", exc)

    def _call_register_models(self, plugin: object, register: Callable[[ModelSpec], None]) -> None:
        for impl in self.pm.hook.register_models.get_hookimpls():
            if impl.plugin is plugin:
                kwargs = {"register": register}
                impl.function(**{k: kwargs[k] for k in impl.argnames})

    def _admit(self, status: PluginStatus, specs: list[ModelSpec]) -> None:
        """All of a plugin's models go in, or none do."""
        seen: set[str] = set()
        for spec in specs:
            if not isinstance(spec, ModelSpec):
                raise SpecError(f"register() takes a zoo.ModelSpec, got {type(spec).__name__}")
            spec.validate()
            taken = self.catalog.claims(spec) + [n for n in (spec.name, *spec.aliases) if n in seen]
            if taken:
                owner = self.catalog.get(taken[0]).source if taken[0] in self.catalog else status.name
                raise SpecError(f"model name {taken[0]!r} is already registered by plugin {owner!r}")
            seen.update((spec.name, *spec.aliases))
        for spec in specs:
            object.__setattr__(spec, "source", status.name)
            self.catalog.add(spec)
            status.models.append(spec.name)

    def _fail(self, status: PluginStatus, message: str, exc: BaseException) -> None:
        status.status = "error"
        status.error = message
        if self.strict:
            raise PluginError(status.name, f"{status.dist} {status.version}" if status.dist else None, message) from exc
        stream = self._stderr or sys.stderr
        print(f"zoo: skipped {status.label}: {message}", file=stream)


def _ep_order(ep: EntryPoint) -> tuple[int, str]:
    # Built-ins first, so a third party cannot take over their names.
    return (0 if ep.dist and ep.dist.name == BUILTIN_DIST else 1, ep.name)
