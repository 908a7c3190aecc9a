"""Errors raised by zoo.

    ZooError
    ├── UsageError            bad input from the user: exit code 2
    │   ├── UnknownModelError
    │   ├── UnknownTargetError
    │   └── ConfigError
    ├── PluginError           a plugin failed to load or registered something invalid
    ├── SpecError             a ModelSpec is malformed
    ├── BuildError            a compile failed
    ├── CacheError            a cache entry is corrupt or cannot be written
    └── MissingExtraError     the heavy stack (zoo[compile]) is not installed
"""

from __future__ import annotations


class ZooError(Exception):
    """Base class of every error zoo raises on purpose."""

    exit_code = 1


class UsageError(ZooError):
    exit_code = 2


class UnknownModelError(UsageError):
    pass


class UnknownTargetError(UsageError):
    pass


class ConfigError(UsageError):
    pass


class SpecError(ZooError):
    pass


class PluginError(ZooError):
    """A plugin could not be loaded or registered something invalid."""

    def __init__(self, plugin: str, dist: str | None, message: str) -> None:
        self.plugin = plugin
        self.dist = dist
        self.message = message
        where = f"plugin {plugin!r}" + (f" ({dist})" if dist else "")
        super().__init__(f"{where}: {message}")


class BuildError(ZooError):
    pass


class CacheError(ZooError):
    pass


class MissingExtraError(ZooError):
    def __init__(self, what: str) -> None:
        super().__init__(
            f"{what} needs the compile stack, which is not installed. "
            "Install it with: pip install 'ethosu-zoo[compile]'"
        )
