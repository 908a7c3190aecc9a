"""What tells a model's builds apart on the site and in ``zoo report --all``: each build's variant
(weights, I/O, precision, SRAM budget, Vela flags) and the words that name it. Takes a site
``Build`` (from ``builds``) by its fields, so that module can call these without a cycle."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from zoo._units import human_bytes


def variant_key(weights: str, io: str, layout: str, sram_budget: int | None, flags: tuple[str, ...],
             precision: str) -> tuple[str, ...]:
    return (weights, io, layout, str(sram_budget or ""), " ".join(flags), precision_option(precision))


def precision_option(precision: str) -> str:
    """The precision where a build's key names it; "" for int8 and float, which a portable
    build and an NPU build of one variant differ by without being different variants."""
    return "" if precision in ("int8", "float") else precision


def io_text(io: str, layout: str) -> str:
    """``int8``, ``pixels nhwc``: the layout only where it is not NCHW."""
    return io if layout == "nchw" else f"{io} {layout}"


def options_text(io: str, sram_budget: int | None, flags: Iterable[str], precision: str = "int8") -> str:
    """What a build's key names besides model, weights and target, as the site and ``zoo report --all``
    show it: ``a16w8, int8, SRAM budget 1.0 KiB, --optimise=Size``; "" for an int8 or float program with float
    I/O and the target's own options."""
    parts = [precision_option(precision), io, f"SRAM budget {human_bytes(sram_budget)}" if sram_budget else "",
             " ".join(flags)]
    return ", ".join(p for p in parts if p and p != "float")


_FACETS: tuple[Callable[[Any], str], ...] = (  # "" where a build has the default
    lambda b: f"weights {b.weights}",
    lambda b: f"board {b.board}" if b.board else "",
    lambda b: io_text(b.io, b.layout),
    lambda b: precision_option(b.precision),
    lambda b: f"SRAM budget {human_bytes(b.sram_budget)}" if b.sram_budget else "",
    lambda b: " ".join(b.extra_flags),
    lambda b: f"{b.system_config}, {b.memory_mode}",
    lambda b: ", ".join(f"{k} {v}" for k, v in sorted(b.tools.items()) if k in ("executorch", "ethos-u-vela", "torch")),
    lambda b: f"built {b.built_at[:16].replace('T', ' ')}",
)


def variant_labels(builds: Iterable[Any]) -> dict[str, str]:
    """key → label. The first facets (weights, board, I/O, precision, budget, flags) name a variant across
    targets; the rest only tell apart builds of one target that share all of those."""
    builds = list(builds)
    across = [f for f in _FACETS[:6] if len({f(b) for b in builds}) > 1]
    labels = {b.key: ", ".join(filter(None, (f(b) for f in across))) for b in builds}
    groups: dict[tuple[str, str], list[Any]] = {}  # one pass each way: linear in the builds
    for b in builds:
        groups.setdefault((b.column, labels[b.key]), []).append(b)
    for same in groups.values():
        extra = [f for f in _FACETS[6:] if len({f(o) for o in same}) > 1]
        for b in same if extra else ():
            labels[b.key] = ", ".join(filter(None, [labels[b.key], *(f(b) for f in extra)]))
    return labels
