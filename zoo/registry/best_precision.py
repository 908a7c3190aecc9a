"""Which of a catalogue cell's precisions to ship: among the verified builds that differ only in
precision (``--precision``, recipes, ``--qat``), the fastest on Vela's estimate that meets the
model's goal, beside what int8 alone gives.

The goal is the one ``zoo tune`` searches for. With trained weights, every declared metric
within its allowed drop. With random weights, whose task metrics count random logits that
swap places, each output's SQNR against float within ``SQNR_MARGIN_DB`` of the best build of
the cell. Torch-free: it reads manifests' records only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from zoo.registry.report import ReportRow

SQNR_MARGIN_DB = 1.0


@dataclass(frozen=True)
class Judgement:
    """One cell's precisions, judged: each verified build, fastest first, and whether it meets the goal."""

    goal: str
    tried: tuple[ReportRow, ...]
    meets: tuple[bool, ...]

    @property
    def best(self) -> ReportRow | None:
        """The fastest build that meets the goal; None when none does."""
        return next((r for r, ok in zip(self.tried, self.meets, strict=True) if ok), None)

    @property
    def int8(self) -> ReportRow | None:
        return next((r for r in self.tried if r.precision == "int8"), None)

    def to_json(self) -> dict[str, Any]:
        return {"goal": self.goal, "best": self.best.precision if self.best else None,
                "tried": [{"precision": r.precision, "key": r.key, "inference_time_ms": r.inference_time_ms,
                           "meets": ok} for r, ok in zip(self.tried, self.meets, strict=True)]}


def judge(rows: Sequence[ReportRow]) -> Judgement | None:
    """``rows``: one cell's builds. None unless it has verified builds at two precisions or more
    with the same I/O, SRAM budget and Vela flags: there is nothing to choose between."""
    verified = [r for r in rows if r.precision != "float" and (r.metrics or _worst_db(r) is not None)]
    groups: dict[tuple[Any, ...], list[ReportRow]] = {}
    for r in verified:
        groups.setdefault((r.io, r.sram_budget_bytes, r.extra_flags), []).append(r)
    plain = [g for g in groups.values() if len({r.precision for r in g}) > 1]
    if not plain:
        return None
    group = max(plain, key=lambda g: (any(r.precision == "int8" for r in g), len(g)))
    newest: dict[str, ReportRow] = {}
    for r in sorted(group, key=lambda r: r.built_at or ""):
        newest[r.precision] = r
    tried = tuple(sorted(newest.values(), key=lambda r: (r.inference_time_ms or 0.0, r.precision)))
    return Judgement(_goal(tried), tried, tuple(_goal_met(r, tried) for r in tried))


def _by_metrics(rows: Sequence[ReportRow]) -> bool:
    return all(r.metrics and not r.random_weights for r in rows)


def _goal(rows: Sequence[ReportRow]) -> str:
    if _by_metrics(rows):
        return "every metric within its allowed drop"
    return f"each output's SQNR against float within {SQNR_MARGIN_DB:g} dB of the best build's"


def _goal_met(row: ReportRow, rows: Sequence[ReportRow]) -> bool:
    if _by_metrics(rows):
        return all(x.get("passed") is True for x in row.metrics)
    best = max((d for r in rows if (d := _worst_db(r)) is not None), default=None)
    worst = _worst_db(row)
    return best is not None and worst is not None and worst >= best - SQNR_MARGIN_DB


def _worst_db(row: ReportRow) -> float | None:
    """The lowest of the outputs' SQNR against float: where the program is noisiest."""
    values = [o.get("sqnr_db") for o in row.output_sqnr]
    if not values or any(v is None for v in values):
        return None
    return min(float(v) for v in values if v is not None)
