"""Detection metrics against the float model's own decoded boxes.

The sample photos have no box labels, so a detector is judged by how many of the float
model's decoded boxes the int8 program finds again (zoo's ``recall_at`` at IoU 0.5, same
class). zoo hands an evaluator made with ``wants_float`` the float model's outputs on the
same samples, so the reference boxes are decoded from those; the float figure is then the
float boxes against themselves, 100 by construction.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from zoo import Evaluator, recall_at

Decoder = Callable[[Sequence[Any]], Sequence[Sequence[float]]]


def _no_label(label: Any) -> str | None:
    return None if label is None else f"{label!r} is a label, but this metric compares with the float model's boxes"


def recall_vs_float(name: str, decode: Decoder, threshold: float = 0.5) -> Evaluator:
    """Recall in percent of the float model's decoded boxes among those decoded from the outputs."""
    recall = recall_at(decode, threshold)

    def compute(outputs: Sequence[Sequence[Any]], labels: Sequence[Any], *,
                reference: Sequence[Sequence[Any]]) -> float:
        truths = [[(*box[:4], box[5]) for box in decode(list(flat))] for flat in reference]
        if not any(truths):
            raise ValueError(f"{name}'s float model finds no box on any sample: lower the decoder's score threshold")
        return recall.compute(outputs, truths)

    return Evaluator(f"recall@{threshold:g} vs float", compute, unit="%", wants_float=True,
                     label_format="None (the float model's own boxes are the reference)", check_label=_no_label)
