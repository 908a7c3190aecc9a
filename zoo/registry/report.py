"""Reports over cached artifacts: Vela's estimates per target for one model
(``collect``), and the catalogue of every model × target with its failures
(``collect_catalogue``), as rows and JSON.

Turning a report into text or HTML is the CLI's job (zoo/cli/report_render.py).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from zoo._errors import UsageError
from zoo.registry.store.cache import Cache, CorruptEntry
from zoo.registry.store.failures import Failure
from zoo.registry.store.manifest import VelaTotals

GENERATED = "generated"  # the origin every plugin gives random weights (WeightsVariant.origin)

if TYPE_CHECKING:
    from zoo._spec import ModelSpec
    from zoo.registry.store.manifest import Manifest

NOTE = ("These are Vela's estimates, not measurements: "
        "CPU operators between partitions are not included.")


def cpu_work(m: Manifest) -> tuple[int | None, tuple[str, ...]]:
    """What the firmware's CPU must do around the NPU: the operator nodes it runs (the
    model's own and the quantize/dequantize at the boundary) and the kernels it must
    link (the .pte's operator table). None where the manifest does not say."""
    d = m.delegation
    kernels = tuple(m.cpu_operators)
    if "cpu_ops" not in d:
        return None, kernels
    return int(d.get("cpu_ops") or 0) + int(d.get("cpu_quantize_ops") or 0), kernels


@dataclass(frozen=True)
class ReportRow:
    """One cached artifact. The Vela numbers are None for the portable target."""

    model: str
    model_version: str | None
    target: str
    accelerator: str | None
    system_config: str | None
    memory_mode: str | None
    extra_flags: tuple[str, ...]
    """The target's own Vela flags and any chosen to fit its SRAM budget."""
    sram_budget_bytes: int | None
    weights: str | None
    key: str
    pte_bytes: int | None
    inference_time_ms: float | None
    inferences_per_second: float | None
    sram_bytes: int | None
    dram_bytes: int | None
    on_chip_flash_bytes: int | None
    off_chip_flash_bytes: int | None
    npu_ops: int | None
    cpu_ops: int | None
    partitions: int | None
    built_at: str | None
    cpu_fallback: tuple[str, ...] = ()
    """The model's operators left on the CPU, by name (the quantize and dequantize
    at the program's boundary are not counted)."""
    tools: dict[str, str | None] = field(default_factory=dict)
    io: str = "float"
    """The program's boundary (``--io``); manifests from before it are float."""
    precision: str = "int8"
    """What the program is quantized at (``--precision``): ``int8``, ``a16w8``, or ``float`` (portable)."""
    cpu_run: int | None = None
    """Operator nodes the CPU runs, the boundary quantize/dequantize included."""
    cpu_kernels: tuple[str, ...] = ()
    """Kernels the firmware must link: the .pte's operator table."""
    licence: str | None = None
    """The weights' licence and origin, as the manifest records them (None before zoo recorded them)."""
    origin: str | None = None
    metrics: tuple[dict[str, Any], ...] = ()
    """Each declared metric as ``--verify`` measured it (name, unit, float, program,
    program_kind, drop, passed), with ``reference``: the weights' declared figure or None."""
    output_sqnr: tuple[dict[str, float | None], ...] = ()
    """``Manifest.output_sqnr``: each output's SQNR against float, program and fake-quant, and its lowest cosine."""

    @classmethod
    def from_manifest(cls, m: Manifest) -> ReportRow:
        run, kernels = cpu_work(m)
        target = m.target_options
        total = m.vela_total or VelaTotals()
        pte = m.file("pte")
        return cls(
            model=m.model,
            model_version=m.model_version,
            target=m.target,
            accelerator=target.accelerator,
            system_config=target.system_config,
            memory_mode=target.memory_mode,
            extra_flags=m.vela_flags,
            sram_budget_bytes=m.sram_budget_bytes,
            weights=m.weights,
            key=m.key,
            pte_bytes=pte.size if pte else None,
            inference_time_ms=total.inference_time_ms,
            inferences_per_second=total.inferences_per_second,
            sram_bytes=total.sram_bytes,
            dram_bytes=total.dram_bytes,
            on_chip_flash_bytes=total.on_chip_flash_bytes,
            off_chip_flash_bytes=total.off_chip_flash_bytes,
            npu_ops=m.delegation.get("npu_ops"),
            cpu_ops=m.delegation.get("cpu_ops"),
            partitions=m.delegation.get("partitions"),
            built_at=m.built_at,
            cpu_fallback=tuple(str(op) for op in m.delegation.get("cpu_op_names") or ()),
            tools=m.tools,
            io=m.io_text,
            precision=m.precision,
            cpu_run=run,
            cpu_kernels=kernels,
            licence=(m.weights_info or {}).get("licence"),
            origin=(m.weights_info or {}).get("origin"),
            metrics=tuple({**x, "reference": m.reference.get(str(x.get("name")))} for x in m.metrics),
            output_sqnr=tuple(m.output_sqnr),
        )

    @property
    def flash_bytes(self) -> int | None:
        if self.on_chip_flash_bytes is None and self.off_chip_flash_bytes is None:
            return None
        return (self.on_chip_flash_bytes or 0) + (self.off_chip_flash_bytes or 0)

    @property
    def random_weights(self) -> bool:
        return self.origin == GENERATED

    @property
    def metrics_text(self) -> str:
        """``top1 97.5 → 97.3 % (declared 97.6)``: float, then the program, beside the declared figure.
        Random weights get the outputs' SQNR against float instead: a task metric measured against
        the float model's own answers mostly counts random logits that swap places."""
        if self.random_weights and any(o.get("sqnr_db") is not None for o in self.output_sqnr):
            return sqnr_text(self.output_sqnr)
        return "; ".join(metric_text(x) for x in self.metrics) or "-"

    @property
    def npu_share(self) -> float | None:
        """The fraction of operators that run on the NPU."""
        if self.npu_ops is None:
            return None
        total = self.npu_ops + (self.cpu_ops or 0)
        return self.npu_ops / total if total else None

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["extra_flags"] = list(self.extra_flags)
        data["cpu_fallback"] = list(self.cpu_fallback)
        data["cpu_kernels"] = list(self.cpu_kernels)
        data["metrics"] = [dict(x) for x in self.metrics]
        data["flash_bytes"] = self.flash_bytes
        data["npu_share"] = self.npu_share
        return data


def sqnr_text(outputs: Sequence[dict[str, float | None]]) -> str:
    """``SQNR 36.4 dB (fake-quant 38.5), cosine ≥ 0.9990``, outputs separated by ``/``."""
    def each(key: str, fmt: str) -> str:
        return "/".join("-" if o.get(key) is None else format(o[key], fmt) for o in outputs)
    return (f"SQNR {each('sqnr_db', '.1f')} dB (fake-quant {each('fake_quant_sqnr_db', '.1f')}), "
            f"cosine ≥ {each('min_cosine', '.4f')}")


def metric_text(x: dict[str, Any]) -> str:
    unit = str(x.get("unit") or "")
    text = f"{x['name']} {x['float']:.4g} → {x['program']:.4g}{unit}"
    if x.get("reference") is not None:
        text += f" (declared {x['reference']:.4g})"
    return text + ("" if x.get("passed", True) else " FAILED")


@dataclass
class Skipped:
    key: str
    problem: str


@dataclass
class Report:
    model: str
    rows: list[ReportRow]
    skipped: list[Skipped] = field(default_factory=list)
    failures: list[Failure] = field(default_factory=list)
    """Recorded failures of this model on targets where nothing of its variant built."""

    def to_json(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "note": NOTE,
            "rows": [r.to_json() for r in self.rows],
            "failures": [f.to_json() for f in self.failures],
            "skipped": [asdict(s) for s in self.skipped],
        }


def _skipper(skipped: list[Skipped], say: Callable[[str], None] | None) -> Callable[[str, str], None]:
    """Records a corrupt entry, and says so."""

    def skip(key: str, problem: str) -> None:
        skipped.append(Skipped(key, problem))
        if say:
            say(f"skipping cache entry {key[:12]}: {problem} (run 'zoo cache prune --corrupt')")

    return skip


def _order(row: ReportRow) -> tuple[bool, float, str, str, str]:
    t = row.inference_time_ms
    return (t is None, t or 0.0, row.target, row.weights or "", row.key)


def collect(cache: Cache, spec: ModelSpec, *, weights: str | None = None,
            say: Callable[[str], None] | None = None) -> Report:
    """Every verified cached artifact of ``spec`` (optionally one weights variant), fastest first.

    Corrupt entries are skipped and reported through ``say``; only this model's
    files are hashed, so the rest of the cache costs one manifest read per entry.
    """
    rows: list[ReportRow] = []
    skipped: list[Skipped] = []
    seen_weights: set[str] = set()
    skip = _skipper(skipped, say)
    for key, entry, problem in cache.scan(verify=False):
        if entry is None:
            skip(key, problem or "unreadable")
            continue
        if entry.manifest.model != spec.name:
            continue
        try:
            verified = cache.get(key)
        except CorruptEntry as exc:
            skip(key, exc.problem)
            continue
        if verified is None:  # evicted since the scan
            continue
        row = ReportRow.from_manifest(verified.manifest)
        if row.weights:
            seen_weights.add(row.weights)
        if weights is None or row.weights == weights:
            rows.append(row)

    built = {(r.weights, r.target) for r in rows}
    failed: dict[tuple[str, str], Failure] = {}
    for key, failure, problem in cache.failures():
        if failure is None:
            skip(key, problem or "unreadable")
        elif (failure.model == spec.name and (weights is None or failure.weights == weights)
              and (failure.weights, failure.target) not in built):
            failed.setdefault((failure.weights, failure.target), failure)
    if not rows and not failed:
        if weights is not None and weights not in spec.weights_names and weights not in seen_weights:
            raise UsageError(
                f"model {spec.name!r} has no weights variant {weights!r}; choose one of: {', '.join(spec.weights_names)}"
            )
        what = f"{spec.name} with weights {weights!r}" if weights else spec.name
        flag = f" --weights {weights}" if weights else ""
        raise UsageError(
            f"nothing cached for {what}: run 'zoo build {spec.name} --target all{flag}', "
            f"or 'zoo fetch {spec.name} -t TARGET{flag}' for one target"
        )
    rows.sort(key=_order)
    return Report(spec.name, rows, skipped, [failed[k] for k in sorted(failed)])


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
    skip = _skipper(skipped, say)
    # Manifests only: the figures shown are the manifest's, which the files' hashes do not
    # cover, and hashing every .pte and header of a built catalogue reads gigabytes.
    for key, entry, problem in cache.scan(verify=False):
        if entry is None:
            skip(key, problem or "unreadable")
            continue
        row = ReportRow.from_manifest(entry.manifest)
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
