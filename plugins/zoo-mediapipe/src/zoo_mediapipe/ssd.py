"""MediaPipe's SSD anchors, box decoding and weighted non-maximum suppression (its
SsdAnchorsCalculator, TensorsToDetectionsCalculator and NonMaxSuppressionCalculator, as the
face, palm and pose detection graphs configure them). Pure Python at module level; numpy when decoding.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["AnchorOptions", "Detection", "anchors", "decode", "iou", "weighted_nms"]

Detection = tuple[float, float, float, float, float, int]
"""(x1, y1, x2, y2, score, class) in the input's pixels, as zoo's detection evaluators take it."""


@dataclass(frozen=True)
class AnchorOptions:
    """SsdAnchorsCalculatorOptions with ``fixed_anchor_size: true`` and one aspect ratio of 1.0
    plus the interpolated one: every anchor is 1×1 (normalised), two per cell per layer."""

    side: int
    strides: tuple[int, ...]
    offset: float = 0.5


def anchors(options: AnchorOptions) -> list[tuple[float, float]]:
    """Anchor centres (x, y), normalised to [0, 1], in the network's output order: layers of equal
    stride are merged (their anchors interleaved per cell), as MediaPipe's calculator does."""
    out: list[tuple[float, float]] = []
    layer = 0
    strides = options.strides
    while layer < len(strides):
        last = layer
        while last < len(strides) and strides[last] == strides[layer]:
            last += 1
        per_cell = 2 * (last - layer)
        cells = math.ceil(options.side / strides[layer])
        for y in range(cells):
            for x in range(cells):
                centre = ((x + options.offset) / cells, (y + options.offset) / cells)
                out += [centre] * per_cell
        layer = last
    return out


def iou(a: Sequence[float], b: Sequence[float]) -> float:
    w = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    h = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = w * h
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def decode(regressors: Any, scores: Any, centres: Sequence[tuple[float, float]], side: int, *,
           score_threshold: float, nms_threshold: float, top: int | None = None) -> list[Detection]:
    """One sample's raw ``(1, N, 4 + 2K)`` regressors and ``(1, N, 1)`` logits as detections in pixels:
    x, y, w, h each over ``side`` (MediaPipe's x/y/w/h_scale) around the anchor, score the logit's
    sigmoid (clipped at ±100), those at ``score_threshold`` or above (only the ``top`` best, if
    given) merged by `weighted_nms`."""
    import numpy as np

    raw = np.asarray(regressors, dtype=np.float64).reshape(len(centres), -1)
    logits = np.clip(np.asarray(scores, dtype=np.float64).reshape(len(centres)), -100.0, 100.0)
    probability = 1.0 / (1.0 + np.exp(-logits))
    anchor = np.asarray(centres, dtype=np.float64)
    cx = raw[:, 0] / side + anchor[:, 0]
    cy = raw[:, 1] / side + anchor[:, 1]
    w, h = raw[:, 2] / side, raw[:, 3] / side
    boxes = np.stack([cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2], axis=1) * side
    keep = np.flatnonzero(probability >= score_threshold)
    if top is not None:
        keep = keep[np.argsort(-probability[keep], kind="stable")[:top]]
    found = [(*(float(v) for v in boxes[i]), float(probability[i]), 0) for i in keep]
    return weighted_nms(found, nms_threshold)  # type: ignore[arg-type]


def weighted_nms(found: Sequence[Detection], threshold: float) -> list[Detection]:
    """MediaPipe's WEIGHTED suppression: the best remaining box takes every box overlapping it by more
    than ``threshold`` (IoU), its corners becoming their score-weighted mean, its score its own."""
    remaining = sorted(found, key=lambda d: -d[4])
    out: list[Detection] = []
    while remaining:
        best, others = remaining[0], remaining[1:]
        group = [best, *(d for d in others if iou(best, d) > threshold)]
        rest = [d for d in others if iou(best, d) <= threshold]
        total = sum(d[4] for d in group)
        corners = [sum(d[k] * d[4] for d in group) / total for k in range(4)]
        out.append((corners[0], corners[1], corners[2], corners[3], best[4], best[5]))
        remaining = rest
    return out
