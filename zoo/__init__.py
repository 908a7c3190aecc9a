"""zoo: a model zoo registry for ExecuTorch on Arm Ethos-U NPUs.

Importing zoo is cheap: torch and ExecuTorch load only when something compiles.
"""

from __future__ import annotations

from typing import TYPE_CHECKING as _TYPE_CHECKING
from typing import Any as _Any

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
from zoo._options import Choices, FetchArgs, FetchOptions
from zoo._spec import Board, Dataset, InputSpec, ModelSpec, Sample, WeightsVariant
from zoo._version import __version__

if _TYPE_CHECKING:
    from zoo._api import Zoo, ZooOptions, build, fetch
    from zoo.registry.failures import Failure
    from zoo.registry.handout import Artifact
    from zoo.registry.remotes.base import PublishReport, Remote
    from zoo.registry.skipped import Skipped
    from zoo.registry.targets import Target
    from zoo.registry.verification import Verification

# Keep `import zoo` light: these load on first use.
_LAZY = {
    "Zoo": "zoo._api",
    "ZooOptions": "zoo._api",
    "fetch": "zoo._api",
    "build": "zoo._api",
    "Artifact": "zoo.registry.handout",
    "Failure": "zoo.registry.failures",
    "Skipped": "zoo.registry.skipped",
    "PublishReport": "zoo.registry.remotes.base",
    "Remote": "zoo.registry.remotes.base",
    "Target": "zoo.registry.targets",
    "Verification": "zoo.registry.verification",
}


__all__ = [
    "Artifact",
    "Board",
    "BuildError",
    "CacheError",
    "Choices",
    "ConfigError",
    "Dataset",
    "Failure",
    "FetchArgs",
    "FetchOptions",
    "InputSpec",
    "IntegrityError",
    "MissingExtraError",
    "ModelSpec",
    "PluginError",
    "PublishConflict",
    "PublishReport",
    "Remote",
    "RemoteError",
    "RemoteUnavailable",
    "Sample",
    "Skipped",
    "SpecError",
    "Target",
    "UnknownModelError",
    "UnknownTargetError",
    "UsageError",
    "Verification",
    "VerificationError",
    "WeightsVariant",
    "Zoo",
    "ZooError",
    "ZooOptions",
    "__version__",
    "build",
    "fetch",
    "hookimpl",
    "hookspec",
]


def __getattr__(name: str) -> _Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'zoo' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
