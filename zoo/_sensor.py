"""How a sensor model's input is taken from the device: ``SensorInput``. Torch- and numpy-free.

An audio model's input says its MFCC statistics (``InputSpec.mean``/``std``); a sensor model's
says more, because firmware reads the sensor itself: how many samples a window holds, at what
rate, which axes in which units, and how raw values are normalised before the network sees
them. The C I/O helpers turn that into ``<array>_normalise_input<i>`` (raw samples in, the
program's input out) and the header's ``INPUT<i>_SENSOR_*`` macros; the firmware project
prints it. It is part of the input's JSON, so of the build key: it changes the header.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from zoo._window_features import parse_window_statistic

__all__ = ["NORMALISATIONS", "WINDOW_STD_FLOOR", "SensorInput"]

NORMALISATIONS = ("per-channel", "per-window", "none")
"""``per-channel``: ``(raw - mean[c]) / std[c]`` with the declared constants; ``per-window``: each
channel standardised by the window's own mean and (population) standard deviation, floored at
``WINDOW_STD_FLOOR``; ``none``: the raw values as they are."""
WINDOW_STD_FLOOR = 1e-12
_NAME = re.compile(r"[ -~]{1,64}\Z")


@dataclass(frozen=True)
class SensorInput:
    """A sensor input: ``window`` samples at ``rate_hz`` of ``axes`` (each in its ``units``).

    The network's channels are the axes, or ``features`` when firmware computes values from
    the window first (an autoencoder on statistics of a window, as an audio model on MFCCs);
    ``mean`` and ``std`` give one value per channel for ``per-channel`` normalisation. All
    normalisation runs in double and rounds to float32 once, as numpy's float64 then
    ``astype(float32)`` does. A window shorter than ``window`` is padded after its end
    with zeros after normalisation; a longer one is cut after it (``per-window`` statistics
    still run over all of it)."""

    window: int
    rate_hz: float
    axes: tuple[str, ...]
    units: tuple[str, ...] = ()
    """One per axis, e.g. ``("g", "g", "g", "rad/s", "rad/s", "rad/s")``; empty: not declared."""
    normalisation: str = "per-channel"
    mean: tuple[float, ...] = ()
    std: tuple[float, ...] = ()
    features: tuple[str, ...] = ()
    """The names of the values the network takes when they are not the raw axes, computed from each
    window; then the input holds one value per feature (one step)."""
    from_window: bool = False
    """The features are zoo's statistics of the window (``zoo.WINDOW_STATISTICS``, each named ``"<axis>
    <statistic>"``): the helper computes them from the raw window. False: firmware computes them and hands
    the helper the features."""

    @property
    def channels(self) -> tuple[str, ...]:
        """The names of the network input's channels: the features, else the axes."""
        return self.features or self.axes

    @property
    def steps(self) -> int:
        """Values per channel in the network's input: the window's samples, or 1 for features."""
        return 1 if self.features else self.window

    @property
    def raw_shape(self) -> tuple[int, int]:
        """What the helper takes, (samples, values per sample): the window of every axis, or the features."""
        return (1, len(self.features)) if self.features and not self.from_window else (self.window, len(self.axes))

    def problems(self, shape: tuple[int, ...]) -> list[str]:
        """What is wrong with the declaration, for an input of ``shape`` (N, C, ...)."""
        out: list[str] = []
        if isinstance(self.window, bool) or not isinstance(self.window, int) or self.window < 1:
            out.append(f"window must be a number of samples ≥ 1, got {self.window!r}")
        if isinstance(self.rate_hz, bool) or not isinstance(self.rate_hz, (int, float)) \
                or not math.isfinite(self.rate_hz) or self.rate_hz <= 0:
            out.append(f"rate_hz must be a positive number of samples a second, got {self.rate_hz!r}")
        for what in ("axes", "units", "features"):
            names = getattr(self, what)
            if not isinstance(names, tuple) or not all(isinstance(n, str) and _NAME.match(n) for n in names):
                out.append(f"{what} must be a tuple of names of 1-64 printable ASCII characters, got {names!r}")
        if not self.axes:
            out.append("axes is empty: name each of the sensor's axes")
        if self.units and len(self.units) != len(self.axes):
            out.append(f"units needs one unit per axis ({len(self.axes)}), got {len(self.units)}")
        if self.normalisation not in NORMALISATIONS:
            out.append(f"normalisation {self.normalisation!r} is not one of {', '.join(NORMALISATIONS)}")
        out += self._statistics_problems()
        if not isinstance(self.from_window, bool):
            out.append(f"from_window must be True or False, got {self.from_window!r}")
        elif not out and self.from_window:
            out += self._window_problems()
        if not out:
            out += self._shape_problems(shape)
        return out

    def _statistics_problems(self) -> list[str]:
        given = bool(self.mean) or bool(self.std)
        if self.normalisation != "per-channel":
            return [f"{self.normalisation} normalisation takes no mean or std"] if given else []
        count = len(self.channels)
        if len(self.mean) != count or len(self.std) != count:
            return [f"per-channel normalisation needs one mean and one std per channel ({count}), got "
                    f"{len(self.mean)} and {len(self.std)}"]
        values = (*self.mean, *self.std)
        if not all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in values):
            return ["mean and std must hold finite numbers"]
        return [] if all(s > 0 for s in self.std) else [f"std must be positive, got {list(self.std)}"]

    def _window_problems(self) -> list[str]:
        if not self.features:
            return ["from_window needs features: name each statistic of the window the network takes"]
        if self.window < 2:
            return ["from_window needs a window of 2 samples or more"]
        if self.normalisation == "per-window":
            return ["per-window normalisation takes raw samples, not features computed from the window: use "
                    "per-channel or none"]
        return [p for p in (parse_window_statistic(name, self.axes) for name in self.features) if isinstance(p, str)]

    def _shape_problems(self, shape: tuple[int, ...]) -> list[str]:
        elements = math.prod(shape[1:]) if len(shape) > 1 else 0
        channels = len(self.channels)
        if len(shape) < 2 or shape[1] != channels or elements != channels * self.steps:
            return [f"an input of shape {list(shape)} does not hold {channels} channel(s) × {self.steps} step(s) "
                    "(N, channels, ..., steps), as the declaration says"]
        return []

    def to_json(self) -> dict[str, Any]:
        return {"window": self.window, "rate_hz": float(self.rate_hz), "axes": list(self.axes),
                "units": list(self.units), "normalisation": self.normalisation,
                "mean": [float(v) for v in self.mean], "std": [float(v) for v in self.std],
                "features": list(self.features),
                **({"from_window": True} if self.from_window else {})}  # absent when False: earlier keys hold
