"""SPAR's shoulder exercises as 4 s windows, read from seglearn's ``watch_dataset.npy``.

The file is a pickled dict (``X``: 140 recordings of (samples, 6) float64 at 50 Hz, ``y``: the
exercise, ``subject``: 1-10, ``side``, and the label names), so its sha256 is checked before
numpy unpickles it. Module level is numpy-free.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from zoo import BuildError
from zoo_sensors import files

SOURCE = "watch_dataset.npy"
RATE_HZ = 50
WINDOW = 200
STEP = 100
AXES = ("ax", "ay", "az", "wx", "wy", "wz")
UNITS = ("g", "g", "g", "rad/s", "rad/s", "rad/s")
EXERCISES = ("PEN", "ABD", "FEL", "IR", "ER", "TRAP", "ROW")
SUBJECTS = tuple(range(1, 11))
FOLDS = ((1, 2), (3, 4), (5, 6), (7, 8), (9, 10))
"""Leave-subjects-out folds; the shipped weights are fold 5's: trained on subjects 1-8."""
HELD_OUT_SUBJECTS = FOLDS[-1]
CALIBRATION_EVERY = 10
ORIGIN = (
    "SPAR (Burns et al., 2018: Apple Watch IMU, 10 subjects, 7 shoulder exercises, both sides), the subset "
    "seglearn 1.2.5 ships as seglearn/data/watch_dataset.npy (BSD-3-Clause)"
)
WINDOWING = (f"{WINDOW}-sample windows ({WINDOW // RATE_HZ} s at {RATE_HZ} Hz) every {STEP} samples (50 % "
             "overlap) within each recording")
SPLIT_RULE = (f"subjects 1-8 train, subjects {HELD_OUT_SUBJECTS[0]}-{HELD_OUT_SUBJECTS[1]} held out; every "
              f"{CALIBRATION_EVERY}th training window calibrates")


@cache
def recordings() -> tuple[list[Any], Any, Any]:
    """The 140 recordings (samples, 6) float32, their exercise index and subject, after the digest check."""
    import numpy as np

    path = files.checked(SOURCE)  # before allow_pickle: only these bytes are unpickled
    data = np.load(path, allow_pickle=True).item()
    x, y, subject = data["X"], np.asarray(data["y"]), np.asarray(data["subject"])
    if tuple(data["y_labels"]) != EXERCISES or tuple(data["X_labels"]) != AXES or len(x) != len(y):
        raise BuildError(f"zoo-sensors: {path} is not SPAR's watch data as expected")
    return [np.asarray(r, dtype=np.float32) for r in x], y.astype(np.int64), subject.astype(np.int64)


@cache
def windows() -> tuple[Any, Any, Any]:
    """Every window (N, 6, 200) float32 (raw units), its exercise and its subject, in recording order."""
    import numpy as np

    x, y, subject = recordings()
    out, labels, who = [], [], []
    for rec, label, s in zip(x, y.tolist(), subject.tolist(), strict=True):
        for start in range(0, rec.shape[0] - WINDOW + 1, STEP):
            out.append(rec[start : start + WINDOW].T)
            labels.append(label)
            who.append(s)
    return np.stack(out), np.asarray(labels, dtype=np.int64), np.asarray(who, dtype=np.int64)


def subject_split(held_out: tuple[int, ...]) -> dict[str, Any]:
    """Window indices of the training subjects (``train``), every ``CALIBRATION_EVERY``th of them
    (``calibration``), and of the ``held_out`` subjects."""
    import numpy as np

    _, _, who = windows()
    test = np.isin(who, held_out)
    train = np.flatnonzero(~test)
    return {"train": train, "calibration": train[::CALIBRATION_EVERY], "held_out": np.flatnonzero(test)}


def axis_statistics(index: Any) -> tuple[Any, Any]:
    """Each axis's mean and standard deviation over the windows ``index`` (float64)."""
    x = windows()[0][index].astype("float64")
    return x.mean(axis=(0, 2)), x.std(axis=(0, 2))


# --- the 84 features of the baselines and the novelty detector ------------------------------

BANDS_HZ = ((0.25, 1.0), (1.0, 2.0), (2.0, 5.0))
FEATURES = ("mean", "std", "min", "max", "p10", "p25", "median", "p75", "p90", "mean |diff|",
            "dominant Hz", *(f"log power {lo:g}-{hi:g} Hz" for lo, hi in BANDS_HZ))
FEATURE_COUNT = len(FEATURES) * len(AXES)
FEATURE_NAMES = tuple(f"{axis} {feature}" for axis in AXES for feature in FEATURES)
"""The 84 in the order ``features`` gives them: axis by axis."""
FEATURE_RULE = (f"{len(FEATURES)} per axis ({', '.join(FEATURES)}; power from the real FFT of the window "
                f"less its mean), {FEATURE_COUNT} in all, axis by axis")


def features(x: Any) -> Any:
    """The (N, 84) float64 features of windows (N, 6, 200) in raw units."""
    import numpy as np

    x = x.astype(np.float64)
    stats = [x.mean(2), x.std(2), x.min(2), x.max(2)]
    stats += list(np.percentile(x, (10, 25, 50, 75, 90), axis=2))
    stats.append(np.abs(np.diff(x, axis=2)).mean(2))
    power = np.abs(np.fft.rfft(x - x.mean(2, keepdims=True), axis=2)) ** 2
    hz = np.fft.rfftfreq(x.shape[2], 1.0 / RATE_HZ)
    stats.append(hz[power[:, :, 1:].argmax(2) + 1])
    stats += [np.log1p(power[:, :, (hz >= lo) & (hz < hi)].sum(2)) for lo, hi in BANDS_HZ]
    return np.stack(stats, axis=2).reshape(x.shape[0], -1)
