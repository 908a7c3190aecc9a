"""The evaluators behind zoo.Metric, on hand-made outputs whose answers are known."""

from __future__ import annotations

import math

import numpy as np
import pytest

import zoo
from zoo import (
    char_error_rate,
    ctc_greedy,
    edit_distance,
    f1_at,
    map_at,
    miou,
    precision_at,
    recall_at,
    reconstruction_roc_auc,
    roc_auc,
    top1,
    word_error_rate,
)


def outs(*values: object) -> list[list[np.ndarray]]:
    """One single-output sample per value."""
    return [[np.asarray(v, dtype=np.float32)] for v in values]


def test_evaluators_are_public() -> None:
    for name in ("Metric", "top1", "roc_auc", "f1_at", "char_error_rate", "word_error_rate", "miou",
                 "recall_at", "map_at", "recall_vs_float", "reconstruction_roc_auc", "ctc_greedy", "edit_distance"):
        assert name in zoo.__all__ and getattr(zoo, name) is not None


# --- top-1 ---------------------------------------------------------------------------------

def test_top1_in_percent() -> None:
    assert top1(outs([0.1, 0.9, 0.0], [2.0, 1.0, 0.0], [0, 0, 5]), [1, 0, 1]) == pytest.approx(200 / 3)
    assert top1.unit == "%"


def test_top1_tie_takes_the_lowest_index_and_a_constant_output_predicts_nothing() -> None:
    assert top1(outs([3.0, 3.0, 1.0]), [0]) == 100.0
    assert top1(outs([3.0, 3.0, 1.0]), [1]) == 0.0
    # A program that lost its signal must not score the label that happens to be class 0.
    assert top1(outs([0.0, 0.0, 0.0]), [0]) == 0.0


@pytest.mark.stack
def test_top1_takes_numpy_and_tensor_labels_and_rejects_names() -> None:
    import torch

    assert top1([[torch.tensor([[0.0, 1.0]])]], [torch.tensor(1)]) == 100.0
    assert top1(outs([0.0, 1.0]), [np.int64(1)]) == 100.0
    assert top1.check_label(np.int64(3)) is None and top1.check_label(torch.tensor(2)) is None
    assert "not a class index" in (top1.check_label("three") or "")
    assert "negative" in (top1.check_label(-1) or "")
    assert top1.check_label(True) is not None


def test_top1_refuses_a_scalar_output_and_mismatched_counts() -> None:
    with pytest.raises(ValueError, match="vector of class scores"):
        top1(outs(0.5), [0])
    with pytest.raises(ValueError, match="2 outputs for 1 labels"):
        top1(outs([0, 1], [1, 0]), [0])
    with pytest.raises(ValueError, match="no samples"):
        top1([], [])


# --- ROC-AUC and F1 --------------------------------------------------------------------------

def test_roc_auc_perfect_inverted_and_tied() -> None:
    assert roc_auc(outs(0.1, 0.2, 0.8, 0.9), [0, 0, 1, 1]) == 1.0
    assert roc_auc(outs(0.9, 0.8, 0.2, 0.1), [0, 0, 1, 1]) == 0.0
    assert roc_auc(outs(0.5, 0.5, 0.5, 0.5), [0, 1, 0, 1]) == 0.5  # all tied: a half each
    # One positive (0.4) ties with one of two negatives (0.4, 0.1): (1 + 0.5) / 2.
    assert roc_auc(outs(0.4, 0.4, 0.1), [1, 0, 0]) == 0.75


def test_roc_auc_per_frame_and_against_sklearn_formula() -> None:
    rng = np.random.default_rng(0)
    scores = rng.random((5, 40)).round(1)  # rounded: many ties
    labels = (rng.random((5, 40)) > 0.6).astype(int)
    pos, neg = scores[labels == 1], scores[labels == 0]
    expected = ((pos[:, None] > neg[None, :]).sum() + 0.5 * (pos[:, None] == neg[None, :]).sum()) / (pos.size * neg.size)
    assert roc_auc(outs(*scores), list(labels)) == pytest.approx(expected)


def test_roc_auc_needs_both_classes_and_matching_sizes() -> None:
    with pytest.raises(ValueError, match="both classes"):
        roc_auc(outs(0.1, 0.2), [1, 1])
    with pytest.raises(ValueError, match="sample 0: the output has 3 score"):
        roc_auc(outs([0.1, 0.2, 0.3]), [[0, 1]])
    assert "other than 0 and 1" in (roc_auc.check_label([0, 2]) or "")


