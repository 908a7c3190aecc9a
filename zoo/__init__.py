"""zoo: a model zoo registry for ExecuTorch on Arm Ethos-U NPUs.

Importing zoo is cheap: torch and ExecuTorch load only when something compiles.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from zoo._errors import (
    BuildError,
    CacheError,
    ConfigError,
    IntegrityError,
    MissingExtraError,
    PluginError,
    PublishConflict,
    RemoteError,
    RemoteUnavailable,
    SpecError,
    UnknownModelError,
    UnknownTargetError,
    UsageError,
    VerificationError,
    ZooError,
)
from zoo._hookspecs import hookimpl, hookspec
from zoo._spec import Dataset, InputSpec, ModelSpec, Sample, WeightsVariant
from zoo._version import __version__

if TYPE_CHECKING:
    from zoo.registry.targets import Target


__all__ = [
    "BuildError",
    "CacheError",
    "ConfigError",
    "Dataset",
    "InputSpec",
    "IntegrityError",
    "MissingExtraError",
    "ModelSpec",
    "PluginError",
    "PublishConflict",
    "RemoteError",
    "RemoteUnavailable",
    "Sample",
    "SpecError",
    "Target",
    "UnknownModelError",
    "UnknownTargetError",
    "UsageError",
    "VerificationError",
    "WeightsVariant",
    "ZooError",
    "__version__",
    "build",
    "fetch",
    "hookimpl",
    "hookspec",
]


def __getattr__(name: str) -> Any:
    # Keep `import zoo` light: the engine loads on first use.
    if name == "Target":
        from zoo.registry.targets import Target

        return Target
    if name in ("fetch", "build"):
        from zoo import _api

        return getattr(_api, name)
    raise AttributeError(f"module 'zoo' has no attribute {name!r}")
