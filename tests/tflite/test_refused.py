"""What the TFLite reader refuses, with what was wrong: damaged and hostile files, operators it
lacks, control flow. The checks read only the flatbuffer (no torch), so these are fast."""

from __future__ import annotations

import struct

import numpy as np
import pytest

from tests.tflite.graphs import OP, Graph, options, schema
from zoo import SpecError
from zoo._tflite import load
from zoo._tflite.schema import Reader


def _conv_graph() -> Graph:
    g = Graph()
    x = g.input([1, 4, 4, 2])
    w = g.const(np.ones((3, 1, 1, 2)))
    g.outputs = g.op(OP.CONV_2D, [x, w, g.const(np.zeros(3))], [[1, 4, 4, 3]],
                     *options("Conv2DOptions", padding=0, strideW=1, strideH=1))
    return g


def _refused(data: bytes, *expected: str) -> str:
    with pytest.raises(SpecError) as info:
        load(data, "net.tflite")
    message = str(info.value)
    for text in expected:
        assert text in message, message
    return message


def test_a_good_file_reads() -> None:
    model = load(_conv_graph().to_bytes(), "net.tflite")
    assert [op.name for op in model.operators] == ["CONV_2D"]
    assert model.tensors[model.inputs[0]].shape == (1, 4, 4, 2)


def test_minimum_and_maximum_read() -> None:
    """onnx2tf's int8 ppocr-cls ends its squeeze-excite gates with MINIMUM of a constant (issue 56)."""
    g = _conv_graph()
    (y,) = g.outputs
    (z,) = g.op(OP.MINIMUM, [y, g.const([1.0])], [[1, 4, 4, 3]], *options("MaximumMinimumOptions"))
    g.outputs = g.op(OP.MAXIMUM, [z, g.const(np.zeros(3))], [[1, 4, 4, 3]], *options("MaximumMinimumOptions"))
    model = load(g.to_bytes(), "net.tflite")
    assert [op.name for op in model.operators] == ["CONV_2D", "MINIMUM", "MAXIMUM"]


@pytest.mark.parametrize("keep", [3, 7, 40, 200])
def test_a_truncated_file_is_refused(keep: int) -> None:
    data = _conv_graph().to_bytes()
    _refused(data[:keep], "net.tflite")


def test_offsets_outside_the_file_are_refused() -> None:
    data = bytearray(_conv_graph().to_bytes())
    struct.pack_into("<I", data, 0, len(data) + 1000)  # the root table's offset
    _refused(bytes(data), "outside the file")


def test_a_huge_declared_vector_is_refused_before_its_bytes_are_read() -> None:
    data = bytearray(_conv_graph().to_bytes())
    graph = Reader(bytes(data), "net.tflite").root("model").tables(2, "subgraph list")[0]
    span = graph.tables(0, "tensor list")[0].span(0, "a shape", 4)
    assert span is not None
    struct.pack_into("<I", data, span[0] - 4, 1 << 29)
    _refused(bytes(data), "net.tflite: not a readable TFLite model", "declares 536,870,912 elements")


def test_a_file_that_is_not_tflite_is_refused() -> None:
    _refused(b"\x10\x00\x00\x00ONNX" + bytes(64), "not a TFLite model", "TFL3")


def test_an_unknown_builtin_operator_is_named_with_its_index() -> None:
    g = _conv_graph()
    (y,) = g.outputs
    g.outputs = g.op(OP.SIN, [y], [[1, 4, 4, 3]])
    _refused(g.to_bytes(), "operator 1 is SIN", "zoo does not read", "CONV_2D")


def test_a_custom_operator_zoo_lacks_is_refused() -> None:
    g = _conv_graph()
    (y,) = g.outputs
    g.outputs = g.op("MaxPoolingWithArgmax2D", [y], [[1, 2, 2, 3]], custom=b"")
    _refused(g.to_bytes(), "operator 1 is the custom operator 'MaxPoolingWithArgmax2D'", "Convolution2DTransposeBias")


def test_two_subgraphs_are_refused() -> None:
    g = _conv_graph()
    g.subgraphs = 2
    _refused(g.to_bytes(), "2 subgraphs", "exactly one")


@pytest.mark.parametrize("code", [OP.WHILE, OP.IF, OP.CALL_ONCE])
def test_control_flow_is_refused(code: int) -> None:
    g = _conv_graph()
    (y,) = g.outputs
    g.outputs = g.op(code, [y], [[1, 4, 4, 3]])
    _refused(g.to_bytes(), "operator 1 is", "control flow")


def test_a_buffer_outside_the_file_is_refused() -> None:
    g = _conv_graph()
    far = schema.BufferT()
    far.offset, far.size = 1 << 20, 64
    g.buffers.append(far)
    g.tensors[1].buffer = len(g.buffers) - 1
    _refused(g.to_bytes(), f"buffer {len(g.buffers) - 1} lies outside the file")


def test_a_huge_declared_shape_is_refused() -> None:
    g = _conv_graph()
    g.tensors[g.outputs[0]].shape = [1, 1 << 20, 1 << 20, 3]
    _refused(g.to_bytes(), "declares shape [1, 1048576, 1048576, 3]")


def test_a_tensor_index_outside_the_graph_is_refused() -> None:
    g = _conv_graph()
    g.operators[0].inputs = [0, 99, 2]
    _refused(g.to_bytes(), "names tensor 99")


def test_a_buffer_index_outside_the_list_is_refused() -> None:
    g = _conv_graph()
    g.tensors[1].buffer = 50
    _refused(g.to_bytes(), "names buffer 50")


def test_a_string_input_is_described() -> None:
    g = _conv_graph()
    g.tensors[0].type = 5
    model = load(g.to_bytes(), "net.tflite")
    assert model.tensors[0].type_name == "string"
