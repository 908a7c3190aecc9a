"""What compiling one model for one target hands back: the canonical .pte and
everything learned while building it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from zoo.registry.numerics import NumericsResult


@dataclass
class CompileResult:
    pte: bytes
    """Canonical bytes: the emitter's output after a deserialize/serialize round trip."""
    tosa_graphs: list[bytes]
    """TOSA flatbuffer of each Ethos-U delegate in program order, as handed to Vela."""
    vela: dict[str, Any] | None
    """``vela_report.summarize`` of every partition; None for portable."""
    delegation: dict[str, Any]
    """The true CPU/NPU split, from ``get_delegation_info`` on the lowered graph:
    ``partitions`` (NPU delegates), ``npu_ops`` and ``cpu_ops`` (edge operators,
    not counting quantize/dequantize or getitem), ``cpu_op_names`` (sorted,
    unique, e.g. ``aten.avg_pool2d.default``), ``cpu_quantize_ops`` (the
    quantize/dequantize nodes left on the CPU) and ``npu_fraction``
    (npu_ops / (npu_ops + cpu_ops), 0.0 if both are 0)."""
    cpu_operators: list[str]
    """Kernels the runtime must provide, from the program's operator table,
    e.g. ``quantized_decomposed::quantize_per_tensor.out``."""
    calibration: dict[str, Any]
    """``samples`` used and ``sha256`` over their dtypes, shapes and bytes;
    ``{"samples": 0, "sha256": None}`` for portable (no quantization)."""
    warnings: list[str] = field(default_factory=list)
    numerics: NumericsResult | None = None
    """The numerical check (``compile_model(verify=True)``): Ethos-U on the TOSA
    reference model before serialization, portable on the host runtime after."""
    memory_fit: dict[str, Any] | None = None
    """``memory_fit.fit_record`` for a target with an SRAM budget."""
    io: dict[str, Any] | None = None
    """``io_boundary.record``: the program's inputs and outputs as the .pte holds them."""
