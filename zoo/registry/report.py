"""Per-model reports over cached artifacts: Vela's estimates per target as rows and JSON.

Turning a report into text or HTML is the CLI's job (zoo/cli/report_render.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from zoo._errors import UsageError
from zoo.registry.cache import Cache, CorruptEntry
from zoo.registry.manifest import VelaTotals

if TYPE_CHECKING:
    from zoo._spec import ModelSpec
    from zoo.registry.manifest import Manifest

NOTE = ("These are Vela's estimates, not measurements: "
        "CPU operators between partitions are not included.")


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
    tools: dict[str, str | None] = field(default_factory=dict)

    @classmethod
    def from_manifest(cls, m: Manifest) -> ReportRow:
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
            tools=m.tools,
        )

    @property
    def flash_bytes(self) -> int | None:
        if self.on_chip_flash_bytes is None and self.off_chip_flash_bytes is None:
            return None
        return (self.on_chip_flash_bytes or 0) + (self.off_chip_flash_bytes or 0)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["extra_flags"] = list(self.extra_flags)
        data["flash_bytes"] = self.flash_bytes
        return data


@dataclass
class Skipped:
    key: str
    problem: str


@dataclass
class Report:
    model: str
    rows: list[ReportRow]
    skipped: list[Skipped] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "note": NOTE,
            "rows": [r.to_json() for r in self.rows],
            "skipped": [asdict(s) for s in self.skipped],
        }


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

    def skip(key: str, problem: str) -> None:
        skipped.append(Skipped(key, problem))
        if say:
            say(f"skipping cache entry {key[:12]}: {problem} (run 'zoo cache prune --corrupt')")

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

    if not rows:
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
    return Report(spec.name, rows, skipped)
