"""zoo.toml: found in the working directory or its parents, else in the user
config directory. Environment variables override it."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any, get_args

from zoo._board import Board
from zoo._env import flag
from zoo._errors import ConfigError
from zoo._options import IO_MODES, ExecutorName

CONFIG_NAME = "zoo.toml"
_SIZE_MAX = 2**63  # past any memory, and where a float stops being a count of bytes (1e400 is inf)
_SIZE_UNITS = {"": 1, "b": 1, "k": 1024, "kb": 1024, "kib": 1024, "m": 1024**2, "mb": 1024**2, "mib": 1024**2, "g": 1024**3, "gb": 1024**3, "gib": 1024**3}


@dataclass(frozen=True)
class Config:
    path: Path | None = None
    cache_dir: Path | None = None
    default_target: str | None = None
    default_io: str | None = None
    offline: bool = False
    boards: tuple[Board, ...] = ()
    remotes: tuple[str, ...] = ()
    default_remote: bool = True
    """Whether fetches try the project's published catalogue (``zoo.registry.remotes.default``):
    yes unless zoo.toml has a ``remotes`` key, even an empty list."""
    trusted_keys: Mapping[str, tuple[Path, ...]] = field(default_factory=lambda: MappingProxyType({}))
    """Remote URL (as written in ``remotes``) → the public keys its artifacts must be
    signed with, from ``remotes = [{url = "...", trusted_keys = ["keys/ci.pub"]}]``."""
    plugins_enabled: tuple[str, ...] | None = None
    plugins_disabled: tuple[str, ...] = ()
    plugin_modules: tuple[str, ...] = ()
    executor: str | None = None
    """``[executor] name``: where builds run unless a command says (inline, processes, ray)."""
    ray_address: str | None = None
    """``[executor] ray_address``: the Ray cluster for ``executor = "ray"``."""
    ray_results: str | None = None
    """``[executor] ray_results``: the remote Ray tasks hand their artifacts over through
    (a relative directory is taken from zoo.toml's folder)."""


def parse_size(value: object, *, where: str) -> int:
    """'2MiB', '512 KiB', '1048576' or an int → bytes."""
    if isinstance(value, bool):
        raise ConfigError(f"{where}: expected a size such as '2MiB' or a number of bytes, got {value!r}")
    if isinstance(value, int) and 0 < value < _SIZE_MAX:
        return value
    if isinstance(value, str):
        text = value.strip().lower().replace(" ", "")
        digits = text.rstrip("abcdefghijklmnopqrstuvwxyz")
        unit = text[len(digits):]
        try:
            number = float(digits)
        except ValueError:
            number = -1.0
        if unit in _SIZE_UNITS and 0 < number * _SIZE_UNITS[unit] < _SIZE_MAX:
            size = number * _SIZE_UNITS[unit]
            if size != int(size):  # '0.5' would be 0 bytes, found only when the build fails
                raise ConfigError(f"{where}: {value!r} is not a whole number of bytes; write a size such as "
                                  f"'512KiB', '1.5MiB' or {max(int(size), 1)}")
            return int(size)
    raise ConfigError(f"{where}: expected a size such as '2MiB' or a number of bytes, got {value!r}")


def find_config_file(start: Path | None = None) -> Path | None:
    explicit = os.environ.get("ZOO_CONFIG")
    if explicit:
        p = Path(explicit)
        if not p.is_file():
            raise ConfigError(f"ZOO_CONFIG points to {p}, which is not a file")
        return p
    here = (start or Path.cwd()).resolve()
    for d in (here, *here.parents):
        candidate = d / CONFIG_NAME
        if candidate.is_file():
            return candidate
    from zoo._dirs import user_config_dir

    user = Path(user_config_dir()) / CONFIG_NAME
    return user if user.is_file() else None


def _expect(cond: bool, path: Path, key: str, expected: str, got: object) -> None:
    if not cond:
        raise ConfigError(f"{path}: key '{key}' must be {expected}, got {got!r}")


def _str_list(path: Path, key: str, value: object) -> tuple[str, ...]:
    _expect(
        isinstance(value, list) and all(isinstance(v, str) for v in value),
        path, key, "a list of strings", value,
    )
    assert isinstance(value, list)
    return tuple(value)


_TOP = {"cache_dir", "default_target", "default_io", "offline", "boards", "remotes", "plugins", "executor"}
_EXECUTOR = {"name", "ray_address", "ray_results"}
_BOARD = {"target", "system_config", "memory_mode", "sram", "description"}
_PLUGINS = {"enabled", "disabled", "modules"}


def parse_config(data: dict[str, Any], path: Path) -> Config:
    for key in data:
        if key not in _TOP:
            raise ConfigError(
                f"{path}: unknown key '{key}'; expected one of: {', '.join(sorted(_TOP))}"
            )
    cache_dir = data.get("cache_dir")
    _expect(cache_dir is None or isinstance(cache_dir, str), path, "cache_dir", "a path string", cache_dir)
    default_target = data.get("default_target")
    _expect(default_target is None or isinstance(default_target, str), path, "default_target", "a target name such as 'u55-128'", default_target)
    default_io = data.get("default_io")
    _expect(default_io is None or default_io in IO_MODES, path, "default_io", f"one of {', '.join(IO_MODES)}", default_io)
    offline = data.get("offline", False)
    _expect(isinstance(offline, bool), path, "offline", "true or false", offline)

    boards: list[Board] = []
    raw_boards = data.get("boards", {})
    _expect(isinstance(raw_boards, dict), path, "boards", "a table of [boards.NAME] tables", raw_boards)
    for name, b in raw_boards.items():
        key = f"boards.{name}"
        _expect(isinstance(b, dict), path, key, "a table", b)
        for k in b:
            if k not in _BOARD:
                raise ConfigError(f"{path}: unknown key '{key}.{k}'; expected one of: {', '.join(sorted(_BOARD))}")
        _expect(isinstance(b.get("target"), str), path, f"{key}.target", "a target name such as 'ethos-u55-128'", b.get("target"))
        for opt in ("system_config", "memory_mode", "description"):
            _expect(b.get(opt) is None or isinstance(b.get(opt), str), path, f"{key}.{opt}", "a string", b.get(opt))
        sram = parse_size(b["sram"], where=f"{path}: key '{key}.sram'") if "sram" in b else None
        boards.append(Board(name, b["target"], b.get("system_config"), b.get("memory_mode"), sram, b.get("description", "")))

    remotes, trusted_keys = _remotes(path, data.get("remotes", []))

    plugins = data.get("plugins", {})
    _expect(isinstance(plugins, dict), path, "plugins", "a table", plugins)
    for k in plugins:
        if k not in _PLUGINS:
            raise ConfigError(f"{path}: unknown key 'plugins.{k}'; expected one of: {', '.join(sorted(_PLUGINS))}")
    enabled = _str_list(path, "plugins.enabled", plugins["enabled"]) if "enabled" in plugins else None

    executor = data.get("executor", {})
    _expect(isinstance(executor, dict), path, "executor", "a table ([executor] with name, ray_address, ray_results)", executor)
    for k in executor:
        if k not in _EXECUTOR:
            raise ConfigError(f"{path}: unknown key 'executor.{k}'; expected one of: {', '.join(sorted(_EXECUTOR))}")
    names = get_args(ExecutorName)
    _expect(executor.get("name") is None or executor.get("name") in names, path, "executor.name",
            f"one of {', '.join(names)}", executor.get("name"))
    address = executor.get("ray_address")
    _expect(address is None or (isinstance(address, str) and address.strip() != ""), path, "executor.ray_address",
            "a Ray address such as 'ray://head:10001' or 'auto'", address)
    results = executor.get("ray_results")
    _expect(results is None or (isinstance(results, str) and results.strip() != ""), path, "executor.ray_results",
            "a remote every node can write, such as 's3://BUCKET/PREFIX' or a shared directory", results)
    if isinstance(results, str) and "://" not in results and not Path(results).expanduser().is_absolute():
        results = str(path.parent / results)

    return Config(
        path=path,
        cache_dir=(path.parent / cache_folder(cache_dir, f"{path}: cache_dir")) if cache_dir else None,
        default_target=default_target,
        default_io=default_io,
        offline=offline,
        boards=tuple(boards),
        remotes=remotes,
        default_remote="remotes" not in data,
        trusted_keys=trusted_keys,
        plugins_enabled=enabled,
        plugins_disabled=_str_list(path, "plugins.disabled", plugins.get("disabled", [])),
        plugin_modules=_str_list(path, "plugins.modules", plugins.get("modules", [])),
        executor=executor.get("name"),
        ray_address=address,
        ray_results=results,
    )


_REMOTE = {"url", "trusted_keys"}


def _remotes(path: Path, value: object) -> tuple[tuple[str, ...], Mapping[str, tuple[Path, ...]]]:
    """``remotes``: each a URL, or a table ``{url = "...", trusted_keys = ["keys/ci.pub"]}``
    whose key files (relative to zoo.toml) must have signed every artifact fetched from it."""
    expected = 'a list of remotes, each a URL or a table {url = "...", trusted_keys = ["key.pub"]}'
    _expect(isinstance(value, list), path, "remotes", expected, value)
    assert isinstance(value, list)
    urls: list[str] = []
    keys: dict[str, tuple[Path, ...]] = {}
    for i, item in enumerate(value):
        key = f"remotes[{i}]"
        if isinstance(item, str):
            urls.append(item)
            continue
        _expect(isinstance(item, dict), path, key, 'a URL or a table {url = "...", trusted_keys = [...]}', item)
        for k in item:
            if k not in _REMOTE:
                raise ConfigError(f"{path}: unknown key '{key}.{k}'; expected one of: {', '.join(sorted(_REMOTE))}")
        url = item.get("url")
        _expect(isinstance(url, str) and bool(url.strip()), path, f"{key}.url", "a remote URL or directory", url)
        files = _str_list(path, f"{key}.trusted_keys", item.get("trusted_keys", []))
        for n, name in enumerate(files):
            _expect(bool(name.strip()), path, f"{key}.trusted_keys[{n}]", "the path of a public key file", name)
        urls.append(url)
        keys[url] = (*keys.get(url, ()), *(path.parent / Path(f).expanduser() for f in files))
    return tuple(urls), MappingProxyType({url: found for url, found in keys.items() if found})


def load_config(path: Path | None = None) -> Config:
    path = path or find_config_file()
    if path is None:
        return apply_env(Config())
    if sys.version_info >= (3, 11):  # imported only when there is a file to read
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{path}: not valid TOML: {e}") from None
    except OSError as e:
        raise ConfigError(f"{path}: cannot read: {e.strerror}") from None
    return apply_env(parse_config(data, path))


def apply_env(cfg: Config) -> Config:
    env = os.environ
    if env.get("ZOO_CACHE_DIR"):  # empty is unset, as the XDG variables are
        cfg = replace(cfg, cache_dir=cache_folder(env["ZOO_CACHE_DIR"], "ZOO_CACHE_DIR").absolute())
    offline = flag("ZOO_OFFLINE")
    if offline is not None:
        cfg = replace(cfg, offline=offline)
    return cfg


def cache_folder(value: str, where: str) -> Path:
    """The cache folder ``value`` names, ``~`` expanded; ConfigError for a value that can only be a
    mistake: blank, or a ``~user`` with no such user (kept as is, it would be a folder named ``~user``
    in the working directory). A relative one is made absolute by the caller: the firmware's CMake
    runs elsewhere."""
    if not value.strip():
        raise ConfigError(f"{where} is {value!r}, only spaces: name a folder, or leave it unset for the default")
    folder = Path(os.path.expanduser(value))  # pathlib's raises RuntimeError for an unknown user
    if folder.parts and folder.parts[0].startswith("~"):
        raise ConfigError(f"{where} is {value!r}: {folder.parts[0]} names no user on this machine, so the ~ cannot "
                          "be expanded; give the folder's absolute path")
    return folder


def cache_dir(cfg: Config) -> Path:
    if cfg.cache_dir is not None:
        return cfg.cache_dir
    from zoo._dirs import user_cache_dir

    return Path(user_cache_dir())
