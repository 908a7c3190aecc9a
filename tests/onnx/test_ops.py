"""Each operator the reader maps, against onnxruntime on the same seeded input."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import helper

from tests.onnx.graphs import floats, ints, model, weight

pytestmark = pytest.mark.stack

X4 = {"x": [1, 4, 6, 6]}
N = helper.make_node


def _unary(op: str, **attrs: Any) -> Callable[[], onnx.ModelProto]:
    return lambda: model([N(op, ["x"], ["y"], **attrs)], X4, ["y"])


def _with(op: str, extra: list[onnx.TensorProto], inputs: dict[str, list[int]] | None = None, opset: int = 17,
          **attrs: Any) -> Callable[[], onnx.ModelProto]:
    names = [*(inputs or X4), *(t.name for t in extra)]
    return lambda: model([N(op, names, ["y"], **attrs)], inputs or X4, ["y"], extra, opset=opset)


CASES: dict[str, Callable[[], onnx.ModelProto]] = {
    "Add": _with("Add", [weight("c", (4, 1, 1), 1)]),
    "Add-scalar": _with("Add", [floats("c", [0.25])]),
    "Sub": _with("Sub", [weight("c", (1, 6), 1)]),
    "Mul": _with("Mul", [weight("c", (4, 6, 6), 1)]),
    "Div": _with("Div", [floats("c", [6.0])]),
    "Add-two-inputs": lambda: model([N("Add", ["x", "z"], ["y"])], {**X4, "z": [1, 4, 1, 6]}, ["y"]),
    "Pow-2": _with("Pow", [floats("e", 2.0)]),
    "Pow-3": _with("Pow", [floats("e", 3.0)]),
    "Sqrt": lambda: model([N("Relu", ["x"], ["r"]), N("Sqrt", ["r"], ["y"])], X4, ["y"]),
    "Relu": _unary("Relu"),
    "Sigmoid": _unary("Sigmoid"),
    "Tanh": _unary("Tanh"),
    "LeakyRelu": _unary("LeakyRelu", alpha=0.1),
    "HardSwish": _unary("HardSwish"),
    "HardSigmoid-default": _unary("HardSigmoid"),
    "HardSigmoid-paddle": _unary("HardSigmoid", alpha=0.1666667, beta=0.5),
    "HardSigmoid-sixth": _unary("HardSigmoid", alpha=float(np.float32(1 / 6)), beta=0.5),
    "Identity": _unary("Identity"),
    "Clip-inputs": _with("Clip", [floats("lo", -0.5), floats("hi", 0.75)]),
    "Clip-max-only": lambda: model([N("Clip", ["x", "", "hi"], ["y"])], X4, ["y"], [floats("hi", 0.3)]),
    "Clip-attributes-opset6": lambda: model([N("Clip", ["x"], ["y"], min=-0.5, max=0.75)], X4, ["y"], opset=6),
    "Softmax-last": _unary("Softmax", axis=-1),
    "Softmax-axis1": _unary("Softmax", axis=1),
    "Softmax-opset11-axis1": lambda: model([N("Softmax", ["x"], ["y"], axis=1)], X4, ["y"], opset=11),
    "Softmax-opset11-axis2": lambda: model([N("Softmax", ["x"], ["y"], axis=2)], X4, ["y"], opset=11),
    "Conv": _with("Conv", [weight("w", (8, 4, 3, 3), 1), floats("b", np.arange(8) / 8)], pads=[1, 1, 1, 1]),
    "Conv-grouped-dilated-strided": _with("Conv", [weight("w", (4, 2, 3, 3), 1)], group=2, dilations=[2, 1],
                                          strides=[1, 2], pads=[2, 1, 2, 1]),
    "Conv-depthwise": _with("Conv", [weight("w", (4, 1, 3, 3), 1)], group=4, pads=[1, 1, 1, 1]),
    "Conv-asymmetric-pads": _with("Conv", [weight("w", (3, 4, 3, 3), 1)], strides=[2, 2], pads=[0, 0, 1, 1]),
    "Conv-same-upper": _with("Conv", [weight("w", (3, 4, 4, 4), 1)], strides=[2, 2], auto_pad="SAME_UPPER"),
    "Conv-valid": _with("Conv", [weight("w", (3, 4, 3, 3), 1)], auto_pad="VALID"),
    "Conv-1d": _with("Conv", [weight("w", (5, 4, 3), 1)], {"x": [1, 4, 9]}, pads=[1, 1]),
    "ConvTranspose": _with("ConvTranspose", [weight("w", (4, 3, 2, 2), 1), floats("b", [0.1, 0.2, 0.3])],
                           strides=[2, 2]),
    "ConvTranspose-padded-output-padding": _with("ConvTranspose", [weight("w", (4, 2, 3, 3), 1)], strides=[2, 2],
                                                 pads=[1, 1, 1, 1], output_padding=[1, 1]),
    "ConvTranspose-asymmetric": _with("ConvTranspose", [weight("w", (4, 2, 3, 3), 1)], strides=[2, 2],
                                      pads=[0, 1, 1, 0]),
    "BatchNormalization": _with("BatchNormalization", [floats("s", [1, 2, 0.5, 1.5]), floats("b", [0, 1, -1, 0.5]),
                                                       floats("m", [0.1, -0.2, 0, 0.3]), floats("v", [1, 0.5, 2, 0.1])],
                                epsilon=1e-3),
    "AveragePool": _unary("AveragePool", kernel_shape=[3, 2], strides=[3, 2]),
    "AveragePool-padded-exclude": _unary("AveragePool", kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
    "AveragePool-padded-include": _unary("AveragePool", kernel_shape=[3, 3], pads=[1, 1, 1, 1], count_include_pad=1),
    "AveragePool-ceil": _unary("AveragePool", kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1,
                               pads=[0, 0, 0, 0]),
    "MaxPool": _unary("MaxPool", kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
    "MaxPool-ceil": lambda: model([N("MaxPool", ["x"], ["y"], kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1)],
                                  {"x": [1, 2, 7, 7]}, ["y"]),
    "MaxPool-asymmetric": _unary("MaxPool", kernel_shape=[2, 2], pads=[0, 0, 1, 1]),
    "GlobalAveragePool": _unary("GlobalAveragePool"),
    "Flatten": _unary("Flatten", axis=2),
    "Gemm": lambda: model([N("Gemm", ["x", "w", "c"], ["y"], transB=1, alpha=0.5, beta=2.0)], {"x": [3, 5]}, ["y"],
                          [weight("w", (4, 5), 1), floats("c", [1, 2, 3, 4])]),
    "Gemm-transA-matrix-C": lambda: model([N("Gemm", ["x", "w", "c"], ["y"], transA=1)], {"x": [5, 3]}, ["y"],
                                          [weight("w", (5, 4), 1), weight("c", (3, 4), 2)]),
    "MatMul-weight": _with("MatMul", [weight("w", (6, 3), 1)]),
    "MatMul-two-inputs": lambda: model([N("MatMul", ["x", "z"], ["y"])], {"x": [2, 3, 4], "z": [2, 4, 5]}, ["y"]),
    "ReduceMean-attr": lambda: model([N("ReduceMean", ["x"], ["y"], axes=[-1])], X4, ["y"], opset=13),
    "ReduceMean-input-opset18": lambda: model([N("ReduceMean", ["x", "a"], ["y"], keepdims=0)], X4, ["y"],
                                              [ints("a", [1, 2])], opset=18),
    "Transpose": _unary("Transpose", perm=[0, 2, 3, 1]),
    "Reshape-zero-and-minus-one": _with("Reshape", [ints("s", [0, -1, 3])]),
    "Squeeze-attr-opset11": lambda: model([N("Squeeze", ["x"], ["y"], axes=[0])], X4, ["y"], opset=11),
    "Squeeze-input-opset13": _with("Squeeze", [ints("a", [0])], opset=13),
    "Unsqueeze-attr-opset11": lambda: model([N("Unsqueeze", ["x"], ["y"], axes=[0, 3])], X4, ["y"], opset=11),
    "Unsqueeze-input-opset13": _with("Unsqueeze", [ints("a", [-1])], opset=13),
    "Slice": _with("Slice", [ints("st", [1, -4]), ints("en", [3, 100]), ints("ax", [1, 3]), ints("sp", [1, 2])]),
    "Slice-reversed": _with("Slice", [ints("st", [-1]), ints("en", [-100]), ints("ax", [2]), ints("sp", [-2])]),
    "Concat": lambda: model([N("Concat", ["x", "c"], ["y"], axis=1)], X4, ["y"], [weight("c", (1, 2, 6, 6), 1)]),
    "Gather-scalar": _with("Gather", [onnx.numpy_helper.from_array(np.int64(2), "i")], axis=1),
    "Gather-list": _with("Gather", [ints("i", [3, 0, -1])], axis=2),
    "Cast": lambda: model([N("Cast", ["x"], ["i"], to=onnx.TensorProto.INT32),
                           N("Cast", ["i"], ["y"], to=onnx.TensorProto.FLOAT)], X4, ["y"]),
    "Resize-nearest-asymmetric-floor": _with(
        "Resize", [floats("roi", []), floats("sc", [1, 1, 2, 2])],
        mode="nearest", coordinate_transformation_mode="asymmetric", nearest_mode="floor"),
    "Resize-nearest-half-pixel-sizes": _with(
        "Resize", [floats("roi", []), floats("sc", []), ints("sz", [1, 4, 12, 9])], mode="nearest"),
    "Resize-nearest-half-pixel-down": _with(
        "Resize", [floats("roi", []), floats("sc", []), ints("sz", [1, 4, 3, 2])], mode="nearest",
        nearest_mode="round_prefer_ceil"),
    "Resize-linear-half-pixel": _with("Resize", [floats("roi", []), floats("sc", [1, 1, 2, 1.5])], mode="linear"),
    "Resize-linear-align-corners": _with("Resize", [floats("roi", []), floats("sc", []), ints("sz", [1, 4, 11, 8])],
                                         mode="linear", coordinate_transformation_mode="align_corners"),
    "Resize-linear-pytorch-half-pixel": _with(
        "Resize", [floats("roi", []), floats("sc", []), ints("sz", [1, 4, 4, 9])], mode="linear",
        coordinate_transformation_mode="pytorch_half_pixel"),
    "Resize-opset10": lambda: model([N("Resize", ["x", "sc"], ["y"], mode="nearest")], X4, ["y"],
                                    [floats("sc", [1, 1, 2, 3])], opset=10),
    "Shape-Gather-Concat-Reshape": lambda: model([
        N("Shape", ["x"], ["s"]), N("Gather", ["s", "i"], ["c"], axis=0), N("Unsqueeze", ["c", "z"], ["cu"]),
        N("Concat", ["cu", "m"], ["t"], axis=0), N("Reshape", ["x", "t"], ["y"])],
        X4, ["y"], [onnx.numpy_helper.from_array(np.int64(1), "i"), ints("z", [0]), ints("m", [-1])], opset=13,
        output_shapes={"y": [4, 36]}),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_operator_matches_onnxruntime(case: str) -> None:
    import onnxruntime as ort
    import torch

    from zoo._onnx import graph_inputs, module_from_model

    m = CASES[case]()
    rng = np.random.default_rng(0)
    feeds = {name: rng.standard_normal([int(d) for d in dims]).astype(np.float32) for name, dims, _ in graph_inputs(m)}
    expected = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)[0]
    module = module_from_model(m, {})
    with torch.no_grad():
        got = module(*(torch.from_numpy(v) for v in feeds.values())).numpy()
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("case", sorted(c for c in CASES if c.startswith("Resize")))
def test_a_resize_traces_as_torch_onnx_export_does(case: str) -> None:
    """TorchScript's tracer hands the reader sizes as tensors (benchmarks/vs_tflite.py exports
    ppocr-det so); the traced module computes what the module does."""
    import warnings

    import torch

    from zoo._onnx import graph_inputs, module_from_model

    m = CASES[case]()
    (x,) = (torch.from_numpy(np.random.default_rng(0).standard_normal([int(d) for d in dims]).astype(np.float32))
            for _, dims, _ in graph_inputs(m))
    module = module_from_model(m, {})
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore", torch.jit.TracerWarning)
        warnings.simplefilter("ignore", FutureWarning)  # torch.jit.trace is deprecated; the exporter still uses it
        traced = torch.jit.trace(module, (x,))
        assert torch.equal(traced(x), module(x))
