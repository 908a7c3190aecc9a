"""boxes.py's decoders, IoU and NMS, and zoo.recall_vs_float (the recall-against-float evaluator), on hand-made outputs."""

from __future__ import annotations

import math

import numpy as np
import pytest
from zoo_vision import boxes

import zoo


def test_iou_of_hand_made_boxes() -> None:
    a = [[0, 0, 10, 10]]
    b = [[0, 0, 10, 10], [5, 0, 15, 10], [20, 20, 30, 30], [0, 0, 0, 0]]
    assert boxes.iou_matrix(a, b).round(6).tolist() == [[1.0, round(50 / 150, 6), 0.0, 0.0]]


def test_nms_keeps_the_best_of_each_overlapping_group() -> None:
    rects = [[0, 0, 10, 10], [1, 0, 11, 10], [20, 20, 30, 30], [21, 20, 31, 30], [0, 0, 10, 10]]
    scores = [0.9, 0.95, 0.5, 0.4, 0.9]
    assert boxes.nms(rects, scores, 0.5) == [1, 2]
    assert boxes.nms(rects, scores, 0.99) == [1, 0, 2, 3]  # exact duplicates (0 and 4) still suppress
    # Per class: the overlapping box of another class survives.
    assert boxes.batched_nms(rects, scores, [0, 1, 0, 0, 0], 0.5) == [1, 0, 2]


def test_ssd_decoding_inverts_torchvisions_encoding() -> None:
    anchors = np.array([[10.0, 10.0, 30.0, 50.0], [100.0, 100.0, 140.0, 120.0]])
    target = np.array([[12.0, 8.0, 36.0, 44.0], [90.0, 105.0, 150.0, 125.0]])
    aw, ah = anchors[:, 2] - anchors[:, 0], anchors[:, 3] - anchors[:, 1]
    acx, acy = anchors[:, 0] + aw / 2, anchors[:, 1] + ah / 2
    tw, th = target[:, 2] - target[:, 0], target[:, 3] - target[:, 1]
    tcx, tcy = target[:, 0] + tw / 2, target[:, 1] + th / 2
    regression = np.stack([10 * (tcx - acx) / aw, 10 * (tcy - acy) / ah, 5 * np.log(tw / aw), 5 * np.log(th / ah)], 1)
    logits = np.array([[0.0, 5.0, 0.0], [0.0, 0.0, 6.0]])  # class 1 on anchor 0, class 2 on anchor 1
    found = boxes.decode_ssd(regression, logits, anchors, (320, 320), score_threshold=0.5)
    assert [d[5] for d in found] == [2, 1]
    np.testing.assert_allclose([d[:4] for d in found], target[::-1], atol=1e-9)
    assert found[0][4] == pytest.approx(math.exp(6) / (math.exp(6) + 2))


def test_yolo_decoding_places_a_box_in_its_cell() -> None:
    classes, anchors = 2, ((8.0, 16.0),)
    grid = np.full((5 + classes, 3, 3), -20.0)
    grid[:, 1, 2] = [0.0, 0.0, math.log(2.0), 0.0, 20.0, -20.0, 20.0]  # cell (y 1, x 2), class 1, twice the width
    (found,) = boxes.decode_yolo([(grid, anchors, 16)], score_threshold=0.5)
    np.testing.assert_allclose(found[:4], [40 - 8, 24 - 8, 40 + 8, 24 + 8])
    assert found[5] == 1 and found[4] == pytest.approx(1.0, abs=1e-8)
    with pytest.raises(ValueError, match="does not hold 2 anchors"):
        boxes.yolo_candidates(np.zeros((9, 3, 3)), anchors * 2, 16)


def test_pnet_and_refine_decoding() -> None:
    probs = np.zeros((2, 4, 4))
    probs[0], probs[1, 2, 1] = 1.0, 0.9
    probs[0, 2, 1] = 0.1
    regression = np.zeros((4, 4, 4))
    regression[:, 2, 1] = [0.5, 0.0, 0.5, 0.0]  # shifted right by half a window
    (found,) = boxes.decode_pnet(regression, probs)
    assert found == (2 + 6.0, 4.0, 2 + 12 + 6.0, 16.0, 0.9, 1)
    assert boxes.decode_refine([0.1, 0.0, -0.1, 0.0], [0.3, 0.7], 24) == [pytest.approx((2.4, 0.0, 21.6, 24.0, 0.7, 1))]


def test_recall_against_float_counts_the_float_boxes_found_again() -> None:
    def decode(outputs: object) -> list[boxes.Detection]:
        x1, y1 = (float(v) for v in np.asarray(outputs[0]).reshape(-1)[:2])  # type: ignore[index]
        return [(x1, y1, x1 + 10, y1 + 10, 1.0, 0)]

    evaluator = zoo.recall_vs_float("hand-made", decode)
    reference = [[np.array([[0.0, 0.0]])], [np.array([[50.0, 50.0]])]]
    with pytest.raises(ValueError, match="needs the float model's outputs"):
        evaluator(reference, [None, None])
    assert evaluator(reference, [None, None], reference=reference) == 100.0
    moved = [[np.array([[1.0, 1.0]])], [np.array([[58.0, 50.0]])]]  # IoU 0.68 and 0.11
    assert evaluator(moved, [None, None], reference=reference) == 50.0
    nothing = [[np.array([[0.0, 0.0]])]]
    with pytest.raises(ValueError, match="finds no box"):
        zoo.recall_vs_float("empty", lambda _: [])(nothing, [None], reference=nothing)
    assert evaluator.check_label([(0, 0, 1, 1, 0)]) is not None and evaluator.check_label(None) is None
