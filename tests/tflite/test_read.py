"""``zoo.read_tflite`` on a file: the module TFLite's interpreter agrees with, exported by torch.export."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.tflite.graphs import interpret, small_net

pytestmark = pytest.mark.stack


def test_read_tflite_reads_a_file_into_an_exportable_module(tmp_path: Path) -> None:
    import torch

    import zoo

    path = tmp_path / "net.tflite"
    path.write_bytes(small_net().to_bytes())
    module = zoo.read_tflite(path)
    x = np.random.default_rng(0).standard_normal((1, 16, 16, 3)).astype(np.float32)
    (expected,) = interpret(path.read_bytes(), [x])
    program = torch.export.export(module, (torch.from_numpy(x),))
    with torch.no_grad():
        got = program.module()(torch.from_numpy(x)).numpy()
    assert got.shape == (1, 4)
    assert np.abs(got - expected).max() <= 1e-4 * float(expected.max() - expected.min())
    weights = {n for n, _ in module.named_parameters()}
    assert len(weights) == 6  # three layers' weights and biases, as parameters that quantization sees


def test_a_missing_file_is_a_spec_error(tmp_path: Path) -> None:
    import zoo

    with pytest.raises(zoo.SpecError, match="cannot be read as a TFLite model"):
        zoo.read_tflite(tmp_path / "absent.tflite")


def test_a_buffer_too_short_for_its_shape_is_refused(tmp_path: Path) -> None:
    import zoo

    g = small_net()
    g.buffers[g.tensors[1].buffer].data = g.buffers[g.tensors[1].buffer].data[:-4]
    path = tmp_path / "short.tflite"
    path.write_bytes(g.to_bytes())
    with pytest.raises(zoo.SpecError, match=r"tensor 1 \('t1'\) has 860 bytes of data; its shape \[8, 3, 3, 3\]"):
        zoo.read_tflite(path)


def test_a_mismatched_declared_shape_names_the_operator(tmp_path: Path) -> None:
    import zoo

    g = small_net()
    g.tensors[g.operators[0].outputs[0]].shape = [1, 7, 7, 8]
    path = tmp_path / "bad.tflite"
    path.write_bytes(g.to_bytes())
    with pytest.raises(zoo.SpecError, match=r"operator 0 \(CONV_2D\): computes shape \[1, 8, 8, 8\]"):
        zoo.read_tflite(path)


def test_a_string_input_is_refused(tmp_path: Path) -> None:
    import zoo

    g = small_net()
    g.tensors[0].type = 5
    path = tmp_path / "str.tflite"
    path.write_bytes(g.to_bytes())
    with pytest.raises(zoo.SpecError, match="input 't0' is string"):
        zoo.read_tflite(path)
