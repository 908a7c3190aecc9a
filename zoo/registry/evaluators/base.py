"""What every evaluator shares: its unit, the label check that runs before a build,
and turning the model's outputs into numpy arrays.

numpy is imported inside functions: plugins name evaluators at registration,
which every zoo command does, and ``zoo list`` must stay light.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

LabelCheck = Callable[[Any], "str | None"]
"""Returns what is wrong with one label, or None if it is fine."""


class Evaluator:
    """A metric's function, ``fn(outputs, labels) -> float``, with its unit and a
    check of one label that zoo runs on every evaluation item before it builds.

    A plain class, not a dataclass: plugins build these at registration, which
    every zoo command runs, and a dataclass costs a millisecond to define.
    """

    __slots__ = ("check_label", "compute", "label_format", "name", "unit", "wants_float", "wants_samples")

    def __init__(self, name: str, compute: Callable[..., float], *, unit: str, label_format: str,
                 check_label: LabelCheck, wants_samples: bool = False, wants_float: bool = False) -> None:
        self.name = name
        self.compute = compute
        self.unit = unit
        """``"%"`` for percent; empty for a plain number such as ROC-AUC's 0–1."""
        self.label_format = label_format
        """What a label must be, in words: error messages quote it."""
        self.check_label = check_label
        self.wants_samples = wants_samples
        """``compute`` takes the samples too, ``compute(outputs, labels, samples)``: a score
        made from the input and the output, like an autoencoder's reconstruction error."""
        self.wants_float = wants_float
        """``compute`` also takes ``reference=``, the float model's outputs on the same
        samples: a score against what float does where no labels exist, like a detector's
        recall of the float model's own boxes. The float figure is then the reference's
        score against itself."""

    def __call__(self, outputs: Sequence[Sequence[Any]], labels: Sequence[Any],
                 samples: Sequence[Sequence[Any]] | None = None,
                 reference: Sequence[Sequence[Any]] | None = None) -> float:
        if len(outputs) != len(labels):
            raise ValueError(f"{self.name}: {len(outputs)} outputs for {len(labels)} labels")
        if not outputs:
            raise ValueError(f"{self.name}: no samples to evaluate")
        args: list[Any] = [outputs, labels]
        if self.wants_samples:
            if samples is None or len(samples) != len(outputs):
                raise ValueError(f"{self.name} needs the {len(outputs)} samples beside their outputs")
            args.append(samples)
        if self.wants_float:
            if reference is None or len(reference) != len(outputs):
                raise ValueError(f"{self.name} needs the float model's outputs on the {len(outputs)} samples")
            return float(self.compute(*args, reference=reference))
        return float(self.compute(*args))

    def __repr__(self) -> str:
        return f"zoo.{self.name}"


def array(value: Any) -> Any:
    """A tensor, array or list as a float64 numpy array."""
    import numpy as np

    if hasattr(value, "detach"):
        value = value.detach().cpu().numpy()
    return np.asarray(value, dtype=np.float64)


def output(sample_outputs: Sequence[Any], index: int = 0) -> Any:
    """One output of one sample, as a float64 array."""
    if not len(sample_outputs) > index:
        raise ValueError(f"the model gave {len(sample_outputs)} output(s); the evaluator reads output {index}")
    return array(sample_outputs[index])


def integer(value: Any) -> int | None:
    """A label as a Python int if it is an integer (int, numpy or 0-d tensor), else None."""
    if isinstance(value, bool):
        return None
    if hasattr(value, "item") and getattr(value, "ndim", None) == 0:  # a numpy scalar or a 0-d tensor
        value = value.item()
    if isinstance(value, int):
        return value
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    return None


def check_class_index(label: Any) -> str | None:
    index = integer(label)
    if index is None:
        return f"{label!r} ({type(label).__name__}) is not a class index"
    return None if index >= 0 else f"{index} is a negative class index"


def check_array(label: Any) -> str | None:
    try:
        a = array(label)
    except (TypeError, ValueError) as e:
        return f"{type(label).__name__} is not an array of numbers ({e})"
    return None if a.size else "an empty array"
