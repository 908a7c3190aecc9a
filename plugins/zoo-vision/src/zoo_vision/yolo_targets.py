"""YOLOv3's training targets and loss for ``yolo-tiny-mcu``, the inverse of :func:`zoo_vision.boxes.yolo_candidates`.

Each true box goes to the one anchor of all heads whose shape fits it best (IoU of the two
sizes, centres aligned), in the cell holding its centre. A head's target is (anchors, 6, H, W):
objectness, the centre's offset in the cell (x, y, the sigmoid's target), log(size / anchor)
(w, h) and the class. The loss is the sum over the batch, divided by its size, of binary
cross-entropy on every objectness, and on the positive cells binary cross-entropy on the offsets
and the classes and 5 × squared error on the log sizes: elementwise operations and sums only,
so that training is deterministic. numpy and torch load inside the functions."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

Head = tuple[Sequence[tuple[float, float]], int]
"""One head's anchors (width, height in pixels) and stride."""
FIELDS = 6
BOX_WEIGHT = 5.0


def encode(boxes: Sequence[Sequence[tuple[float, ...]]], heads: Sequence[Head], side: int) -> Any:
    """Each canvas's ``(x1, y1, x2, y2, class)`` boxes as one float32 row: every head's
    (anchors, 6, H, W) target, flattened and concatenated."""
    import numpy as np

    shapes = [(len(anchors), FIELDS, side // stride, side // stride) for anchors, stride in heads]
    every = [(h, a, w, ht) for h, (anchors, _) in enumerate(heads) for a, (w, ht) in enumerate(anchors)]
    rows = []
    for canvas in boxes:
        grids = [np.zeros(shape, dtype=np.float32) for shape in shapes]
        for x1, y1, x2, y2, cls in canvas:
            w, h = x2 - x1, y2 - y1
            fits = [min(w, aw) * min(h, ah) / (w * h + aw * ah - min(w, aw) * min(h, ah)) for _, _, aw, ah in every]
            head, anchor, aw, ah = every[int(np.argmax(fits))]
            stride = heads[head][1]
            cx, cy = (x1 + x2) / 2 / stride, (y1 + y2) / 2 / stride
            col, row = min(int(cx), shapes[head][3] - 1), min(int(cy), shapes[head][2] - 1)
            grids[head][anchor, :, row, col] = (1.0, cx - col, cy - row, np.log(w / aw), np.log(h / ah), cls)
        rows.append(np.concatenate([g.reshape(-1) for g in grids]))
    return np.stack(rows)


def loss(outputs: Sequence[Any], targets: Any, heads: Sequence[Head], classes: int) -> Any:
    """The batch's loss (a scalar tensor): ``outputs`` are the heads' (N, anchors·(5 + classes), H, W) grids."""
    import torch
    from torch.nn import functional as F

    total, start = torch.zeros(()), 0
    for grid, (anchors, _) in zip(outputs, heads, strict=True):
        n, _, height, width = grid.shape
        a = len(anchors)
        t = targets[:, start : start + a * FIELDS * height * width].reshape(n, a, FIELDS, height, width)
        start += a * FIELDS * height * width
        p = grid.reshape(n, a, 5 + classes, height, width)
        positive = t[:, :, 0]
        total = total + F.binary_cross_entropy_with_logits(p[:, :, 4], positive, reduction="sum")
        offsets = F.binary_cross_entropy_with_logits(p[:, :, 0:2], t[:, :, 1:3], reduction="none").sum(2)
        sizes = ((p[:, :, 2:4] - t[:, :, 3:5]) ** 2).sum(2)
        one_hot = (t[:, :, 5:6] == torch.arange(classes, dtype=t.dtype)[None, None, :, None, None]).to(t.dtype)
        labels = F.binary_cross_entropy_with_logits(p[:, :, 5:], one_hot, reduction="none").sum(2)
        total = total + (positive * (offsets + BOX_WEIGHT * sizes + labels)).sum()
    return total / targets.shape[0]
