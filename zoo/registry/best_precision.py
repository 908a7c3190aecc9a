"""Which of a catalogue cell's precisions to ship: among the verified builds that differ only in
precision (``--precision``, recipes, ``--qat``), the fastest on Vela's estimate that meets the
model's goal, beside what int8 alone gives. ``zoo report --all`` and ``zoo site`` both ask it.

The goal is the one ``zoo tune`` searches for. With trained weights, every declared metric
within its allowed drop. With random weights, whose task metrics count random logits that
swap places, each output's SQNR against float within ``tune.SQNR_GOAL_MARGIN_DB`` of the best
build of the cell. Torch-free: it reads manifests' records only.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from zoo._units import duration
from zoo.registry.report import GENERATED, ReportRow
from zoo.registry.tune import SQNR_GOAL_MARGIN_DB

T = TypeVar("T")


@dataclass(frozen=True)
class Candidate(Generic[T]):
    """One build as the judgement needs it; ``item`` is the caller's own record of it."""

    item: T
    precision: str
    variant: Hashable
    """What besides precision tells the cell's builds apart (I/O, SRAM budget, Vela flags)."""
    time_ms: float | None
    metrics: tuple[dict[str, Any], ...]
    worst_sqnr_db: float | None
    """The lowest of the outputs' SQNR against float, where the manifest records it."""
    random_weights: bool
    built_at: str

    @property
    def verified(self) -> bool:
        return bool(self.metrics) or self.worst_sqnr_db is not None


def of_row(row: ReportRow) -> Candidate[ReportRow]:
    values = [o.get("sqnr_db") for o in row.output_sqnr]
    worst = min(float(v) for v in values if v is not None) if values and None not in values else None
    return Candidate(row, row.precision, (row.io, row.sram_budget_bytes, row.extra_flags), row.inference_time_ms,
                     row.metrics, worst, row.origin == GENERATED, row.built_at or "")


@dataclass(frozen=True)
class Judgement(Generic[T]):
    """One cell's precisions, judged: each verified build, fastest first, and whether it meets the goal."""

    goal: str
    tried: tuple[Candidate[T], ...]
    meets: tuple[bool, ...]

    @property
    def best(self) -> Candidate[T] | None:
        """The fastest build that meets the goal; None when none does."""
        return next((c for c, ok in zip(self.tried, self.meets, strict=True) if ok), None)

    @property
    def int8(self) -> Candidate[T] | None:
        return next((c for c in self.tried if c.precision == "int8"), None)

    def to_json(self) -> dict[str, Any]:
        return {"goal": self.goal, "best": self.best.precision if self.best else None,
                "tried": [{"precision": c.precision, "inference_time_ms": c.time_ms, "meets": ok}
                          for c, ok in zip(self.tried, self.meets, strict=True)]}


def judge(candidates: Sequence[Candidate[T]]) -> Judgement[T] | None:
    """``candidates``: one cell's builds. None unless it has verified builds at two precisions or
    more with the same I/O, SRAM budget and Vela flags: then there is nothing to choose between."""
    groups: dict[Hashable, list[Candidate[T]]] = {}
    for c in candidates:
        if c.precision != "float" and c.verified:
            groups.setdefault(c.variant, []).append(c)
    several = [g for g in groups.values() if len({c.precision for c in g}) > 1]
    if not several:
        return None
    group = max(several, key=lambda g: (any(c.precision == "int8" for c in g), len(g)))
    newest: dict[str, Candidate[T]] = {}
    for c in sorted(group, key=lambda c: c.built_at):
        newest[c.precision] = c
    tried = tuple(sorted(newest.values(), key=lambda c: (c.time_ms or 0.0, c.precision)))
    by_metrics = all(c.metrics and not c.random_weights for c in tried)
    best_db = max((c.worst_sqnr_db for c in tried if c.worst_sqnr_db is not None), default=None)

    def meets(c: Candidate[T]) -> bool:
        if by_metrics:
            return all(x.get("passed") is True for x in c.metrics)
        return best_db is not None and c.worst_sqnr_db is not None and c.worst_sqnr_db >= best_db - SQNR_GOAL_MARGIN_DB

    goal = ("every metric within its allowed drop" if by_metrics
            else f"each output's SQNR against float within {SQNR_GOAL_MARGIN_DB:g} dB of the best build's")
    return Judgement(goal, tried, tuple(meets(c) for c in tried))


def summary(judged: Judgement[Any] | None) -> str:
    """The precision to ship, beside int8's result; "-" where there is nothing to choose between."""
    if judged is None:
        return "-"
    best, int8 = judged.best, judged.int8
    if best is None:
        return (f"nothing meets the goal ({', '.join(c.precision for c in judged.tried)}); "
                "'zoo tune' names the modules to blame")
    if best is int8:
        return "int8 meets the goal"
    text = f"{best.precision} {duration(best.time_ms)}"
    return text + (f" (int8 {duration(int8.time_ms)} misses the goal)" if int8 is not None else "")
