"""Find plugins, call their hooks one at a time, and keep a bad one from
taking the rest down.

Sources, in order: the ``zoo`` entry-point group (built-ins included),
modules named with ``--plugin`` / ``ZOO_PLUGINS`` / zoo.toml, and
aot_arm_compiler-style model files (``--model-file``).

Each plugin's hooks (``register_models``, ``register_boards``,
``register_remotes``) are called in turn and what they register is checked
as a whole: all of a plugin goes in, or none of it.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import re
import sys
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TextIO

import pluggy

from zoo import _hookspecs, _interrupt
from zoo._board import Board
from zoo._env import flag
from zoo._errors import PluginError, SpecError, UsageError
from zoo._spec import ModelSpec
from zoo._text import printable
from zoo.registry.catalog import plugin_cost
from zoo.registry.catalog.catalog import Catalog
from zoo.registry.catalog.plugin_faults import (
    checked_factory,
    debug_traceback,
    error_text,
    why_empty,
)
from zoo.registry.dists import name_version
from zoo.registry.npu.targets import BUILTIN_BOARDS, TargetTable

if TYPE_CHECKING:
    from zoo.registry.remotes import RemoteFactory

BUILTIN_DIST = "ethosu-zoo"

Kind = Literal["entry point", "module", "model file", "registered"]
Status = Literal["ok", "error", "disabled", "empty"]
"""``empty``: loaded without error, registered nothing (a missing @hookimpl, a misspelt hook)."""


@dataclass
class PluginStatus:
    name: str
    kind: Kind
    dist: str | None = None
    version: str | None = None
    status: Status = "ok"
    models: list[str] = field(default_factory=list)
    boards: list[str] = field(default_factory=list)
    remotes: list[str] = field(default_factory=list)
    """The URL schemes this plugin added."""
    error: str | None = None
    seconds: float | None = None
    """Import and registration time."""
    heavy: list[str] = field(default_factory=list)
    """Heavy libraries (plugin_cost.HEAVY) that loading it imported."""

    @property
    def distribution(self) -> str | None:
        """``NAME VERSION`` of the distribution that installed the plugin, if any."""
        return f"{self.dist} {self.version}" if self.dist else None

    @property
    def label(self) -> str:
        where = f" ({self.distribution})" if self.dist else ""
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
    only_from: str = "ZOO_LOAD_PLUGINS"
    """Where ``only`` came from, to name in a warning."""

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
        only, only_from = config_only, "zoo.toml's plugins.enabled"
        if "ZOO_LOAD_PLUGINS" in env:
            only, only_from = _split(env["ZOO_LOAD_PLUGINS"]), "ZOO_LOAD_PLUGINS"
        env_modules = _split(env.get("ZOO_PLUGINS", ""))
        strict = strict or bool(flag("ZOO_STRICT_PLUGINS"))
        return cls(
            modules=(*config_modules, *env_modules, *modules),
            model_files=model_files,
            only=only,
            only_from=only_from,
            disabled=config_disabled,
            strict=strict,
        )


def _split(value: str) -> tuple[str, ...]:
    return tuple(p.strip() for p in value.split(",") if p.strip())


_HOOKS = ("register_models", "register_boards", "register_remotes")
_SCHEME = re.compile(r"^[a-z][a-z0-9+.-]*\Z")


@dataclass
class _Staged:
    """What one plugin's hooks registered, before it is checked."""

    models: list[Any] = field(default_factory=list)
    boards: list[Any] = field(default_factory=list)
    remotes: list[tuple[Any, Any]] = field(default_factory=list)

    def register(self, hook: str) -> Callable[..., None]:
        if hook == "register_remotes":
            return lambda scheme, factory: self.remotes.append((scheme, factory))
        return self.models.append if hook == "register_models" else self.boards.append


class _HookRaised(Exception):
    def __init__(self, hook: str) -> None:
        super().__init__(hook)
        self.hook = hook


