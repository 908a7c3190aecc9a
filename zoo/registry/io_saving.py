"""What ``--io int8`` and ``--layout nhwc`` would save a build that does not use them, for
``zoo fetch``'s summary.

- ``--io int8``: the quantize and dequantize kernels the CPU runs at the program's boundary,
  counted in the .pte itself (a quantize of a program input, a dequantize into a program output;
  those between two NPU partitions stay with any ``--io``).
- ``--layout nhwc``: the NPU operators that transpose the program's NCHW input to the NHWC the
  NPU computes in, with their cycles, as the build's own Vela run reported them
  (``vela.partitions[*].input_transposes``, ``vela_layers``). Only partitions the program's inputs
  feed count; manifests from before that record leave the figure unknown.

Only options the model offers and the build does not use are suggested. Torch-free.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from zoo.registry.pte.pte_structure import ExecutionPlan, PteInfo
from zoo.registry.store.manifest import Manifest

__all__ = ["DEQUANTIZE", "QUANTIZE", "Saving", "boundary_kernels", "input_partitions", "saving"]

QUANTIZE = "quantized_decomposed::quantize_per_tensor"
DEQUANTIZE = "quantized_decomposed::dequantize_per_tensor"


@dataclass(frozen=True)
class Saving:
    io: str | None
    """``int8`` where ``--io int8`` would remove CPU operators, else None."""
    layout: str | None
    """``nhwc`` where ``--layout nhwc`` would remove NPU operators (or might: see ``transposes``)."""
    cpu_operators: int = 0
    """The boundary's quantize and dequantize kernel calls that ``--io int8`` removes."""
    transposes: int | None = None
    """The NPU operators that ``--layout nhwc`` removes; None where the manifest does not record them."""
    cycles: int | None = None
    ms: float | None = None
    """``cycles`` at the NPU's clock, as Vela's estimate counts them."""

    @property
    def options(self) -> str:
        return " ".join(f"--{name} {value}" for name, value in (("io", self.io), ("layout", self.layout)) if value)


def _forward(info: PteInfo) -> ExecutionPlan | None:
    return next((p for p in info.plans if p.name == "forward"), None)


def _kernel(plan: ExecutionPlan, index: int) -> str:
    return plan.operators[index].split(".")[0] if 0 <= index < len(plan.operators) else ""


def boundary_kernels(info: PteInfo) -> int:
    """The kernel calls of ``forward`` that quantize a program input or dequantize into a program output."""
    plan = _forward(info)
    if plan is None:
        return 0
    inputs, outputs = set(plan.inputs), set(plan.outputs)
    return sum(1 for c in plan.calls if c.kind == "kernel" and c.args and (
        (_kernel(plan, c.index) == QUANTIZE and c.args[0] in inputs)
        or (_kernel(plan, c.index) == DEQUANTIZE and c.args[-1] in outputs)))


def input_partitions(info: PteInfo) -> list[bool]:
    """For each delegate call of ``forward``, in order: whether every tensor it reads is a program
    input, as it is or through the boundary's quantize. A value is read if an earlier call wrote it
    (a kernel call's result is its last argument) or it is an input; the rest are the call's outputs."""
    plan = _forward(info)
    if plan is None:
        return []
    written = set(plan.inputs)
    from_inputs = set(plan.inputs)
    out = []
    for c in plan.calls:
        if c.kind == "kernel":
            if c.args:
                written.add(c.args[-1])
                if _kernel(plan, c.index) == QUANTIZE and c.args[0] in plan.inputs:
                    from_inputs.add(c.args[-1])
            continue
        read = [a for a in c.args if a in written]
        out.append(bool(read) and all(a in from_inputs for a in read))
        written.update(c.args)
    return out


def _transposes(vela: dict[str, Any], fed: list[bool]) -> tuple[int, int, float] | None:
    """(operators, cycles, ms) of the partitions the program's inputs feed; None where not recorded."""
    partitions = vela.get("partitions")
    if not isinstance(partitions, list) or len(partitions) != len(fed):
        return None
    operators = cycles = 0
    ms = 0.0
    for partition, by_inputs in zip(partitions, fed, strict=True):
        if not by_inputs:
            continue
        rows = partition.get("input_transposes") if isinstance(partition, dict) else None
        if not isinstance(rows, list):
            return None
        part = sum(int(r["cycles"]) for r in rows)
        operators, cycles = operators + len(rows), cycles + part
        clock = partition.get("core_clock_hz")
        ms += part / clock * 1000 if clock else 0.0
    return operators, cycles, ms


def saving(m: Manifest, info: PteInfo, layouts: Sequence[str]) -> Saving | None:
    """What ``--io int8`` and ``--layout nhwc`` would save the build ``m`` of the .pte ``info`` (a model
    that offers ``layouts``); None where they save nothing, the build uses them, or it has no NPU."""
    if m.vela is None:
        return None
    io = m.io or {}
    # a16w8 takes --io float only (precision.py).
    integer_io = io.get("mode", "float") == "float" and m.precision.split("+")[0] == "int8"
    cpu = boundary_kernels(info) if integer_io else 0
    suggested = "int8" if cpu else None
    if io.get("layout", "nchw") == "nchw" and "nhwc" in layouts:
        found = _transposes(m.vela, input_partitions(info))
        if found is None:
            return Saving(suggested, "nhwc", cpu)
        if found[0]:
            return Saving(suggested, "nhwc", cpu, *found)
    return Saving(suggested, None, cpu) if cpu else None
