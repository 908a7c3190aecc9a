"""The statistics of a sensor's window that zoo computes in firmware: their names and what each means.

A ``SensorInput`` with ``from_window=True`` names its features ``"<axis> <statistic>"`` (``"ax mean"``,
``"wz log power 2-5 Hz"``); the I/O helpers then compute each from the raw window in double, as numpy
computes it on the window's float32 samples widened to float64. Pure text: torch- and numpy-free.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["WINDOW_STATISTICS", "WindowStatistic", "parse_window_statistic"]

WINDOW_STATISTICS = (
    "mean", "std", "min", "max", "median", "p<q>", "mean |diff|", "dominant Hz", "log power <lo>-<hi> Hz")
"""Each over the window's samples ``x`` of one axis, as numpy gives it: ``x.mean()``; ``x.std()``
(population); ``x.min()``; ``x.max()``; ``np.percentile(x, q)`` (linear interpolation; ``median`` is
``p50``); ``np.abs(np.diff(x)).mean()``; of the power ``|np.fft.rfft(x - x.mean())|²`` at
``np.fft.rfftfreq(window, 1 / rate_hz)``, the frequency of the largest bin above 0 Hz (the first of
equals) and ``np.log1p`` of the power summed over the bins with ``lo <= f < hi``."""

_NUMBER = r"(\d+(?:\.\d+)?)"
_PERCENTILE = re.compile(rf"p{_NUMBER}\Z")
_BAND = re.compile(rf"log power {_NUMBER}-{_NUMBER} Hz\Z")
_PLAIN = {"mean": "mean", "std": "std", "min": "min", "max": "max", "mean |diff|": "mean_abs_diff",
          "dominant Hz": "dominant_hz"}


@dataclass(frozen=True)
class WindowStatistic:
    """One feature: ``kind`` of the window's axis ``axis``; ``a`` is a percentile's q, ``a`` and ``b`` a
    band's edges in Hz."""

    axis: int
    kind: str
    a: float = 0.0
    b: float = 0.0


def parse_window_statistic(name: str, axes: tuple[str, ...] | list[str]) -> WindowStatistic | str:
    """The statistic ``name`` names, or what is wrong with it."""
    for k, axis in enumerate(axes):
        if not name.startswith(axis + " "):
            continue
        what = name[len(axis) + 1:]
        if what in _PLAIN:
            return WindowStatistic(k, _PLAIN[what])
        if what == "median":
            return WindowStatistic(k, "percentile", 50.0)
        percentile = _PERCENTILE.match(what)
        if percentile and float(percentile[1]) <= 100:
            return WindowStatistic(k, "percentile", float(percentile[1]))
        band = _BAND.match(what)
        if band and float(band[1]) < float(band[2]):
            return WindowStatistic(k, "log_power", float(band[1]), float(band[2]))
        return (f"feature {name!r}: {what!r} is not one of zoo's window statistics ({', '.join(WINDOW_STATISTICS)}; "
                "q from 0 to 100, lo below hi)")
    return f"feature {name!r} does not start with one of the axes ({', '.join(axes)}) and a space"
