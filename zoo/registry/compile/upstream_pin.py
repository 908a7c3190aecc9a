"""The sha256 pins of the ExecuTorch sources a zoo rewrite leans on (``activations.PINNED``,
``spatial_mean.PINNED``): a test fails when an upstream file changes, so that what the rewrite
works around is checked again (docs/upstream.md). Reads the files without importing ExecuTorch."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from importlib import metadata
from pathlib import Path

__all__ = ["changed_upstream", "upstream_digests"]


def upstream_digests(pinned: Mapping[str, str], root: Path | None = None) -> dict[str, str]:
    """sha256 of each file in ``pinned``, under ``root`` or as installed."""
    base = root if root is not None else Path(str(metadata.distribution("executorch").locate_file("")))
    return {path: hashlib.sha256((base / path).read_bytes()).hexdigest() for path in pinned}


def changed_upstream(pinned: Mapping[str, str], root: Path | None = None) -> dict[str, str]:
    """The files of ``pinned`` whose digest is no longer the pinned one, with their new digest."""
    return {path: digest for path, digest in upstream_digests(pinned, root).items() if digest != pinned[path]}
