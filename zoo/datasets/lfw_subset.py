"""scikit-image's ``lfw_subset``: 100 face and 100 non-face grey crops, with a fixed split, for
any model pack (the vision pack's wake-word model, the MediaPipe pack's face scenes): public as
``zoo.datasets.lfw_subset``.

``skimage/data/lfw_subset.npy`` holds 200 crops of 25×25 float64 pixels in [0, 1]:
the first 100 are faces from Labeled Faces in the Wild, the last 100 are not faces.
skimage itself is never imported: only its data file is read.

Module level is torch- and numpy-free: registration reads the snapshot ``data/lfw_subset.json``
(sizes, the split's counts, the file's digest), which :func:`make_snapshot` writes and a test regenerates
(``python scripts/snapshot_lfw.py``).
"""

from __future__ import annotations

import hashlib
import json
from functools import cache
from pathlib import Path
from typing import Any

from zoo._checked_file import PackageData
from zoo._errors import BuildError

__all__ = ["CALIBRATION_PER_CLASS", "CLASSES", "CROP", "DATA", "HELD_OUT_PER_CLASS", "ORIGIN", "PREPROCESSING", "SIDE",
           "SNAPSHOT", "SOURCE", "SPLIT_RULE", "identity", "label_of", "load", "make_snapshot", "snapshot", "split_of"]

SOURCE = "skimage/data/lfw_subset.npy"
SNAPSHOT = Path(__file__).with_suffix(".json")
SIDE = 96
CROP = 25
HELD_OUT_PER_CLASS = 20
CALIBRATION_PER_CLASS = 16
CLASSES = ("no-face", "face")
ORIGIN = (
    "scikit-image's lfw_subset (BSD-3-Clause): 100 face crops from Labeled Faces in the Wild "
    "(Huang et al., University of Massachusetts) and 100 non-face crops, 25×25 grey"
)
SPLIT_RULE = (
    f"per class, crops ordered by the sha256 of their pixel bytes; the first {HELD_OUT_PER_CLASS} held out, "
    f"the rest for training, of which the first {CALIBRATION_PER_CLASS} also calibrate"
)
PREPROCESSING = (
    f"{CROP}×{CROP} grey in [0, 1] resized to {SIDE}×{SIDE} by bilinear interpolation (torch's interpolate, "
    "align_corners=False, no antialiasing), scaled to [-1, 1] and repeated on 3 channels"
)


DATA = PackageData(
    owner="zoo.datasets.lfw_subset", package="skimage", relative="data/lfw_subset.npy",
    install="install it with: pip install --no-deps 'scikit-image==0.26.0' (only its data file is read)",
    snapshot_file=SNAPSHOT, name="lfw_subset",
    remedy=("another scikit-image version? Install scikit-image==0.26.0, or regenerate the snapshot with "
            "python scripts/snapshot_lfw.py and retrain the vision pack's vww model"),
)
"""The crops file inside the installed scikit-image, found without importing it and checked against the snapshot."""
snapshot = DATA.snapshot


def identity(split: str) -> str:
    """The data file's digest, the split and the preprocessing; hashlib only."""
    return DATA.identity(split, SPLIT_RULE, PREPROCESSING)


def _read(path: Path) -> Any:
    import numpy as np

    crops = np.load(path, allow_pickle=False)
    if crops.shape != (200, CROP, CROP):
        raise BuildError(f"zoo.datasets.lfw_subset: {path} is not lfw_subset's 200 {CROP}×{CROP} crops (shape {crops.shape})")
    return crops


def label_of(index: int) -> int:
    """1 (face) for the first 100 crops, 0 (no face) for the last 100."""
    return 1 if index < 100 else 0


def split_of(crops: list[bytes]) -> dict[str, tuple[int, ...]]:
    """Crop indices by split, stratified by class, from the crops' bytes alone."""
    out: dict[str, list[int]] = {"held_out": [], "calibration": [], "train": []}
    for members in (range(0, 100), range(100, 200)):
        order = sorted(members, key=lambda i: (hashlib.sha256(crops[i]).hexdigest(), i))
        out["held_out"] += order[:HELD_OUT_PER_CLASS]
        out["train"] += order[HELD_OUT_PER_CLASS:]
        out["calibration"] += order[HELD_OUT_PER_CLASS : HELD_OUT_PER_CLASS + CALIBRATION_PER_CLASS]
    return {k: tuple(sorted(v)) for k, v in out.items()}


def make_snapshot(path: Path | None = None) -> dict[str, Any]:
    """What registration needs, computed from the data file (numpy)."""
    path = path or DATA.path()
    crops = _read(path)
    splits = split_of([c.tobytes() for c in crops])
    return {
        "source": SOURCE,
        "sha256": DATA.sha256(path),
        "crops": int(crops.shape[0]),
        "crop": [int(crops.shape[1]), int(crops.shape[2])],
        "identical_crops": int(crops.shape[0] - len({c.tobytes() for c in crops})),
        "split_rule": SPLIT_RULE,
        "split": {k: len(v) for k, v in splits.items()},
        "split_sha256": hashlib.sha256(json.dumps(splits, sort_keys=True).encode()).hexdigest(),
    }


@cache
def _prepared(side: int = SIDE) -> tuple[Any, Any, dict[str, tuple[int, ...]]]:
    """Every crop preprocessed (200, 3, side, side) float32, the labels, and the split checked against the snapshot."""
    import numpy as np
    import torch

    crops = _read(DATA.checked_path())
    splits = split_of([c.tobytes() for c in crops])
    if hashlib.sha256(json.dumps(splits, sort_keys=True).encode()).hexdigest() != snapshot()["split_sha256"]:
        raise BuildError("zoo.datasets.lfw_subset: the lfw_subset split differs from the snapshot's; regenerate it with "
                         "python scripts/snapshot_lfw.py")
    grey = torch.from_numpy(crops.astype(np.float32))[:, None]
    big = torch.nn.functional.interpolate(grey, size=(side, side), mode="bilinear", align_corners=False)
    images = (big.clamp(0.0, 1.0) * 2.0 - 1.0).repeat(1, 3, 1, 1).contiguous()
    labels = torch.tensor([label_of(i) for i in range(crops.shape[0])], dtype=torch.int64)
    return images, labels, splits


def load(split: str, side: int = SIDE) -> tuple[Any, Any]:
    """Images (n, 3, side, side) and labels (n,) of one split, as new torch tensors
    (:data:`PREPROCESSING`, at ``side`` instead of 96)."""
    images, labels, splits = _prepared(side)
    if split not in splits:
        raise BuildError(f"zoo.datasets.lfw_subset: lfw_subset has no split {split!r}; choose one of {', '.join(splits)}")
    index = list(splits[split])
    return images[index].clone(), labels[index].clone()
