"""Top-1 accuracy: classifiers and keyword spotters."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from zoo.registry.evaluators.base import Evaluator, check_class_index, integer, output


def predicted_class(sample_outputs: Sequence[Any]) -> int | None:
    """The argmax of the first output, the lowest index on a tie; None for a constant
    output, which predicts nothing (a program that lost its signal must not score
    the label that happens to be class 0)."""
    scores = output(sample_outputs).reshape(-1)
    if scores.size < 2:
        raise ValueError(f"top-1 needs a vector of class scores, the model's first output has {scores.size} element(s)")
    if bool((scores == scores[0]).all()):
        return None
    return int(scores.argmax())


def _top1(outputs: Sequence[Sequence[Any]], labels: Sequence[Any]) -> float:
    correct = 0
    for sample_outputs, label in zip(outputs, labels, strict=True):
        guess = predicted_class(sample_outputs)
        correct += int(guess is not None and guess == integer(label))
    return 100.0 * correct / len(labels)


top1 = Evaluator(
    "top1", _top1, unit="%", label_format="a class index (an int ≥ 0, not a class name)",
    check_label=check_class_index,
)
"""Top-1 accuracy in percent: the argmax of output 0 against an integer class label."""
