"""The view of one cached build that ``zoo report`` and the site read (``ReportRow``),
and ``zoo report MODEL``: Vela's estimates per target for one model (``collect``)."""

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
INTERPRETER_NOTE = ("NPU program: Vela's program run by zoo's command-stream interpreter, a stand-in for the NPU, "
                    "against the TOSA reference model (--verify).")



def npu_share(npu_ops: int | None, cpu_ops: int | None) -> float | None:
    """The fraction of a build's operators that run on the NPU; None where it is not known."""
    if npu_ops is None:
        return None
    total = npu_ops + (cpu_ops or 0)
    return npu_ops / total if total else None


def declared_metrics(m: Manifest) -> tuple[dict[str, Any], ...]:
    """Each metric ``--verify`` measured, with ``reference``: the weights' declared figure or None."""
    return tuple({**x, "reference": m.reference.get(str(x.get("name")))} for x in m.metrics)


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
    npu_program: dict[str, Any] | None = None
    """``Manifest.npu_program``: Vela's program on the command-stream interpreter, a stand-in for the NPU."""

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
            **asdict(total),  # Vela's figures, under VelaTotals' names
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
            metrics=declared_metrics(m),
            output_sqnr=tuple(m.output_sqnr),
            npu_program=m.npu_program,
        )

    @property
    def flash_bytes(self) -> int | None:
        return VelaTotals(on_chip_flash_bytes=self.on_chip_flash_bytes,
                          off_chip_flash_bytes=self.off_chip_flash_bytes).flash_bytes

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
    def npu_program_text(self) -> str:
        """``bit-exact (8 samples)``, ``skipped`` or ``FAILED``: the level's outcome on the interpreter; ``-`` where not run."""
        level = self.npu_program or {}
        outcome = level.get("outcome")
        if outcome == "passed" and not level.get("delegate_calls"):  # a record from before zoo said so
            return "skipped"
        if outcome == "passed":
            return f"bit-exact ({level.get('samples')} samples)"
        return {"skipped": "skipped", "failed": "FAILED"}.get(str(outcome), "-")

    @property
    def npu_share(self) -> float | None:
        """The fraction of operators that run on the NPU."""
        return npu_share(self.npu_ops, self.cpu_ops)

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


def skipper(skipped: list[Skipped], say: Callable[[str], None] | None) -> Callable[[str, str], None]:
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
    skip = skipper(skipped, say)
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
        row = ReportRow.from_manifest(verified.believed)
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
