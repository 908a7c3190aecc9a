"""Recall, precision and mean average precision at an IoU threshold, on lists of boxes.

A detector's raw outputs need its own decoding (anchors, non-maximum suppression),
so the plugin gives ``decode``: one sample's outputs to ``[(x1, y1, x2, y2, score,
class), ...]``. Each label is that sample's true boxes, ``[(x1, y1, x2, y2, class), ...]``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from zoo.registry.evaluators.base import Evaluator

Box = Sequence[float]
Decoder = Callable[[Sequence[Any]], Sequence[Box]]


def iou(a: Box, b: Box) -> float:
    """Intersection over union of two (x1, y1, x2, y2) boxes."""
    w = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    h = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = w * h
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def _no_label(label: Any) -> str | None:
    return None if label is None else f"{label!r} is a label, but this metric compares with the float model's boxes"


def _check_boxes(label: Any) -> str | None:
    try:
        boxes = [tuple(float(v) for v in box) for box in label]
    except (TypeError, ValueError):
        return f"{type(label).__name__} is not a list of (x1, y1, x2, y2, class) boxes"
    bad = [b for b in boxes if len(b) != 5 or b[2] < b[0] or b[3] < b[1]]
    return f"{len(bad)} box(es) are not (x1, y1, x2, y2, class) with x2 ≥ x1, y2 ≥ y1" if bad else None


def matches(predicted: Sequence[Box], truth: Sequence[Box], threshold: float) -> list[tuple[float, int, bool]]:
    """Each prediction as (score, class, true positive): by score, highest first, each
    matched to the unmatched true box of its class it overlaps most, if that IoU ≥ threshold."""
    used = [False] * len(truth)
    out = []
    for p in sorted(predicted, key=lambda p: -p[4]):
        best, where = -1.0, -1
        for k, t in enumerate(truth):
            if not used[k] and int(t[4]) == int(p[5]):
                overlap = iou(p, t)
                if overlap >= threshold and overlap > best:
                    best, where = overlap, k
        if where >= 0:
            used[where] = True
        out.append((float(p[4]), int(p[5]), where >= 0))
    return out


def _gather(decode: Decoder, outputs: Sequence[Sequence[Any]], labels: Sequence[Any],
            threshold: float) -> tuple[list[tuple[float, int, bool]], dict[int, int]]:
    found: list[tuple[float, int, bool]] = []
    truths: dict[int, int] = {}
    for sample_outputs, label in zip(outputs, labels, strict=True):
        truth = [tuple(float(v) for v in box) for box in label]
        for t in truth:
            truths[int(t[4])] = truths.get(int(t[4]), 0) + 1
        found += matches([tuple(float(v) for v in p) for p in decode(sample_outputs)], truth, threshold)
    if not truths:
        raise ValueError("no true box in the labels, so there is nothing to find")
    return found, truths


def average_precision(found: Sequence[tuple[float, bool]], truths: int) -> float:
    """Area under the precision-recall curve with precision made monotone (VOC's all-point rule)."""
    ranked = sorted(found, key=lambda f: -f[0])
    points, tp = [], 0
    for n, (_, hit) in enumerate(ranked, 1):
        tp += int(hit)
        points.append((tp / truths, tp / n))
    area, best, previous_recall = 0.0, 0.0, 0.0
    envelope = []
    for recall, precision in reversed(points):
        best = max(best, precision)
        envelope.append((recall, best))
    for recall, precision in reversed(envelope):
        area += (recall - previous_recall) * precision
        previous_recall = recall
    return area


def recall_at(decode: Decoder, threshold: float = 0.5) -> Evaluator:
    """Recall in percent: the share of true boxes some prediction of their class finds at IoU ≥ threshold."""

    def compute(outputs: Sequence[Sequence[Any]], labels: Sequence[Any]) -> float:
        found, truths = _gather(decode, outputs, labels, threshold)
        return 100.0 * sum(hit for *_, hit in found) / sum(truths.values())

    return Evaluator(f"recall@{threshold:g}", compute, unit="%", label_format="a list of (x1, y1, x2, y2, class) boxes",
                     check_label=_check_boxes)


def precision_at(decode: Decoder, threshold: float = 0.5) -> Evaluator:
    """Precision in percent: the share of predictions that find a true box of their class at
    IoU ≥ threshold, each true box found once (a duplicate finds nothing); 0 with no prediction."""

    def compute(outputs: Sequence[Sequence[Any]], labels: Sequence[Any]) -> float:
        found, _ = _gather(decode, outputs, labels, threshold)
        return 100.0 * sum(hit for *_, hit in found) / len(found) if found else 0.0

    return Evaluator(f"precision@{threshold:g}", compute, unit="%",
                     label_format="a list of (x1, y1, x2, y2, class) boxes", check_label=_check_boxes)


def map_at(decode: Decoder, threshold: float = 0.5) -> Evaluator:
    """mAP in percent at IoU ≥ threshold, averaged over the classes that have true boxes."""

    def compute(outputs: Sequence[Sequence[Any]], labels: Sequence[Any]) -> float:
        found, truths = _gather(decode, outputs, labels, threshold)
        per_class = [average_precision([(s, hit) for s, c, hit in found if c == cls], n) for cls, n in truths.items()]
        return 100.0 * sum(per_class) / len(per_class)

    return Evaluator(f"map@{threshold:g}", compute, unit="%", label_format="a list of (x1, y1, x2, y2, class) boxes",
                     check_label=_check_boxes)


def recall_vs_float(name: str, decode: Decoder, threshold: float = 0.5) -> Evaluator:
    """Recall in percent of the float model's decoded boxes among those decoded from the outputs,
    same class, at IoU ≥ threshold: agreement with the float model where no labels have boxes.

    zoo hands an evaluator made with ``wants_float`` the float model's outputs on the same samples;
    the reference boxes are decoded from those, so the float figure is 100 by construction. Labels
    must be None. ``name`` (the model's) is in the error when the float model finds no box at all."""
    recall = recall_at(decode, threshold)

    def compute(outputs: Sequence[Sequence[Any]], labels: Sequence[Any], *,
                reference: Sequence[Sequence[Any]]) -> float:
        truths = [[(*box[:4], box[5]) for box in decode(list(flat))] for flat in reference]
        if not any(truths):
            raise ValueError(f"{name}'s float model finds no box on any sample: lower the decoder's score threshold")
        return recall.compute(outputs, truths)

    return Evaluator(f"recall@{threshold:g} vs float", compute, unit="%", wants_float=True,
                     label_format="None (the float model's own boxes are the reference)", check_label=_no_label)
