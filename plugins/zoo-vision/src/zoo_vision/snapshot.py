"""The pack's snapshot of torchvision's and timm's metadata (``data/vision_models.json``,
written by scripts/snapshot_vision.py): registration reads it instead of importing them."""

from __future__ import annotations

import importlib.metadata
import json
from functools import cache
from pathlib import Path
from typing import Any

from zoo import BuildError

SNAPSHOT = Path(__file__).parent / "data" / "vision_models.json"


@cache
def data() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(SNAPSHOT.read_text(encoding="utf-8"))
    return loaded


@cache
def version(distribution: str) -> str:
    """An installed distribution's release without its build tag (torchvision 0.29.1+cpu: 0.29.1);
    its code defines the architecture and the random init, so it is part of the weights' identity."""
    try:
        return importlib.metadata.version(distribution).split("+")[0]
    except importlib.metadata.PackageNotFoundError:
        return "none"


def check_version(model: str, distribution: str) -> None:
    """Refuse to build from a library other than the one the snapshot was taken from."""
    wanted = data()[f"{distribution}_version"]
    if version(distribution) != wanted:
        raise BuildError(f"{model}: the installed {distribution} is {version(distribution)}, the pack's snapshot "
                         f"{SNAPSHOT.name} was taken from {wanted}; install {distribution}=={wanted} or regenerate "
                         "it with plugins/zoo-vision/scripts/snapshot_vision.py")
