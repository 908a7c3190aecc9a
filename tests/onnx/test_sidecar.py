"""The sidecar that fixes an .onnx --model-file's dynamic dims: checked without torch."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.onnx.graphs import conv_net, save
from zoo import SpecError
from zoo._onnx import graph_inputs
from zoo.registry.model_files.onnx_file import declared_shapes


@pytest.mark.parametrize(("text", "said"), [
    ('{"inputs": {"x": [1, 3, 16]}}', "has 3 dims, the input has rank 4 [N, 3, 16, 16]"),
    ('{"inputs": {"x": [0, 3, 16, 16]}}', "has a dim that is not positive"),
    ('{"inputs": {"x": [1, 4, 16, 16]}}', "contradicts the file's static dims [N, 3, 16, 16] at axis 1"),
    ('{"inputs": {"image": [1, 3, 16, 16]}}', "'image' is not an input of the model (its inputs: 'x')"),
    ('{"inputs": {"x": "1,3,16,16"}}', "is not a list of integers"),
    ('{"shapes": {"x": [1, 3, 16, 16]}}', 'expected exactly one key, "inputs"'),
    ("{inputs", "not valid JSON"),
    ('{"inputs": {}}', "'x' has dynamic dims and is not declared"),
])
def test_bad_sidecar_is_refused_naming_it_and_what_to_write(tmp_path: Path, text: str, said: str) -> None:
    path = save(conv_net(), tmp_path / "net.onnx")
    (tmp_path / "net.onnx.json").write_text(text)
    with pytest.raises(SpecError) as info:
        declared_shapes(path, graph_inputs(conv_net()))
    message = str(info.value)
    assert message.startswith(f"sidecar {tmp_path / 'net.onnx.json'}: ")
    assert said in message
    assert 'Write e.g. {"inputs": {"x": [1, 3, 16, 16]}}' in message or "write e.g." in message


def test_missing_sidecar_names_the_dynamic_inputs_and_the_json_to_write(tmp_path: Path) -> None:
    path = save(conv_net(), tmp_path / "net.onnx")
    with pytest.raises(SpecError) as info:
        declared_shapes(path, graph_inputs(conv_net()))
    assert str(info.value) == (f"model file {path}: dynamic input dims need fixed values ('x' is [N, 3, 16, 16]). "
                               f'Declare them in {path}.json, e.g.: {{"inputs": {{"x": [1, 3, 16, 16]}}}}')


def test_static_file_needs_no_sidecar_and_a_good_one_is_read(tmp_path: Path) -> None:
    path = save(conv_net(batch=1), tmp_path / "net.onnx")
    assert declared_shapes(path, graph_inputs(conv_net(batch=1))) == ({}, b"")
    (tmp_path / "net.onnx.json").write_text('{"inputs": {"x": [1, 3, 16, 16]}}')
    assert declared_shapes(path, graph_inputs(conv_net(batch=1)))[0] == {"x": [1, 3, 16, 16]}