def test_f1_at_threshold() -> None:
    f1 = f1_at(0.5)
    # tp = 2 (0.9, 0.6), fp = 1 (0.7), fn = 1 (0.2): 4 / (4 + 2).
    assert f1(outs(0.9, 0.6, 0.7, 0.2, 0.1), [1, 1, 0, 1, 0]) == pytest.approx(2 / 3)
    assert f1(outs(0.5), [1]) == 1.0  # the threshold itself counts as positive
    assert f1(outs(0.1, 0.2), [0, 0]) == 1.0  # nothing to find, nothing falsely found
    assert f1(outs(0.9, 0.2), [0, 0]) == 0.0


def test_reconstruction_auc_scores_the_error_against_the_input() -> None:
    samples = [[np.zeros(4)], [np.zeros(4)], [np.ones(4)]]
    reconstructions = outs([0, 0, 0, 0.1], [0, 0, 0, 0], [0, 0, 0, 0])  # the anomaly is rebuilt worst
    assert reconstruction_roc_auc(reconstructions, [0, 0, 1], samples) == 1.0
    with pytest.raises(ValueError, match="needs the 3 samples"):
        reconstruction_roc_auc(reconstructions, [0, 0, 1])


# --- error rates -----------------------------------------------------------------------------

def test_edit_distance() -> None:
    assert edit_distance("kitten", "sitting") == 3
    assert edit_distance("", "abc") == 3 and edit_distance("abc", "") == 3 and edit_distance("", "") == 0
    assert edit_distance(["a", "b"], ["a", "b"]) == 0


def test_ctc_greedy_merges_repeats_and_drops_blanks() -> None:
    alphabet = "_ab"  # class 0 is the blank
    frames = np.eye(3)[[1, 1, 0, 1, 2, 2, 0]]  # a a _ a b b _ -> "aab"
    assert ctc_greedy(alphabet)([frames]) == "aab"
    # Wav2Letter's (1, classes, frames) layout.
    assert ctc_greedy(alphabet, class_axis=1)([frames.T[None]]) == "aab"
    with pytest.raises(ValueError, match="3 classes"):
        ctc_greedy("ab")([frames])


def test_char_and_word_error_rates() -> None:
    decode = lambda sample: str(sample[0])  # noqa: E731 - the transcripts are the outputs here
    cer = char_error_rate(decode)
    assert cer([["kitten"]], ["sitting"]) == pytest.approx(300 / 7)
    assert cer([["abc"], ["de"]], ["abc", "df"]) == pytest.approx(20.0)  # 1 error in 5 characters
    wer = word_error_rate(decode)
    assert wer([["the cat sat"]], ["the cat sat down"]) == 25.0
    assert wer([["x y z w"]], ["a"]) == 400.0  # insertions: a rate may exceed 100 %
    with pytest.raises(ValueError, match="every reference transcript is empty"):
        cer([["a"]], [""])
    assert "not a transcript" in (cer.check_label(3) or "")


# --- segmentation ----------------------------------------------------------------------------

def test_miou_known_answer_ignore_index_and_absent_class() -> None:
    mask = np.array([[0, 0], [1, 255]])
    scores = np.zeros((3, 2, 2))
    scores[0, 0, 0] = scores[1, 0, 1] = scores[1, 1, 0] = scores[2, 1, 1] = 1  # predicts [[0, 1], [1, 2]]
    # class 0: 1 hit, union 2 -> 0.5; class 1: 1 hit, union 2 -> 0.5; class 2: only on an ignored pixel.
    assert miou(3)([[scores]], [mask]) == pytest.approx(50.0)
    assert miou(3)([[scores[None]]], [mask]) == pytest.approx(50.0)  # a batch dimension of 1
    with pytest.raises(ValueError, match="expected \\[4, 2, 2\\]"):
        miou(4)([[scores]], [mask])
    assert "2-D" in (miou(3).check_label([1, 2]) or "")


# --- detection -------------------------------------------------------------------------------

def boxes(sample: list[object]) -> list[object]:
    return list(sample[0])  # type: ignore[call-overload]


