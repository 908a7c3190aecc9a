"""Box decoding and non-maximum suppression on the CPU: the pack's documented reference for what
follows a detector's NPU part. numpy only, imported inside the functions.

Boxes are ``(x1, y1, x2, y2)`` in pixels of the model's input; a detection is
``(x1, y1, x2, y2, score, class)``, the format zoo's ``recall_at``/``map_at`` read.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

Detection = tuple[float, float, float, float, float, int]

SSD_WEIGHTS = (10.0, 10.0, 5.0, 5.0)
"""torchvision's SSD box coder weights: the regression is (dx·10, dy·10, log(dw)·5, log(dh)·5)."""
BBOX_CLIP = 4.135166556742356
"""log(1000 / 16): torchvision's clamp on log-scale width and height before exp."""


def iou_matrix(a: Any, b: Any) -> Any:
    """Pairwise IoU of (n, 4) and (m, 4) boxes as an (n, m) array; 0 where the union is empty."""
    import numpy as np

    a, b = np.asarray(a, dtype=np.float64).reshape(-1, 4), np.asarray(b, dtype=np.float64).reshape(-1, 4)
    w = np.clip(np.minimum(a[:, None, 2], b[None, :, 2]) - np.maximum(a[:, None, 0], b[None, :, 0]), 0, None)
    h = np.clip(np.minimum(a[:, None, 3], b[None, :, 3]) - np.maximum(a[:, None, 1], b[None, :, 1]), 0, None)
    inter = w * h
    area_a = (a[:, 2] - a[:, 0]) * (a[:, 3] - a[:, 1])
    area_b = (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])
    union = area_a[:, None] + area_b[None, :] - inter
    return np.where(union > 0, inter / np.where(union > 0, union, 1.0), 0.0)


def nms(boxes: Any, scores: Any, threshold: float) -> list[int]:
    """Greedy NMS: indices kept, highest score first (ties: lower index first); a box is dropped
    when its IoU with a kept box is above ``threshold``."""
    import numpy as np

    scores = np.asarray(scores, dtype=np.float64).reshape(-1)
    order = sorted(range(scores.size), key=lambda i: (-scores[i], i))
    overlaps = iou_matrix(boxes, boxes)
    kept: list[int] = []
    suppressed = np.zeros(scores.size, dtype=bool)
    for i in order:
        if suppressed[i]:
            continue
        kept.append(i)
        suppressed |= overlaps[i] > threshold
    return kept


def batched_nms(boxes: Any, scores: Any, classes: Any, threshold: float) -> list[int]:
    """NMS within each class; indices kept, highest score first."""
    import numpy as np

    classes = np.asarray(classes).reshape(-1)
    scores = np.asarray(scores, dtype=np.float64).reshape(-1)
    boxes = np.asarray(boxes, dtype=np.float64).reshape(-1, 4)
    kept: list[int] = []
    for c in sorted(set(classes.tolist())):
        members = np.flatnonzero(classes == c)
        kept += [int(members[k]) for k in nms(boxes[members], scores[members], threshold)]
    return sorted(kept, key=lambda i: (-scores[i], i))


def select(boxes: Any, scores: Any, classes: Any, *, score_threshold: float, iou_threshold: float,
           keep: int) -> list[Detection]:
    """Candidates above ``score_threshold``, per-class NMS, the ``keep`` best."""
    import numpy as np

    boxes = np.asarray(boxes, dtype=np.float64).reshape(-1, 4)
    scores = np.asarray(scores, dtype=np.float64).reshape(-1)
    classes = np.asarray(classes).reshape(-1)
    live = np.flatnonzero(scores > score_threshold)
    kept = batched_nms(boxes[live], scores[live], classes[live], iou_threshold)[:keep]
    return [(*(float(v) for v in boxes[live[k]]), float(scores[live[k]]), int(classes[live[k]])) for k in kept]  # type: ignore[misc]


def decode_ssd(regression: Any, logits: Any, anchors: Any, size: tuple[int, int], *, score_threshold: float = 0.01,
               iou_threshold: float = 0.55, keep: int = 10, candidates: int = 300,
               background: int = 0) -> list[Detection]:
    """torchvision's SSD postprocessing: ``regression`` (A, 4) against ``anchors`` (A, 4, x1 y1 x2 y2),
    softmax over ``logits`` (A, C), boxes clipped to the image ``size`` (height, width); per
    non-background class the ``candidates`` best anchors, then per-class NMS and the ``keep`` best."""
    import numpy as np

    regression = np.asarray(regression, dtype=np.float64).reshape(-1, 4)
    logits = np.asarray(logits, dtype=np.float64).reshape(regression.shape[0], -1)
    anchors = np.asarray(anchors, dtype=np.float64).reshape(-1, 4)
    widths, heights = anchors[:, 2] - anchors[:, 0], anchors[:, 3] - anchors[:, 1]
    cx, cy = anchors[:, 0] + 0.5 * widths, anchors[:, 1] + 0.5 * heights
    wx, wy, ww, wh = SSD_WEIGHTS
    px = regression[:, 0] / wx * widths + cx
    py = regression[:, 1] / wy * heights + cy
    pw = np.exp(np.minimum(regression[:, 2] / ww, BBOX_CLIP)) * widths
    ph = np.exp(np.minimum(regression[:, 3] / wh, BBOX_CLIP)) * heights
    h, w = size
    boxes = np.stack([np.clip(px - pw / 2, 0, w), np.clip(py - ph / 2, 0, h),
                      np.clip(px + pw / 2, 0, w), np.clip(py + ph / 2, 0, h)], axis=1)
    shifted = logits - logits.max(axis=1, keepdims=True)
    probs = np.exp(shifted) / np.exp(shifted).sum(axis=1, keepdims=True)
    picked_boxes, picked_scores, picked_classes = [], [], []
    for c in range(probs.shape[1]):
        if c == background:
            continue
        # torchvision's per-class cut before NMS: the best `candidates` anchors (ties: lower index).
        best = np.lexsort((np.arange(probs.shape[0]), -probs[:, c]))[:candidates]
        picked_boxes.append(boxes[best])
        picked_scores.append(probs[best, c])
        picked_classes.append(np.full(best.size, c))
    return select(np.concatenate(picked_boxes), np.concatenate(picked_scores), np.concatenate(picked_classes),
                  score_threshold=score_threshold, iou_threshold=iou_threshold, keep=keep)


