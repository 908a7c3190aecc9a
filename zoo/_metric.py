"""How a model is judged on its labelled evaluation set: a :class:`Metric` a plugin declares
(``ModelSpec.metrics``) and the check of an allowed drop it and ``zoo tune --max-drop`` share.
Nothing here imports torch."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from zoo._board import NAME as _NAME

__all__ = ["Metric", "MetricFn", "max_drop_problem"]

MetricFn = Callable[[Sequence[Sequence[Any]], Sequence[Any]], float]
"""``fn(outputs, labels)``: ``outputs[i]`` is the list of the model's output tensors on
evaluation sample ``i`` (nested outputs flattened), ``labels[i]`` that item's label."""


def max_drop_problem(drop: object) -> str | None:
    """Why ``drop`` cannot be a metric's allowed drop (a Metric's, or ``zoo tune --max-drop``'s), or None."""
    if isinstance(drop, bool) or not isinstance(drop, (int, float)) or not math.isfinite(drop) or drop < 0:
        return f"max_drop must be a finite number ≥ 0 in the metric's unit, got {drop!r}"
    return None


@dataclass(frozen=True)
class Metric:
    """How a model is judged on its labelled ``evaluation`` set (or ``--eval-dir``).

    ``--verify`` computes ``fn`` on the float model's outputs and on the int8
    program's, records both, and fails when int8 is worse by more than
    ``max_drop``, in the metric's own unit (percentage points for ``zoo.top1``).
    zoo's evaluators (``zoo.top1``, ``zoo.roc_auc``, …) carry their unit and check
    each label before a build starts; a plain function works too.
    """

    name: str
    fn: MetricFn
    higher_is_better: bool
    max_drop: float
    description: str = ""
    """The data it is measured on, e.g. ``"300 held-out FSDD clips, 2 unseen speakers"``."""
    unit: str = ""
    """Empty: the evaluator's own (``zoo.top1``: ``"%"``)."""

    @property
    def unit_text(self) -> str:
        return self.unit or str(getattr(self.fn, "unit", ""))

    @property
    def drop_unit(self) -> str:
        """A drop of a percentage is in percentage points."""
        return " pp" if self.unit_text == "%" else self.unit_text

    def drop(self, float_value: float, int8_value: float) -> float:
        """How much worse the int8 figure is, in the metric's unit (negative: better)."""
        return float_value - int8_value if self.higher_is_better else int8_value - float_value

    def problems(self) -> list[str]:
        out: list[str] = []
        if not isinstance(self.name, str) or not _NAME.match(self.name):
            out.append(f"metric name {self.name!r} must be lower-case letters, digits, '-', '_' or '.'")
        if not callable(self.fn):
            out.append(f"metric {self.name!r}: fn is not callable")
        if not isinstance(self.higher_is_better, bool):
            out.append(f"metric {self.name!r}: higher_is_better must be True or False")
        if (problem := max_drop_problem(self.max_drop)) is not None:
            out.append(f"metric {self.name!r}: {problem}")
        return out

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "unit": self.unit_text, "higher_is_better": self.higher_is_better,
                "max_drop": self.max_drop, "description": self.description}
