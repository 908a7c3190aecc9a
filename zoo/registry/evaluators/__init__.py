"""Evaluators: a model's outputs on labelled samples to one number (``zoo.Metric``'s ``fn``).

Each one is small and typed, carries its unit and checks each label before a
build starts. numpy is imported inside the functions. Plugins reach them
through ``zoo`` (``from zoo import top1``).
"""

from __future__ import annotations

from zoo.registry.evaluators.base import Evaluator
from zoo.registry.evaluators.classification import top1
from zoo.registry.evaluators.detection import map_at, recall_at
from zoo.registry.evaluators.ranking import f1_at, reconstruction_roc_auc, roc_auc
from zoo.registry.evaluators.segmentation import miou
from zoo.registry.evaluators.text import char_error_rate, ctc_greedy, edit_distance, word_error_rate

__all__ = [
    "Evaluator",
    "char_error_rate",
    "ctc_greedy",
    "edit_distance",
    "f1_at",
    "map_at",
    "miou",
    "recall_at",
    "reconstruction_roc_auc",
    "roc_auc",
    "top1",
    "word_error_rate",
]
