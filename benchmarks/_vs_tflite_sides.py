"""The figures ``benchmarks/vs_tflite.py`` compares, and their JSON: Vela's per-layer rows (``Layer``),
one Vela run (``VelaRun``) and one side of a comparison (``Side``: zoo's program or the TFLite flow's)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = ["NOT_BUILT", "Layer", "Side", "VelaRun", "rows_from_json", "rows_json", "side_from_json", "side_json"]

NOT_BUILT = "not built (--no-defaults)"
_SAME_KIND = {"FullyConnected": "Conv2D"}


@dataclass(frozen=True)
class Layer:
    """One row of Vela's per-layer CSV (``--verbose-performance``)."""

    partition: int
    original: str
    """The operator as Vela read it (TFLite's name, also for a TOSA graph)."""
    op: str
    """Vela's own operator after its graph rewrites (``NNG Operator``)."""
    cycles: int
    npu_cycles: int
    macs: int
    name: str
    activation: str = ""
    """The activation Vela fused into it (its own 0-cycle row in the CSV), e.g. ``Relu``."""

    @property
    def key(self) -> tuple[str, int]:
        """What pairs it with a layer of the other program: Vela runs a fully connected layer as a
        1×1 convolution on a TOSA graph, so the two are one kind here."""
        return (_SAME_KIND.get(self.op, self.op), self.macs)


@dataclass
class VelaRun:
    total: dict[str, Any]
    layers: list[Layer]
    flags: list[str]


@dataclass
class Side:
    """One program's figures; ``error`` instead where it could not be built."""

    label: str
    vela: VelaRun | None = None
    cpu_ops: int = 0
    input_quant: str = ""
    seconds: float = 0.0
    error: str | None = None
    notes: list[str] = field(default_factory=list)
    metrics: list[dict[str, Any]] = field(default_factory=list)
    """The model's declared metrics, float and int8 program (``_vs_tflite_metrics.py``); empty when not measured."""


def side_json(side: Side) -> dict[str, Any]:
    return asdict(side)


def side_from_json(data: dict[str, Any]) -> Side:
    data = dict(data)
    vela = data.pop("vela")
    run = VelaRun(vela["total"], [Layer(**x) for x in vela["layers"]], vela["flags"]) if vela else None
    return Side(**data, vela=run)


def rows_json(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: side_json(v) if isinstance(v, Side) else v for k, v in r.items()} for r in rows]


def rows_from_json(data: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: side_from_json(r[k]) if k in ("best", "defaults", "tflite") else v for k, v in r.items()} for r in data]


