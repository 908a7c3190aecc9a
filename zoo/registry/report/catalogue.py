"""``zoo report --all``: the catalogue of every cached model × target, with its failures."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from zoo._errors import UsageError
from zoo.registry.report.rows import NOTE, ReportRow, Skipped, skipper
from zoo.registry.store.cache import Cache
from zoo.registry.store.failures import Failure

UNREGISTERED = "(not registered)"
"""The task of a cached model that no loaded plugin registers."""


@dataclass(frozen=True)
class Cell:
    """One model (with one weights variant) on one target: an artifact or a recorded failure."""

    model: str
    weights: str
    target: str
    row: ReportRow | None = None
    failure: Failure | None = None
    variants: tuple[ReportRow, ...] = ()
    """Every artifact of this cell in the cache (other precisions, Vela options …), ``row`` first."""

    def to_json(self) -> dict[str, Any]:
        return {
            "model": self.model, "weights": self.weights, "target": self.target,
            "status": "built" if self.row else "failed",
            "artifact": self.row.to_json() if self.row else None,
            "failure": self.failure.to_json() if self.failure else None,
            "other_artifacts": max(0, len(self.variants) - 1),
        }


@dataclass
class Catalogue:
    """Every cached model × target: rows are (model, weights), columns targets."""

    models: list[tuple[str, str]]
    """By task, then by name."""
    targets: list[str]
    cells: dict[tuple[str, str, str], Cell]
    skipped: list[Skipped] = field(default_factory=list)
    tasks: dict[str, str] = field(default_factory=dict)
    """Each model's task, as its registered spec says (``UNREGISTERED`` for a model no plugin registers now)."""
    failed: list[Failure] = field(default_factory=list)
    """Every recorded failure, by model, weights, target and key. Each is a failed build of its own key, so of
    its own variant: a failed --sram-budget build beside a good default one is a failed build too, where
    its cell shows the good one. ``zoo site`` counts the same."""

    def task(self, model: str) -> str:
        return self.tasks.get(model, UNREGISTERED)

    def cell(self, model: str, weights: str, target: str) -> Cell | None:
        return self.cells.get((model, weights, target))

    def ordered(self) -> list[Cell]:
        """Every cell, by model then target in the catalogue's order."""
        return [c for m, w in self.models for t in self.targets if (c := self.cell(m, w, t)) is not None]

    def failed_in(self, model: str, weights: str, target: str) -> list[Failure]:
        """The failed builds of one cell, whether or not something else of it built."""
        return [f for f in self.failed if (f.model, f.weights, f.target) == (model, weights, target)]

    @property
    def built(self) -> int:
        """Cells with an artifact."""
        return sum(c.row is not None for c in self.cells.values())

    def to_json(self) -> dict[str, Any]:
        return {
            "note": NOTE,
            "models": [{"model": m, "weights": w, "task": self.task(m)} for m, w in self.models],
            "targets": self.targets,
            "cells": [c.to_json() for c in self.cells.values()],
            "failures": [f.to_json() for f in self.failed],
            "skipped": [asdict(s) for s in self.skipped],
        }


def _plainest_first(rows: list[ReportRow]) -> list[ReportRow]:
    """The artifacts built at the default precision with the target's own Vela options first, newest first."""
    newest = sorted(rows, key=lambda r: (r.built_at or "", r.key), reverse=True)
    return sorted(newest, key=lambda r: (r.precision not in ("int8", "float"), r.sram_budget_bytes is not None,
                                         len(r.extra_flags)))


def collect_catalogue(cache: Cache, *, weights: str | None = None, target_order: list[str] | None = None,
                      say: Callable[[str], None] | None = None, tasks: dict[str, str] | None = None) -> Catalogue:
    """Every cached artifact and every recorded failure, one cell per model,
    weights variant and target. A cell with an artifact shows the one built with the
    target's own Vela options (else the newest); a cell shows a failure only where nothing built,
    and ``Catalogue.failed`` holds every one. Targets follow ``target_order`` (e.g. ``zoo targets``), then by name."""
    rows: dict[tuple[str, str, str], list[ReportRow]] = {}
    failures: list[Failure] = []
    skipped: list[Skipped] = []
    skip = skipper(skipped, say)
    # Manifests only: the figures shown are the manifest's, which the files' hashes do not
    # cover, and hashing every .pte and header of a built catalogue reads gigabytes.
    for key, entry, problem in cache.scan(verify=False):
        if entry is None:
            skip(key, problem or "unreadable")
            continue
        row = ReportRow.from_manifest(entry.believed)
        if weights is None or row.weights == weights:
            rows.setdefault((row.model, row.weights or "", row.target), []).append(row)
    for key, failure, problem in cache.failures():
        if failure is None:
            skip(key, problem or "unreadable")
        elif weights is None or failure.weights == weights:
            failures.append(failure)
    failures.sort(key=lambda f: (f.model, f.weights, f.target, f.key))
    failed: dict[tuple[str, str, str], Failure] = {}
    for f in failures:
        failed.setdefault((f.model, f.weights, f.target), f)

    cells: dict[tuple[str, str, str], Cell] = {}
    for where in sorted(set(rows) | set(failed)):
        model, variant, target = where
        found = _plainest_first(rows.get(where, []))
        if found:
            cells[where] = Cell(model, variant, target, row=found[0], variants=tuple(found))
        else:
            cells[where] = Cell(model, variant, target, failure=failed[where])
    order = {name: i for i, name in enumerate(target_order or [])}
    targets = sorted({t for _, _, t in cells}, key=lambda t: (order.get(t, len(order)), t))
    tasks = tasks or {}
    models = sorted({(m, w) for m, w, _ in cells}, key=lambda mw: (tasks.get(mw[0], UNREGISTERED), mw))
    if not cells:
        flag = f" --weights {weights}" if weights else ""
        raise UsageError(
            "nothing cached" + (f" with weights {weights!r}" if weights else "")
            + f": run 'zoo fetch --all-models --target all{flag} --keep-going' first"
        )
    return Catalogue(models, targets, cells, skipped, {m: tasks.get(m, UNREGISTERED) for m, _ in models}, failures)
