"""Environment variables, read by one rule each for flags and numbers."""

from __future__ import annotations

import math
import os

from zoo._errors import ConfigError

_ON = ("1", "true", "yes", "on")
_OFF = ("", "0", "false", "no", "off")


def flag(name: str) -> bool | None:
    """``name`` as a yes/no switch; None when it is not set. Anything but
    1/true/yes/on or 0/false/no/off (or empty) is an error, not a guess."""
    raw = os.environ.get(name)
    if raw is None:
        return None
    value = raw.strip().lower()
    if value in _ON:
        return True
    if value in _OFF:
        return False
    raise ConfigError(f"{name}={raw!r} is not a yes/no value: set it to 1 (on) or 0 (off)")


def number(name: str, default: float, kind: type[int] | type[float], *, positive: bool = False) -> float:
    """``name`` as a non-negative number (``positive``: more than 0); ``default`` when unset or empty."""
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = kind(raw)
    except ValueError:
        value = -1
    if not math.isfinite(value) or value < 0:
        raise ConfigError(f"{name}={raw!r} is not a non-negative number")
    if positive and value == 0:
        raise ConfigError(f"{name}={raw!r} must be more than 0")
    return value
