"""Scores against binary labels: ROC-AUC (voice activity frames, anomaly scores) and F1 at a threshold."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from zoo.registry.evaluators.base import Evaluator, array, output


def _check_binary(label: Any) -> str | None:
    try:
        a = array(label)
    except (TypeError, ValueError) as e:
        return f"{type(label).__name__} is not 0/1 numbers ({e})"
    if not a.size:
        return "an empty label"
    return None if bool(((a == 0) | (a == 1)).all()) else "values other than 0 and 1"


def _pairs(outputs: Sequence[Sequence[Any]], labels: Sequence[Any]) -> tuple[Any, Any]:
    """All scores and labels, flattened: a per-frame output pairs with per-frame labels."""
    import numpy as np

    scores, truths = [], []
    for i, (sample_outputs, label) in enumerate(zip(outputs, labels, strict=True)):
        s, t = output(sample_outputs).reshape(-1), array(label).reshape(-1)
        if s.size != t.size:
            raise ValueError(f"sample {i}: the output has {s.size} score(s), the label {t.size} value(s)")
        scores.append(s)
        truths.append(t)
    return np.concatenate(scores), np.concatenate(truths) > 0.5


def auc(scores: Any, positive: Any) -> float:
    """The area under the ROC curve: the chance that a random positive scores above a
    random negative, ties counting one half (Mann-Whitney U with average ranks)."""
    import numpy as np

    scores, positive = array(scores).reshape(-1), np.asarray(positive, dtype=bool).reshape(-1)
    n_pos, n_neg = int(positive.sum()), int((~positive).sum())
    if not n_pos or not n_neg:
        raise ValueError(f"ROC-AUC needs both classes; the labels hold {n_pos} positive(s) and {n_neg} negative(s)")
    order = np.argsort(scores, kind="mergesort")
    ranks = np.empty(scores.size, dtype=np.float64)
    sorted_scores = scores[order]
    start = 0
    while start < scores.size:  # average the ranks of a run of equal scores
        end = start
        while end + 1 < scores.size and sorted_scores[end + 1] == sorted_scores[start]:
            end += 1
        ranks[order[start:end + 1]] = (start + end) / 2 + 1
        start = end + 1
    u = ranks[positive].sum() - n_pos * (n_pos + 1) / 2
    return float(u / (n_pos * n_neg))


def _roc_auc(outputs: Sequence[Sequence[Any]], labels: Sequence[Any]) -> float:
    return auc(*_pairs(outputs, labels))


roc_auc = Evaluator(
    "roc_auc", _roc_auc, unit="", label_format="0 or 1, or an array of 0/1 with one value per score of output 0",
    check_label=_check_binary,
)
"""ROC-AUC (0–1) of output 0's scores (one per sample, or one per frame) against 0/1 labels."""


def _reconstruction_auc(outputs: Sequence[Sequence[Any]], labels: Sequence[Any],
                        samples: Sequence[Sequence[Any]]) -> float:
    import numpy as np

    errors = []
    for i, (sample_outputs, sample) in enumerate(zip(outputs, samples, strict=True)):
        got, want = output(sample_outputs).reshape(-1), array(sample[0]).reshape(-1)
        if got.size != want.size:
            raise ValueError(f"sample {i}: the reconstruction has {got.size} values, the input {want.size}")
        errors.append(float(((got - want) ** 2).mean()))
    truths = np.asarray([array(label).reshape(-1)[0] > 0.5 for label in labels])
    return auc(np.asarray(errors), truths)


reconstruction_roc_auc = Evaluator(
    "reconstruction_roc_auc", _reconstruction_auc, unit="", label_format="1 for an anomaly, 0 for normal",
    check_label=_check_binary, wants_samples=True,
)
"""ROC-AUC (0–1) of an autoencoder's reconstruction error (mean squared error of output 0
against input 0) against 0/1 anomaly labels."""


def f1_at(threshold: float) -> Evaluator:
    """F1 (0–1) of ``score ≥ threshold`` against 0/1 labels, over all scores of output 0.
    With no positive label and no positive prediction there is nothing to miss: 1."""

    def compute(outputs: Sequence[Sequence[Any]], labels: Sequence[Any]) -> float:
        scores, positive = _pairs(outputs, labels)
        predicted = scores >= threshold
        tp = int((predicted & positive).sum())
        wrong = int((predicted ^ positive).sum())
        return 1.0 if tp == 0 and wrong == 0 else 2 * tp / (2 * tp + wrong)

    return Evaluator(f"f1@{threshold:g}", compute, unit="", label_format=roc_auc.label_format,
                     check_label=_check_binary)
