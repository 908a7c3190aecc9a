"""A declared metric as ``--verify`` measured it, typed: ``art.manifest.metric("top1")``."""

from __future__ import annotations

import builtins
import math
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class MeasuredMetric:
    """One metric on the same samples, for the float model and for the program."""

    name: str
    unit: str
    float: builtins.float
    """The float model's figure."""
    program: builtins.float
    drop: builtins.float
    """How much worse the program is, in the metric's own unit (negative: better)."""
    max_drop: builtins.float
    passed: bool
    dataset: str
    samples: int
    program_kind: str
    """What ran as the program, e.g. ``TOSA reference model (bit-exact with the NPU)``."""

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> MeasuredMetric:
        def num(name: str) -> builtins.float:
            value = data.get(name)
            return float(value) if isinstance(value, int | float) else math.nan

        return cls(
            name=str(data.get("name", "")), unit=str(data.get("unit") or ""), float=num("float"),
            program=num("program"), drop=num("drop"), max_drop=num("max_drop"), passed=data.get("passed") is True,
            dataset=str(data.get("dataset") or ""), samples=int(data.get("samples") or 0),
            program_kind=str(data.get("program_kind") or ""),
        )
