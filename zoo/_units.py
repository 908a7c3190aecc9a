"""Sizes and durations as a person reads them, for messages and tables."""

from __future__ import annotations


def human_bytes(n: int | float | None) -> str:
    if n is None:
        return "-"
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(value) < 1024 or unit == "GiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} GiB"


def duration(ms: float | None) -> str:
    """Milliseconds as ms, µs or ns, whichever reads naturally; '-' for None."""
    if ms is None:
        return "-"
    if ms >= 1:
        return f"{ms:.2f} ms"
    if ms >= 0.001:
        return f"{ms * 1000:.1f} µs"
    return f"{ms * 1e6:.0f} ns"
