"""benchmarks/tflite_int8_input.py's plumbing (issue 56): the distances from the file's int8 outputs
and the table. No TensorFlow, no build: the benchmark itself is run by hand (docs/tflite.md)."""

from __future__ import annotations

import json

import numpy as np

from benchmarks.tflite_int8_input import RESULTS, FileDistance, OnClass, markdown
from tests.conftest import ROOT


def test_the_distance_is_in_the_files_output_steps_on_each_labelled_sample() -> None:
    """Each label's second item is the sample's index in the file's outputs, in any order."""
    file = np.array([[[0.0, 0.5, 1.0]], [[2.0, 1.0, 0.0]]])
    outputs = [[np.array([[2.0, 1.25, 0.0]])], [np.array([[0.0, 1.0, 0.75]])]]
    labels = [(7, 1), (3, 0)]  # the program's first output is sample 1's, its second sample 0's
    got = {kind: FileDistance(kind, file, 0.25)(outputs, labels) for kind in ("max", "mean", "argmax")}
    assert got["max"] == 2.0  # 1.0 against 0.5: two steps of 0.25
    assert np.isclose(got["mean"], (1 + 2 + 1) / 6)  # one, two and one step off, of six values
    assert got["argmax"] == 50.0  # sample 0's program picks 1, the file 2


def test_the_models_metric_reads_the_class_item_of_the_label() -> None:
    seen: list[object] = []

    def metric(outputs: object, labels: list[object]) -> float:
        seen.extend(labels)
        return 1.0

    assert OnClass(metric)([[np.zeros(2)]], [(4, 0)]) == 1.0
    assert seen == [4]


def test_a_failed_model_is_a_row_that_says_why() -> None:
    table = markdown([{"model": "mnist", "target": "u85-256", "error": "RuntimeError: the TFLite flow failed"}])
    assert "| mnist (u85-256) | | RuntimeError: the TFLite flow failed |" in table


def test_the_docs_table_is_the_benchmarks_own_output() -> None:
    """docs/tflite.md's table is the benchmark's rendering of the rows it wrote, never typed."""
    table = markdown(json.loads(RESULTS.read_text()))
    assert table in (ROOT / "docs" / "tflite.md").read_text(encoding="utf-8")