def test_recall_and_map_at_half_iou() -> None:
    truth = [[(0, 0, 10, 10, 0), (20, 20, 30, 30, 1)]]
    perfect = [[[(0, 0, 10, 10, 0.9, 0), (20, 20, 30, 30, 0.8, 1)]]]
    assert recall_at(boxes)(perfect, truth) == 100.0 and map_at(boxes)(perfect, truth) == 100.0
    # IoU of (0,0,10,10) with (5,0,15,10) is 50/150 = 1/3 < 0.5: a miss. Wrong class: a miss.
    shifted = [[[(5, 0, 15, 10, 0.9, 0), (20, 20, 30, 30, 0.8, 0)]]]
    assert recall_at(boxes)(shifted, truth) == 0.0 and map_at(boxes)(shifted, truth) == 0.0


def test_map_ranks_by_score_and_matches_each_true_box_once() -> None:
    truth = [[(0, 0, 10, 10, 0), (20, 0, 30, 10, 0)]]
    # A false positive above both true hits: precision 0, 1/2, 2/3 at recall 0, 1/2, 1 -> AP = 2/3.
    ranked = [[[(50, 50, 60, 60, 0.99, 0), (0, 0, 10, 10, 0.9, 0), (20, 0, 30, 10, 0.8, 0)]]]
    assert map_at(boxes)(ranked, truth) == pytest.approx(200 / 3)
    # Two predictions on one true box: the second is a false positive.
    duplicate = [[[(0, 0, 10, 10, 0.9, 0), (0, 0, 10, 10, 0.8, 0)]]]
    assert recall_at(boxes)(duplicate, truth) == 50.0
    assert map_at(boxes)(duplicate, truth) == pytest.approx(50.0)
    assert precision_at(boxes)(duplicate, truth) == 50.0 and precision_at(boxes)(ranked, truth) == pytest.approx(200 / 3)
    assert precision_at(boxes)([[[]]], truth) == 0.0
    with pytest.raises(ValueError, match="no true box"):
        recall_at(boxes)([[[]]], [[]])
    assert "not (x1, y1, x2, y2, class)" in (recall_at(boxes).check_label([(0, 0, 1)]) or "")


def test_metric_declaration_is_checked() -> None:
    good = zoo.Metric("top1", top1, higher_is_better=True, max_drop=1.0)
    assert good.problems() == [] and good.unit_text == "%" and good.drop(98.0, 97.5) == 0.5
    lower = zoo.Metric("cer", char_error_rate(str), higher_is_better=False, max_drop=2.0)
    assert lower.drop(10.0, 13.0) == 3.0  # a higher error rate is the loss
    for bad, words in (
        (zoo.Metric("Top 1", top1, higher_is_better=True, max_drop=1.0), "lower-case"),
        (zoo.Metric("top1", top1, higher_is_better=True, max_drop=-1.0), "max_drop"),
        (zoo.Metric("top1", top1, higher_is_better=True, max_drop=math.nan), "max_drop"),
        (zoo.Metric("top1", "top1", higher_is_better=True, max_drop=1.0), "not callable"),  # type: ignore[arg-type]
    ):
        assert any(words in p for p in bad.problems()), bad


def test_an_evaluator_that_wants_float_is_given_the_float_outputs_for_both_figures() -> None:
    from zoo.registry.numerics.metrics import Outputs, measure

    def agreement(outputs: list[list[float]], labels: list[None], *, reference: list[list[float]]) -> float:
        return 100.0 * sum(o == r for o, r in zip(outputs, reference, strict=True)) / len(outputs)

    fn = zoo.Evaluator("agreement", agreement, unit="%", wants_float=True, label_format="None",
                       check_label=lambda _: None)
    metric = zoo.Metric("agreement", fn, higher_is_better=True, max_drop=10.0)
    seen = Outputs(float=[[1.0], [2.0], [3.0], [4.0]], program=[[1.0], [2.0], [3.5], [4.0]])
    record, (check,) = measure([metric], seen, [None] * 4, [((0.0,),)] * 4, "hand-made", "int8", "here", "test")
    (m,) = record["metrics"]
    assert (m["float"], m["program"], m["drop"]) == (100.0, 75.0, 25.0)
    assert not check["passed"] and "float 100%, int8 75%" in check["detail"]
