"""Mean intersection over union for semantic segmentation."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from zoo.registry.evaluators.base import Evaluator, array, output


def _check_mask(label: Any) -> str | None:
    try:
        a = array(label)
    except (TypeError, ValueError) as e:
        return f"{type(label).__name__} is not a mask of class indices ({e})"
    if a.ndim != 2:
        return f"a mask must be 2-D (height, width) class indices, got shape {list(a.shape)}"
    return None if bool((a == a.round()).all() and (a >= 0).all()) else "a mask must hold class indices ≥ 0"


def miou(num_classes: int, ignore_index: int | None = 255) -> Evaluator:
    """mIoU in percent over ``num_classes``: output 0 holds class scores ``([1,] C, H, W)``,
    each label an ``(H, W)`` mask of class indices; pixels labelled ``ignore_index`` do
    not count. A class absent from both prediction and labels is left out of the mean."""

    def compute(outputs: Sequence[Sequence[Any]], labels: Sequence[Any]) -> float:
        import numpy as np

        confusion = np.zeros((num_classes, num_classes), dtype=np.int64)
        for i, (sample_outputs, label) in enumerate(zip(outputs, labels, strict=True)):
            scores, mask = output(sample_outputs), array(label).astype(np.int64)
            scores = scores.reshape(scores.shape[-3:]) if scores.ndim == 4 and scores.shape[0] == 1 else scores
            if scores.ndim != 3 or scores.shape[0] != num_classes or scores.shape[1:] != mask.shape:
                raise ValueError(f"sample {i}: output 0 has shape {list(scores.shape)}, expected "
                                 f"[{num_classes}, {', '.join(map(str, mask.shape))}] to match the mask")
            keep = mask != ignore_index if ignore_index is not None else np.ones(mask.shape, dtype=bool)
            truth, guess = mask[keep], scores.argmax(axis=0)[keep]
            if truth.size and truth.max() >= num_classes:
                raise ValueError(f"sample {i}: the mask holds class {int(truth.max())}, beyond {num_classes} classes")
            np.add.at(confusion, (truth, guess), 1)
        hits = np.diag(confusion)
        union = confusion.sum(0) + confusion.sum(1) - hits
        present = union > 0
        if not present.any():
            raise ValueError("mIoU: no labelled pixel to measure")
        return float(100.0 * (hits[present] / union[present]).mean())

    return Evaluator("miou", compute, unit="%", label_format="an (H, W) mask of class indices", check_label=_check_mask)
