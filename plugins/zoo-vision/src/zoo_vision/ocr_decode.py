"""What the CPU does after the OCR models' NPU part: DB box extraction for detection, CTC greedy
decoding for recognition, and the metrics that judge them. numpy (and scipy.ndimage, which
scikit-learn brings) imported inside the functions.

``db_boxes`` follows rapidocr 1.4.4's ``DBPostProcess`` (threshold 0.3, 2×2 dilation, box score
0.5, unclip ratio 1.6) for axis-aligned text: connected components instead of cv2's contours,
their bounding rectangles instead of minimum-area rectangles, and the rectangle grown by the
unclip distance area·ratio/perimeter on each side instead of pyclipper's rounded offset.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from zoo import Evaluator, edit_distance

Box = tuple[float, float, float, float, float, int]
THRESH = 0.3
BOX_THRESH = 0.5
UNCLIP_RATIO = 1.6
MIN_SIZE = 3


def db_boxes(probability: Any, *, thresh: float = THRESH, box_thresh: float = BOX_THRESH,
             unclip_ratio: float = UNCLIP_RATIO) -> list[Box]:
    """Text boxes ``(x1, y1, x2, y2, score, 0)`` in pixels of the (…, H, W) probability map,
    highest score first (ties: top to bottom, left to right)."""
    import numpy as np
    from scipy import ndimage  # type: ignore[import-untyped]

    pred = np.asarray(probability, dtype=np.float64)
    pred = pred.reshape(pred.shape[-2:])
    height, width = pred.shape
    mask = pred > thresh
    # cv2.dilate with a 2×2 kernel anchored at (1, 1): each pixel takes the max of itself and the
    # pixels above, to the left and above-left.
    grown = mask.copy()
    grown[1:] |= mask[:-1]
    grown[:, 1:] |= mask[:, :-1]
    grown[1:, 1:] |= mask[:-1, :-1]
    labels, _ = ndimage.label(grown, structure=np.ones((3, 3), dtype=bool))
    out: list[Box] = []
    for found in ndimage.find_objects(labels):
        if found is None:
            continue
        rows, cols = found
        # Corners at the centres of the extreme pixels, as cv2's contour points are.
        x1, x2, y1, y2 = cols.start, cols.stop - 1, rows.start, rows.stop - 1
        w, h = x2 - x1, y2 - y1
        if min(w, h) < MIN_SIZE:
            continue
        score = float(pred[y1 : y2 + 1, x1 : x2 + 1].mean())
        if score < box_thresh:
            continue
        d = w * h * unclip_ratio / (2 * (w + h))
        box = (x1 - d, y1 - d, x2 + d, y2 + d)
        if min(box[2] - box[0], box[3] - box[1]) < MIN_SIZE + 2:
            continue
        clipped = (min(max(round(box[0]), 0), width), min(max(round(box[1]), 0), height),
                   min(max(round(box[2]), 0), width), min(max(round(box[3]), 0), height))
        out.append((*(float(v) for v in clipped), score, 0))  # type: ignore[arg-type]
    return sorted(out, key=lambda b: (-b[4], b[1], b[0]))


def decode_det(sample_outputs: Sequence[Any]) -> list[Box]:
    """The probability map (output 0, (1, 1, H, W)) to boxes."""
    first = sample_outputs[0]
    return db_boxes(first.detach().cpu().numpy() if hasattr(first, "detach") else first)


def alphabet(characters: Sequence[str]) -> list[str]:
    """PaddleOCR's CTC classes: the blank at 0, the dictionary, then a space."""
    return ["<blank>", *characters, " "]


def _check_text(label: Any) -> str | None:
    return None if isinstance(label, str) and label else f"{label!r} is not a non-empty string"


def char_accuracy(decode: Callable[[Sequence[Any]], str]) -> Evaluator:
    """Character accuracy in percent: 100 · (1 − Σ edit distance / Σ truth length)."""

    def compute(outputs: Sequence[Sequence[Any]], labels: Sequence[Any]) -> float:
        errors = sum(edit_distance(decode(o), t) for o, t in zip(outputs, labels, strict=True))
        return 100.0 * (1.0 - errors / sum(len(t) for t in labels))

    return Evaluator("char_accuracy", compute, unit="%", label_format="the line's text (a non-empty str)",
                     check_label=_check_text)
