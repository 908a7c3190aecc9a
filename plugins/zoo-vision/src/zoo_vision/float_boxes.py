"""Detection metrics against the float model's own decoded boxes.

The sample photos have no box labels, so a detector is judged by how many of the float
model's decoded boxes the int8 program finds again (zoo's ``recall_at`` at IoU 0.5, same class).
A ``Dataset`` cannot know which weights variant is being built, so the boxes are not labels:
each model's ``build`` hands its float model to :func:`remember`, and the evaluator, which
sees the samples, runs that model on them. zoo builds and then measures in one process, so
the model remembered is the one being measured; the float figure is then 100 by
construction, and anything else means the float model changed under the lowering.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from zoo import Evaluator, recall_at

Decoder = Callable[[Sequence[Any]], Sequence[Sequence[float]]]

_built: dict[str, Any] = {}


def remember(name: str, model: Any) -> Any:
    """Keep ``model`` as ``name``'s float reference and return it (build's last step)."""
    _built[name] = model
    return model


def _no_label(label: Any) -> str | None:
    return None if label is None else f"{label!r} is a label, but this metric compares with the float model's boxes"


def recall_vs_float(name: str, decode: Decoder, threshold: float = 0.5) -> Evaluator:
    """Recall in percent of the float model's decoded boxes among those decoded from the outputs."""
    recall = recall_at(decode, threshold)

    def compute(outputs: Sequence[Sequence[Any]], labels: Sequence[Any], samples: Sequence[Sequence[Any]]) -> float:
        import torch

        model = _built.get(name)
        if model is None:
            raise ValueError(f"{name}'s float model was not built in this process, so there are no boxes to compare")
        truths = []
        with torch.no_grad():
            for sample in samples:
                out = model(*sample)
                flat = list(out) if isinstance(out, (tuple, list)) else [out]
                truths.append([(*box[:4], box[5]) for box in decode(flat)])
        if not any(truths):
            raise ValueError(f"{name}'s float model finds no box on any sample: lower the decoder's score threshold")
        return recall.compute(outputs, truths)

    return Evaluator(f"recall@{threshold:g} vs float", compute, unit="%", wants_samples=True,
                     label_format="None (the float model's own boxes are the reference)", check_label=_no_label)