class Registry:
    """A plugin manager plus what its plugins registered: the catalog of
    models, ``boards`` and ``remote_schemes``."""

    def __init__(self, *, strict: bool = False, stderr: TextIO | None = None) -> None:
        self.pm = pluggy.PluginManager(_hookspecs.PROJECT)
        self.pm.add_hookspecs(_hookspecs)
        self.catalog = Catalog()
        self.boards: list[Board] = []
        """The plugins' boards; ``PluginStatus.boards`` says which plugin gave each."""
        self.remote_schemes: dict[str, RemoteFactory] = {}
        """The plugins' URL schemes, for ``parse_remote(..., schemes=...)``."""
        self.plugins: list[PluginStatus] = []
        self.strict = strict
        self._stderr = stderr

    # -- loading -----------------------------------------------------------

    def load(self, options: LoadOptions) -> Registry:
        self.strict = options.strict
        if options.entry_points:
            found = sorted(entry_points(group=_hookspecs.ENTRY_POINT_GROUP), key=_ep_order)
            for ep in found:
                self._load_entry_point(ep, options)
            self._check_only(options, found)
        for module in options.modules:
            self._load_module(module)
        for path in options.model_files:
            self._load_model_file(path)
        return self

    def _load_entry_point(self, ep: EntryPoint, options: LoadOptions) -> None:
        dist, version = name_version(ep.dist) if ep.dist else (None, None)
        status = PluginStatus(ep.name, "entry point", dist, version)
        builtin = dist == BUILTIN_DIST
        wanted = builtin or options.only is None or ep.name in options.only or dist in options.only
        if not wanted or ep.name in options.disabled or (dist is not None and dist in options.disabled):
            status.status = "disabled"
            self.plugins.append(status)
            return
        self._guarded(status, ep.load)

    def _check_only(self, options: LoadOptions, found: list[EntryPoint]) -> None:
        """A name in ZOO_LOAD_PLUGINS that matches no plugin is a typo that would pass silently."""
        names = {ep.name for ep in found} | {name_version(ep.dist)[0] for ep in found if ep.dist}
        unknown = [n for n in options.only or () if n not in names]
        if not unknown:
            return
        external = sorted({ep.name for ep in found if not (ep.dist and name_version(ep.dist)[0] == BUILTIN_DIST)})
        message = (f"{options.only_from} names {', '.join(repr(n) for n in unknown)}, which "
                   f"match{'es' if len(unknown) == 1 else ''} no installed plugin (installed: "
                   f"{', '.join(external) or 'none besides the built-ins'}); fix the name, or install the plugin")
        if self.strict:
            raise UsageError(message)
        print(f"zoo: warning: {printable(message)}", file=self._stderr or sys.stderr)

    def _load_module(self, module: str) -> None:
        status = PluginStatus(module, "module")
        self._guarded(status, lambda: importlib.import_module(module))

    def _load_model_file(self, path: Path) -> None:
        from zoo.registry.model_files.py_file import spec_from_model_file

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
        # What a plugin prints must not reach stdout, which carries paths and JSON.
        with contextlib.redirect_stdout(sys.stderr), plugin_cost.measured(status, self._stderr or sys.stderr):
            self._guarded_quietly(status, load)

    def _guarded_quietly(self, status: PluginStatus, load: Callable[[], object]) -> None:
        _interrupt.check()  # one that the last plugin's imports swallowed: load no further
        self.plugins.append(status)
        try:
            plugin = load()
        except (Exception, SystemExit) as exc:  # sys.exit() in a plugin is its failure, not zoo's exit
            self._fail(status, f"failed to import: {error_text(exc)}", exc)
            return
        _interrupt.check()
        if self.pm.is_registered(plugin):  # -p names a module an installed plugin already loaded
            first = next((p for p in self.plugins if p.name == self.pm.get_name(plugin)), None)
            status.status = "disabled"
            status.error = (f"already loaded as {first.label if first else repr(self.pm.get_name(plugin))}; "
                            "its models are registered once: drop it from -p/ZOO_PLUGINS, or uninstall the installed copy")
            print(printable(f"zoo: warning: {status.label}: {status.error}"), file=self._stderr or sys.stderr)
            return
        try:
            self.pm.register(plugin, name=status.name)
        except (pluggy.PluginValidationError, ValueError) as exc:
            self._fail(status, f"invalid hook implementation: {error_text(exc)}", exc)
            return
        staged = _Staged()
        hook = _HOOKS[0]
        try:
            for hook in _HOOKS:
                self._call(hook, plugin, staged.register(hook))
            for hook in _HOOKS:
                self._check(hook, status, staged)
        except _HookRaised as exc:
            self.pm.unregister(plugin)
            cause = exc.__cause__ or exc
            self._fail(status, f"hook {exc.hook} raised {error_text(cause)}", cause)
            return
        except Exception as exc:
            self.pm.unregister(plugin)
            text = str(exc) if isinstance(exc, SpecError) else error_text(exc)
            self._fail(status, f"hook {hook}: {text}", exc)
            return
        _interrupt.check()
        if not (staged.models or staged.boards or staged.remotes):
            self._registered_nothing(status, plugin)
            return
        self._admit(status, staged)

    def _registered_nothing(self, status: PluginStatus, plugin: object) -> None:
        implemented = any(impl.plugin is plugin for h in _HOOKS for impl in getattr(self.pm.hook, h).get_hookimpls())
        self.pm.unregister(plugin)
        message = f"registered nothing: {why_empty(plugin, _HOOKS, implemented)}"
        if self.strict:
            self._fail(status, message, PluginError(status.name, status.distribution, message))
            return
        status.status = "empty"
        status.error = message
        print(printable(f"zoo: warning: {status.label} {message}"), file=self._stderr or sys.stderr)

    def _call(self, hook: str, plugin: object, register: Callable[..., None]) -> None:
        for impl in getattr(self.pm.hook, hook).get_hookimpls():
            if impl.plugin is plugin:
                kwargs = {"register": register}
                try:
                    impl.function(**{k: kwargs[k] for k in impl.argnames})
                except (Exception, SystemExit) as exc:
                    raise _HookRaised(hook) from exc

    def _check(self, hook: str, status: PluginStatus, staged: _Staged) -> None:
        """Raise SpecError for the first thing ``hook`` registered that cannot go in."""
        if hook == "register_models":
            self._check_models(status, staged.models)
        elif hook == "register_boards":
            self._check_boards(status, staged.boards)
        else:
            self._check_remotes(status, staged.remotes)

    def _check_models(self, status: PluginStatus, specs: list[Any]) -> None:
        seen: set[str] = set()
        for spec in specs:
            if not isinstance(spec, ModelSpec):
                raise SpecError(f"register() takes a zoo.ModelSpec, got {type(spec).__name__}")
            spec.validate()
            taken = self.catalog.claims(spec) + [n for n in (spec.name, *spec.aliases) if n in seen]
            if taken:
                holder = self.catalog.get(taken[0]) if taken[0] in self.catalog else None
                owner = holder.source if holder else status.name
                kind = "name" if taken[0] == spec.name else "alias"
                held = f" (model {holder.name!r})" if holder and holder.name != taken[0] else ""
                raise SpecError(
                    f"model {spec.name!r}: its {kind} {taken[0]!r} is already registered by plugin {owner!r}{held}; "
                    f"rename it{' or drop the alias' if kind == 'alias' else ''} (a plugin goes in whole or not at all)"
                )
            seen.update((spec.name, *spec.aliases))

    def _check_boards(self, status: PluginStatus, boards: list[Any]) -> None:
        builtin = {b.name for b in BUILTIN_BOARDS}
        seen: set[str] = set()
        for board in boards:
            if not isinstance(board, Board):
                raise SpecError(f"register() takes a zoo.Board, got {type(board).__name__}")
            board.validate()
            if board.name in builtin:
                raise SpecError(f"board name {board.name!r} is a built-in board; rename the board")
            owner = status.name if board.name in seen else self._owner("boards", board.name)
            if owner is not None:
                raise SpecError(f"board name {board.name!r} is already registered by plugin {owner!r}")
            try:
                table = TargetTable([board])
            except UsageError as exc:
                raise SpecError(str(exc)) from None
            try:
                table.resolve(board.name)
            except UsageError as exc:
                raise SpecError(f"board {board.name!r}: {exc}") from None
            seen.add(board.name)

    def _check_remotes(self, status: PluginStatus, remotes: list[tuple[Any, Any]]) -> None:
        from zoo.registry.remotes import BUILTIN_SCHEMES

        seen: set[str] = set()
        for scheme, factory in remotes:
            if not isinstance(scheme, str) or not _SCHEME.match(scheme):
                raise SpecError(
                    f"remote scheme {scheme!r} must be lower-case letters, digits, '+', '-' or '.', "
                    "starting with a letter (e.g. 'mem' for mem://…)"
                )
            if not callable(factory):
                raise SpecError(f"the factory for remote scheme {scheme!r} is not callable")
            if scheme in BUILTIN_SCHEMES:
                raise SpecError(f"remote scheme {scheme!r} is built in; register a scheme of your own")
            owner = status.name if scheme in seen else self._owner("remotes", scheme)
            if owner is not None:
                raise SpecError(f"remote scheme {scheme!r} is already registered by plugin {owner!r}")
            seen.add(scheme)

    def _owner(self, kind: Literal["boards", "remotes"], name: str) -> str | None:
        return next((p.name for p in self.plugins if name in getattr(p, kind)), None)

    def _admit(self, status: PluginStatus, staged: _Staged) -> None:
        """Called once every check passed: all of a plugin goes in together."""
        for spec in staged.models:
            object.__setattr__(spec, "source", status.name)
            if status.dist not in (None, BUILTIN_DIST):  # zoo's own code is covered by PIPELINE_VERSION
                object.__setattr__(spec, "distribution", status.distribution or "")
            self.catalog.add(spec)
            status.models.append(spec.name)
        for board in staged.boards:
            self.boards.append(board)
            status.boards.append(board.name)
        for scheme, factory in staged.remotes:
            self.remote_schemes[scheme] = checked_factory(status.name, status.distribution, scheme, factory)
            status.remotes.append(scheme)

    def _fail(self, status: PluginStatus, message: str, exc: BaseException) -> None:
        # A Ctrl-C that an import turned into this error (numpy's "CPU dispatcher tracer already
        # initlized" while torch loads) is no failure of the plugin's: zoo stops.
        _interrupt.check(exc)
        status.status = "error"
        status.error = message
        stream = self._stderr or sys.stderr
        debug_traceback(status.label, exc, stream)
        if self.strict:
            raise PluginError(status.name, status.distribution, message) from exc
        print(printable(f"zoo: skipped {status.label}: {message}"), file=stream)


def _ep_order(ep: EntryPoint) -> tuple[int, str]:
    # Built-ins first, so a third party cannot take over their names.
    return (0 if ep.dist and name_version(ep.dist)[0] == BUILTIN_DIST else 1, ep.name)
