"""Character and word error rates for speech recognition, by edit distance."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from zoo.registry.evaluators.base import Evaluator, output

Decoder = Callable[[Sequence[Any]], str]
"""Turns one sample's outputs into its transcript."""


def edit_distance(a: Sequence[Any], b: Sequence[Any]) -> int:
    """Levenshtein distance: the fewest insertions, deletions and substitutions from a to b."""
    previous = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        current = [i]
        for j, y in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (x != y)))
        previous = current
    return previous[-1]


def ctc_greedy(alphabet: Sequence[str], blank: int = 0, class_axis: int = -1) -> Decoder:
    """A CTC greedy decoder of output 0: the best class per frame, repeats merged, blanks
    dropped; class ``i`` is ``alphabet[i]`` (the blank's entry is never used).
    ``class_axis`` is where the classes lie (Wav2Letter's ``(1, classes, frames)``: 1)."""

    def decode(sample_outputs: Sequence[Any]) -> str:
        import numpy as np

        scores = np.moveaxis(output(sample_outputs), class_axis, -1)
        if scores.shape[-1] != len(alphabet):
            raise ValueError(f"output 0 has {scores.shape[-1]} classes on axis {class_axis}, the alphabet {len(alphabet)}")
        best = scores.reshape(-1, scores.shape[-1]).argmax(axis=-1)
        kept = [int(k) for i, k in enumerate(best) if k != blank and (i == 0 or k != best[i - 1])]
        return "".join(alphabet[k] for k in kept)

    return decode


def _check_text(label: Any) -> str | None:
    return None if isinstance(label, str) else f"{label!r} ({type(label).__name__}) is not a transcript string"


def _error_rate(name: str, decode: Decoder, split: Callable[[str], Sequence[str]]) -> Evaluator:
    def compute(outputs: Sequence[Sequence[Any]], labels: Sequence[Any]) -> float:
        errors = total = 0
        for sample_outputs, label in zip(outputs, labels, strict=True):
            truth = split(label)
            errors += edit_distance(split(decode(sample_outputs)), truth)
            total += len(truth)
        if not total:
            raise ValueError(f"{name}: every reference transcript is empty, so there is nothing to measure against")
        return 100.0 * errors / total

    return Evaluator(name, compute, unit="%", label_format="the reference transcript (a str)", check_label=_check_text)


def char_error_rate(decode: Decoder) -> Evaluator:
    """Character error rate in percent (lower is better): edit distance over the reference's length."""
    return _error_rate("cer", decode, list)


def word_error_rate(decode: Decoder) -> Evaluator:
    """Word error rate in percent (lower is better), words split on whitespace."""
    return _error_rate("wer", decode, str.split)
