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
    ├── VerificationError     an artifact failed a structural or numerical check


    ├── RemoteError           a remote cannot be read or written
    │   ├── RemoteUnavailable unreachable, timed out or failing, after retries
    │   ├── IntegrityError    a download does not match its digest, or names an unsafe path
    │   └── PublishConflict   the remote holds a different artifact under the same key
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
    """A compile failed. Where it is known, ``stage`` names the stage (e.g.
    ``"lower"``), ``operator`` the operator (e.g. ``aten.linear.default``) and
    ``pass_name`` the compiler pass; the message says all of it anyway."""

    def __init__(
        self,
        message: str,
        *,
        stage: str | None = None,
        operator: str | None = None,
        pass_name: str | None = None,
    ) -> None:
        # Only the message in args: pickling calls BuildError(*args) and then
        # restores the fields from __dict__.
        super().__init__(message)
        self.stage = stage
        self.operator = operator
        self.pass_name = pass_name


class CacheError(ZooError):
    pass


class VerificationError(ZooError):
    """An artifact failed verification; it is not handed out without ``--no-verify``."""


class RemoteError(ZooError):
    pass


class RemoteUnavailable(RemoteError):
    pass


class IntegrityError(RemoteError):
    pass


class PublishConflict(RemoteError):
    pass


class MissingExtraError(ZooError):
    def __init__(self, what: str) -> None:
        super().__init__(
            f"{what} needs the compile stack, which is not installed. "
            "Install it with: pip install 'ethosu-zoo[compile]'"
        )
