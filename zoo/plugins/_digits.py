"""scikit-learn's bundled 8×8 handwritten digits, prepared as 28×28 MNIST-style inputs.

Shared by the ``mnist`` plugin and ``scripts/train_mnist.py`` so that training,
calibration and evaluation preprocess identically. Module level is torch-free:
the splits and the data identity are computed with hashlib only.
"""

from __future__ import annotations

import gzip
import hashlib
import importlib.util
from functools import cache
from pathlib import Path
from typing import Any

from zoo import MissingExtraError

COUNT = 1797
"""Samples in the bundled file."""
SIDE = 28
SPLIT_SEED = 0
EVAL_SIZE = 297
CALIBRATION_SIZE = 100
PREPROCESSING = "pixel/16, bilinear 8x8->28x28 (align_corners=False), clamp [0,1]"


def digits_path() -> Path:
    """The digits file inside the installed scikit-learn, found without importing it."""
    spec = importlib.util.find_spec("sklearn")
    locations = list(spec.submodule_search_locations or []) if spec else []
    for location in locations:
        path = Path(location) / "datasets" / "data" / "digits.csv.gz"
        if path.is_file():
            return path
    raise MissingExtraError("the mnist model's data (scikit-learn's bundled digits)")


def file_sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _rank(index: int) -> bytes:
    return hashlib.sha256(f"{SPLIT_SEED}:{index}".encode()).digest()


@cache
def _order() -> tuple[int, ...]:
    # A permutation defined by sha256 alone, so it cannot drift with numpy's
    # or torch's random generators.
    return tuple(sorted(range(COUNT), key=_rank))


def eval_indices() -> tuple[int, ...]:
    """Held out: never used for training or calibration."""
    return _order()[:EVAL_SIZE]


def train_indices() -> tuple[int, ...]:
    return _order()[EVAL_SIZE:]


def calibration_indices() -> tuple[int, ...]:
    """A subset of the training split."""
    return train_indices()[:CALIBRATION_SIZE]


def split_identity() -> str:
    return (
        f"split=sha256-order(seed={SPLIT_SEED}),count={COUNT},eval={EVAL_SIZE},"
        f"calibration={CALIBRATION_SIZE};{PREPROCESSING}"
    )


def _read_rows(path: Path) -> list[list[int]]:
    with gzip.open(path, "rt", encoding="ascii") as f:
        rows = [[int(float(v)) for v in line.split(",")] for line in f if line.strip()]
    if len(rows) != COUNT or any(len(r) != 65 for r in rows):
        raise ValueError(f"{path}: expected {COUNT} rows of 64 pixels and a label")
    return rows


@cache
def _all_samples() -> tuple[Any, Any]:
    """Every sample preprocessed: images (N,1,28,28) float32 in [0,1], labels (N,) int64."""
    import torch
    import torch.nn.functional as F

    rows = _read_rows(digits_path())
    pixels = torch.tensor([r[:64] for r in rows], dtype=torch.float32).reshape(COUNT, 1, 8, 8)
    labels = torch.tensor([r[64] for r in rows], dtype=torch.int64)
    images = F.interpolate(pixels / 16.0, size=(SIDE, SIDE), mode="bilinear", align_corners=False)
    return images.clamp(0.0, 1.0).contiguous(), labels


def load(indices: tuple[int, ...]) -> tuple[Any, Any]:
    """Images (len,1,28,28) and labels (len,) for ``indices``, as new tensors."""
    import torch

    images, labels = _all_samples()
    index = torch.tensor(indices, dtype=torch.int64)
    return images.index_select(0, index).clone(), labels.index_select(0, index).clone()