def _sigmoid(x: Any) -> Any:
    import numpy as np

    return 1.0 / (1.0 + np.exp(-x))


def yolo_candidates(grid: Any, anchors: Sequence[tuple[float, float]], stride: int) -> tuple[Any, Any, Any]:
    """One YOLOv2/v3-style head: ``grid`` (A·(5 + C), H, W), per anchor (tx, ty, tw, th, objectness,
    class logits); centre ``(sigmoid(t) + cell) · stride``, size ``anchor · exp(t)`` in pixels,
    clipped to the grid's image; score objectness · sigmoid(class), the best class per box."""
    import numpy as np

    grid = np.asarray(grid, dtype=np.float64)
    grid = grid.reshape(grid.shape[-3:])
    a = len(anchors)
    per, height, width = grid.shape[0] // a, grid.shape[1], grid.shape[2]
    if per * a != grid.shape[0] or per < 6:
        raise ValueError(f"a YOLO grid of {grid.shape[0]} channels does not hold {a} anchors × (5 + classes)")
    t = grid.reshape(a, per, height, width)
    cells_y, cells_x = np.meshgrid(np.arange(height), np.arange(width), indexing="ij")
    anchor = np.asarray(anchors, dtype=np.float64)
    cx = (_sigmoid(t[:, 0]) + cells_x) * stride
    cy = (_sigmoid(t[:, 1]) + cells_y) * stride
    bw = anchor[:, 0, None, None] * np.exp(np.minimum(t[:, 2], 8.0))
    bh = anchor[:, 1, None, None] * np.exp(np.minimum(t[:, 3], 8.0))
    boxes = np.stack([cx - bw / 2, cy - bh / 2, cx + bw / 2, cy + bh / 2], axis=-1).reshape(-1, 4)
    boxes = np.clip(boxes, 0, [width * stride, height * stride] * 2)
    scores = (_sigmoid(t[:, 4:5]) * _sigmoid(t[:, 5:])).transpose(0, 2, 3, 1).reshape(-1, per - 5)
    best = scores.argmax(axis=1)
    return boxes, scores[np.arange(best.size), best], best


def decode_yolo(heads: Sequence[tuple[Any, Sequence[tuple[float, float]], int]], *, score_threshold: float = 0.01,
                iou_threshold: float = 0.45, keep: int = 10) -> list[Detection]:
    """Every head's candidates (``(grid, anchors, stride)`` each, see :func:`yolo_candidates`),
    then per-class NMS over all of them."""
    import numpy as np

    parts = [yolo_candidates(grid, anchors, stride) for grid, anchors, stride in heads]
    return select(np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts]),
                  np.concatenate([p[2] for p in parts]), score_threshold=score_threshold,
                  iou_threshold=iou_threshold, keep=keep)


def decode_pnet(regression: Any, probs: Any, *, stride: int = 2, cell: int = 12, score_threshold: float = 0.6,
                iou_threshold: float = 0.5, keep: int = 10) -> list[Detection]:
    """MTCNN's P-Net at one scale (facenet-pytorch's ``generateBoundingBox``): each cell of the
    (4, H, W) ``regression`` and (2, H, W) face ``probs`` is the 12×12 window at 2·cell,
    shifted by the regression × 12; class 1 (face)."""
    import numpy as np

    regression = np.asarray(regression, dtype=np.float64).reshape(4, *np.shape(probs)[-2:])
    face = np.asarray(probs, dtype=np.float64).reshape(2, *regression.shape[1:])[1]
    ys, xs = np.meshgrid(np.arange(face.shape[0]), np.arange(face.shape[1]), indexing="ij")
    x1, y1 = xs * stride, ys * stride
    boxes = np.stack([x1 + regression[0] * cell, y1 + regression[1] * cell,
                      x1 + cell + regression[2] * cell, y1 + cell + regression[3] * cell], axis=-1).reshape(-1, 4)
    return select(boxes, face.reshape(-1), np.ones(face.size, dtype=np.int64), score_threshold=score_threshold,
                  iou_threshold=iou_threshold, keep=keep)


def decode_refine(regression: Any, probs: Any, side: int) -> list[Detection]:
    """MTCNN's R-Net or O-Net on one ``side``×``side`` window: the window refined by the
    regression × side, scored by the face probability, class 1 if face beats no-face, else 0."""
    import numpy as np

    r = np.asarray(regression, dtype=np.float64).reshape(4)
    p = np.asarray(probs, dtype=np.float64).reshape(2)
    box = (r[0] * side, r[1] * side, side + r[2] * side, side + r[3] * side)
    x1, x2 = sorted((box[0], box[2]))
    y1, y2 = sorted((box[1], box[3]))
    return [(float(x1), float(y1), float(x2), float(y2), float(p[1]), int(p[1] > p[0]))]
