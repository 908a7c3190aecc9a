"""``--model-file x.tflite``'s spec: its identity, and what it says of an int8 file."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.tflite.graphs import small_net
from tests.tflite.test_ops import _int8_conv

pytestmark = pytest.mark.stack


def test_a_quantized_file_says_it_is_quantized_again(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from zoo.registry.model_files.tflite_file import load_tflite_file

    path = tmp_path / "q.tflite"
    path.write_bytes(_int8_conv().to_bytes())
    read = load_tflite_file(path)
    assert "int8 file" in read.description
    assert [i.dtype for i in read.inputs] == ["float32"]
    read.module()
    assert "q.tflite is a quantized TFLite file: zoo reads its weights dequantized" in capsys.readouterr().err


def test_a_float_file_builds_silently_and_its_bytes_are_its_identity(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    from zoo.registry.model_files.tflite_file import load_tflite_file

    a, b = tmp_path / "a.tflite", tmp_path / "b.tflite"
    a.write_bytes(small_net().to_bytes())
    g = small_net()
    g.buffers[1].data = [0] * len(g.buffers[1].data)
    b.write_bytes(g.to_bytes())
    read_a, read_b = load_tflite_file(a), load_tflite_file(b)
    assert read_a.identity != read_b.identity and read_a.version != read_b.version
    assert read_a.description == "TFLite model a.tflite"
    read_a.module()
    assert capsys.readouterr().err == ""
