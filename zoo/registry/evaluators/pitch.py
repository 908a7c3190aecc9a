"""Pitch from a salience over log-spaced bins, and raw pitch accuracy (RPA).

A pitch estimator such as CREPE gives one salience per bin, bin ``i`` standing for
``cents_offset + i * cents_per_bin`` cents above 10 Hz. Decoding is CREPE's weighted
argmax: the best bin, then the salience-weighted mean of the cents of the bins within
``window`` of it; Hz is ``10 * 2 ** (cents / 1200)``. The best bin's salience is the
periodicity that firmware compares with a voicing threshold. The C helper of the I/O
header (``zoo.registry.firmware.model_io``) does the same in float32.

Each label is the frame's true pitch in Hz, 0 for an unvoiced frame. RPA, as
mir_eval's ``raw_pitch_accuracy``, counts the voiced frames only and ignores the
estimate's own voicing decision.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from zoo.registry.evaluators.base import Evaluator, output


class PitchBins:
    """The bins of a salience output, and the decoding's window (bins either side of the best)."""

    __slots__ = ("bins", "cents_offset", "cents_per_bin", "window")

    def __init__(self, bins: int, cents_per_bin: float, cents_offset: float, window: int = 4) -> None:
        if bins < 2 or cents_per_bin <= 0 or window < 0 or not math.isfinite(cents_offset):
            raise ValueError(f"pitch bins need ≥ 2 bins, cents_per_bin > 0 and window ≥ 0; got {bins}, "
                             f"{cents_per_bin}, {window} (offset {cents_offset})")
        self.bins = bins
        self.cents_per_bin = float(cents_per_bin)
        self.cents_offset = float(cents_offset)
        self.window = window

    def __repr__(self) -> str:
        return (f"PitchBins({self.bins}, cents_per_bin={self.cents_per_bin!r}, "
                f"cents_offset={self.cents_offset!r}, window={self.window})")


CREPE_BINS = PitchBins(360, 20.0, 1997.3794084376191, 4)
"""CREPE's 360 bins, 20 cents apart from 1997.38 cents (about 31.7 Hz), decoded over ±4 bins."""


def hz_of_cents(cents: Any) -> Any:
    return 10.0 * 2.0 ** (cents / 1200.0)


def cents_of_hz(hz: Any) -> Any:
    import numpy as np

    return 1200.0 * np.log2(np.asarray(hz, dtype=np.float64) / 10.0)


def decode_pitch(salience: Any, scale: PitchBins = CREPE_BINS) -> tuple[Any, Any]:
    """Each row of ``salience`` (…, bins) as (Hz, periodicity), float64 arrays of the leading shape.
    A window whose salience sums to 0 gives the best bin's own pitch."""
    import numpy as np

    s = np.asarray(salience, dtype=np.float64)
    if s.shape[-1] != scale.bins:
        raise ValueError(f"the salience has {s.shape[-1]} bins, the decoding expects {scale.bins}")
    rows = s.reshape(-1, scale.bins)
    best = rows.argmax(axis=1)
    index = np.arange(scale.bins)
    near = np.abs(index[None, :] - best[:, None]) <= scale.window
    weights = np.where(near, rows, 0.0)
    cents = scale.cents_offset + scale.cents_per_bin * index
    total = weights.sum(axis=1)
    safe = np.where(total > 0, total, 1.0)
    mean = np.where(total > 0, (weights * cents).sum(axis=1) / safe, cents[best])
    return hz_of_cents(mean).reshape(s.shape[:-1]), rows.max(axis=1).reshape(s.shape[:-1])


def _hz(label: Any) -> float:
    if isinstance(label, (bool, str)):
        raise TypeError(type(label).__name__)
    return float(label.item() if hasattr(label, "item") else label)


def _check_hz(label: Any) -> str | None:
    try:
        value = _hz(label)
    except (TypeError, ValueError):
        return f"{label!r} ({type(label).__name__}) is not a pitch in Hz"
    return None if math.isfinite(value) and value >= 0 else f"{value!r} is not a pitch in Hz ≥ 0 (0: unvoiced)"


class PitchEvaluator(Evaluator):
    """An evaluator of a salience output that carries its bins, so the firmware's decoding helper
    can be rendered with the same constants."""

    __slots__ = ("scale",)

    def __init__(self, name: str, compute: Callable[..., float], scale: PitchBins) -> None:
        super().__init__(name, compute, unit="%", label_format="the frame's true pitch in Hz (0: unvoiced)",
                         check_label=_check_hz)
        self.scale = scale


def raw_pitch_accuracy(scale: PitchBins = CREPE_BINS, tolerance_cents: float = 50.0) -> PitchEvaluator:
    """RPA in percent: the share of voiced frames (label > 0 Hz) whose decoded pitch (output 0's
    salience, :func:`decode_pitch`) lies within ``tolerance_cents`` of the label."""

    def compute(outputs: Sequence[Sequence[Any]], labels: Sequence[Any]) -> float:
        import numpy as np

        truth = np.asarray([_hz(x) for x in labels], dtype=np.float64)
        voiced = truth > 0
        if not voiced.any():
            raise ValueError("raw pitch accuracy: no voiced frame (label > 0 Hz) to measure")
        hz = np.asarray([float(decode_pitch(output(o).reshape(-1), scale)[0]) for o in outputs])
        error = np.abs(cents_of_hz(hz[voiced]) - cents_of_hz(truth[voiced]))
        return float(100.0 * (error <= tolerance_cents).mean())

    return PitchEvaluator(f"rpa@{tolerance_cents:g}c", compute, scale)
