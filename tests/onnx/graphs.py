"""Small ONNX graphs built with onnx.helper, for the reader's tests."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def weight(name: str, shape: Sequence[int], seed: int, scale: float = 0.5) -> onnx.TensorProto:
    rng = np.random.default_rng(seed)
    return numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name)


def ints(name: str, values: Sequence[int]) -> onnx.TensorProto:
    return numpy_helper.from_array(np.asarray(values, dtype=np.int64), name)


def floats(name: str, values: Any) -> onnx.TensorProto:
    return numpy_helper.from_array(np.asarray(values, dtype=np.float32), name)


def model(nodes: Sequence[onnx.NodeProto], inputs: dict[str, Sequence[int | str]], outputs: Sequence[str],
          initializers: Sequence[onnx.TensorProto] = (), opset: int = 17,
          output_shapes: dict[str, Sequence[int]] | None = None) -> onnx.ModelProto:
    """A checked model; outputs' shapes come from shape inference unless given."""
    graph = helper.make_graph(
        list(nodes), "test",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, list(s)) for n, s in inputs.items()],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, (output_shapes or {}).get(n)) for n in outputs],
        list(initializers))
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    # The outputs' shapes are left to shape inference, as exporters do.
    m = onnx.shape_inference.infer_shapes(m, strict_mode=True)
    onnx.checker.check_model(m, full_check=True)
    return m


def conv_net(batch: int | str = "N") -> onnx.ModelProto:
    """Conv → BatchNorm → Relu → GlobalAveragePool → Flatten → Gemm, with a dynamic batch dim."""
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1], strides=[2, 2], name="conv"),
        helper.make_node("BatchNormalization", ["c", "s", "bb", "m", "v"], ["n"], name="bn"),
        helper.make_node("Relu", ["n"], ["r"], name="relu"),
        helper.make_node("GlobalAveragePool", ["r"], ["g"], name="gap"),
        helper.make_node("Flatten", ["g"], ["f"], name="flatten"),
        helper.make_node("Gemm", ["f", "fw", "fb"], ["y"], transB=1, name="fc"),
    ]
    rng = np.random.default_rng(1)
    inits = [weight("w", (8, 3, 3, 3), 2), floats("b", rng.standard_normal(8) * 0.1),
             floats("s", 1 + rng.random(8) * 0.2), floats("bb", rng.standard_normal(8) * 0.1),
             floats("m", rng.standard_normal(8) * 0.1), floats("v", 0.5 + rng.random(8)),
             weight("fw", (4, 8), 3), floats("fb", rng.standard_normal(4) * 0.1)]
    return model(nodes, {"x": [batch, 3, 16, 16]}, ["y"], inits, opset=13)


def save(m: onnx.ModelProto, path: Path) -> Path:
    onnx.save(m, str(path))
    return path


def external(tensor: onnx.TensorProto, path: Path) -> onnx.TensorProto:
    """``tensor`` with its data moved to ``path`` and referred to by its name alone, as
    onnx.save(..., save_as_external_data=True) leaves it."""
    path.write_bytes(numpy_helper.to_array(tensor).tobytes())
    moved = onnx.TensorProto()
    moved.CopyFrom(tensor)
    moved.ClearField("raw_data")
    moved.ClearField("float_data")
    moved.data_location = TensorProto.EXTERNAL
    for key, value in (("location", path.name), ("length", str(path.stat().st_size))):
        entry = moved.external_data.add()
        entry.key, entry.value = key, value
    return moved


def unchecked(nodes: Sequence[onnx.NodeProto], inputs: Sequence[str], initializers: Sequence[onnx.TensorProto] = (),
              output: str = "y") -> onnx.ModelProto:
    """A model of [1, 2] float inputs and one output, not run through onnx.checker: what zoo must refuse itself."""
    graph = helper.make_graph(list(nodes), "test",
                              [helper.make_tensor_value_info(n, TensorProto.FLOAT, [1, 2]) for n in inputs],
                              [helper.make_tensor_value_info(output, TensorProto.FLOAT, [1, 2])], list(initializers))
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m
