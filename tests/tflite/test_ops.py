"""Each operator and option the TFLite reader maps, against TFLite's interpreter on the same input."""

from __future__ import annotations

import struct
from collections.abc import Callable

import numpy as np
import pytest

from tests.tflite.graphs import OP, Graph, interpret, options, schema

pytestmark = pytest.mark.stack

X = [1, 6, 6, 4]


def _w(*shape: int, seed: int = 1) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32) * 0.5


def _single(code: int, out: list[int], opts: tuple[object, int] | None = None, extra: Callable[[Graph], list[int]] |
            None = None, shape: list[int] | None = None) -> Callable[[], Graph]:
    def make() -> Graph:
        g = Graph()
        x = g.input(shape or X)
        more = extra(g) if extra else []
        o, t = opts if opts else (None, 0)
        g.outputs = g.op(code, [x, *more], [out], o, t)
        return g
    return make


def _conv(stride: int, padding: int, out: list[int], act: int = 0, dilation: int = 1, size: int = 6) -> Callable[[], Graph]:
    o = options("Conv2DOptions", padding=padding, strideW=stride, strideH=stride, fusedActivationFunction=act,
                dilationWFactor=dilation, dilationHFactor=dilation)
    return _single(OP.CONV_2D, out, o, lambda g: [g.const(_w(5, 3, 3, 4)), g.const(_w(5, seed=2))], [1, size, size, 4])


def _dw(stride: int, multiplier: int, out: list[int]) -> Callable[[], Graph]:
    o = options("DepthwiseConv2DOptions", padding=0, strideW=stride, strideH=stride, depthMultiplier=multiplier)
    return _single(OP.DEPTHWISE_CONV_2D, out, o,
                   lambda g: [g.const(_w(1, 3, 3, 4 * multiplier)), g.const(_w(4 * multiplier, seed=2))])


def _pool(code: int, padding: int, k: int, s: int, out: list[int]) -> Callable[[], Graph]:
    o = options("Pool2DOptions", padding=padding, strideW=s, strideH=s, filterWidth=k, filterHeight=k)
    return _single(code, out, o)


def _binary(code: int, name: str, other: Callable[[Graph], int], out: list[int] | None = None, act: int = 0
            ) -> Callable[[], Graph]:
    return _single(code, out or X, options(name, fusedActivationFunction=act), lambda g: [other(g)])


def _resize(code: int, name: str, size: list[int], **flags: bool) -> Callable[[], Graph]:
    return _single(code, [1, *size, 4], options(name, **flags), lambda g: [g.const(size, "int32")])


def _transpose_conv(padding: int, out_hw: int) -> Callable[[], Graph]:
    def make() -> Graph:
        g = Graph()
        x = g.input([1, 3, 3, 4])
        shape = g.const([1, out_hw, out_hw, 2], "int32")
        o, t = options("TransposeConvOptions", padding=padding, strideW=2, strideH=2)
        g.outputs = g.op(OP.TRANSPOSE_CONV, [shape, g.const(_w(2, 3, 3, 4)), x, g.const(_w(2, seed=3))],
                         [[1, out_hw, out_hw, 2]], o, t)
        return g
    return make


def _custom_transpose() -> Graph:
    g = Graph()
    x = g.input([1, 4, 4, 4])
    g.outputs = g.op("Convolution2DTransposeBias", [x, g.const(_w(3, 4, 4, 4)), g.const(_w(3, seed=3))],
                     [[1, 8, 8, 3]], custom=struct.pack("<iii", 1, 2, 2))
    return g


def _float16_conv() -> Graph:
    g = Graph()
    x = g.input(X)
    w16 = g.tensor([5, 1, 1, 4], "float16", _w(5, 1, 1, 4).astype(np.float16))
    (w,) = g.op(OP.DEQUANTIZE, [w16], [[5, 1, 1, 4]])
    o, t = options("Conv2DOptions", padding=1, strideW=1, strideH=1)
    g.outputs = g.op(OP.CONV_2D, [x, w, g.const(_w(5, seed=2))], [[1, 6, 6, 5]], o, t)
    return g


def _sparse_fc() -> Graph:
    dense = _w(3, 8)
    dense[np.abs(dense) < 0.4] = 0
    segments, indices, values = [0], [], []
    for row in dense:
        nz = np.flatnonzero(row)
        indices += nz.tolist()
        values += row[nz].tolist()
        segments.append(len(indices))
    sp = schema.SparsityParametersT()
    sp.traversalOrder, sp.blockMap = [0, 1], []
    d0, d1 = schema.DimensionMetadataT(), schema.DimensionMetadataT()
    d0.format, d0.denseSize = 0, 3
    seg, idx = schema.Int32VectorT(), schema.Int32VectorT()
    seg.values, idx.values = segments, indices
    d1.format, d1.arraySegmentsType, d1.arraySegments, d1.arrayIndicesType, d1.arrayIndices = 1, 1, seg, 1, idx
    sp.dimMetadata = [d0, d1]
    g = Graph()
    x = g.input([2, 8])
    sparse = g.tensor([3, 8], raw=np.asarray(values, np.float32).tobytes(), sparsity=sp)
    (w,) = g.op(OP.DENSIFY, [sparse], [[3, 8]])
    g.outputs = g.op(OP.FULLY_CONNECTED, [x, w, -1], [[2, 3]], *options("FullyConnectedOptions"))
    return g


def _split() -> Graph:
    g = Graph()
    x = g.input(X)
    g.outputs = g.op(OP.SPLIT, [g.const([3], "int32"), x], [[1, 6, 6, 2]] * 2, *options("SplitOptions", numSplits=2))
    return g


def _strided(begin: list[int], end: list[int], strides: list[int], out: list[int], **masks: int) -> Callable[[], Graph]:
    return _single(OP.STRIDED_SLICE, out, options("StridedSliceOptions", **masks),
                   lambda g: [g.const(begin, "int32"), g.const(end, "int32"), g.const(strides, "int32")])


def _two_inputs() -> Graph:
    g = Graph()
    a, b = g.input(X), g.input([1, 1, 1, 4])
    g.outputs = g.op(OP.MUL, [a, b], [X], *options("MulOptions"))
    return g


def _int8_conv() -> Graph:
    g = Graph()
    x = g.input(X)
    q_in = ([0.02], [3], 0)
    (xq,) = g.op(OP.QUANTIZE, [x], [X], out_dtype="int8", out_quant=q_in)
    w = _w(5, 3, 3, 4)
    scales = np.abs(w).reshape(5, -1).max(1) / 127
    wq = g.tensor(w.shape, "int8", np.round(w / scales[:, None, None, None]).astype(np.int8),
                  quant=(scales.tolist(), [0] * 5, 0))
    b = _w(5, seed=2)
    bq = g.tensor([5], "int32", np.round(b / (scales * 0.02)).astype(np.int32), quant=((scales * 0.02).tolist(), [0] * 5, 0))
    o, t = options("Conv2DOptions", padding=0, strideW=1, strideH=1)
    (yq,) = g.op(OP.CONV_2D, [xq, wq, bq], [[1, 6, 6, 5]], o, t, out_dtype="int8", out_quant=([0.05], [-2], 0))
    g.outputs = g.op(OP.DEQUANTIZE, [yq], [[1, 6, 6, 5]])
    return g


CASES: dict[str, Callable[[], Graph]] = {
    "conv-same": _conv(1, 0, [1, 6, 6, 5]),
    "conv-same-stride2-asymmetric": _conv(2, 0, [1, 3, 3, 5]),
    "conv-same-odd-size": _conv(2, 0, [1, 4, 4, 5], size=7),
    "conv-valid": _conv(1, 1, [1, 4, 4, 5]),
    "conv-dilated": _conv(1, 0, [1, 6, 6, 5], dilation=2),
    "conv-relu6": _conv(1, 0, [1, 6, 6, 5], act=3),
    "conv-relu_n1_to_1": _conv(1, 0, [1, 6, 6, 5], act=2),
    "conv-tanh-ignored": _conv(1, 0, [1, 6, 6, 5], act=4),
    "depthwise": _dw(1, 1, [1, 6, 6, 4]),
    "depthwise-multiplier2-stride2": _dw(2, 2, [1, 3, 3, 8]),
    "fully_connected": _single(OP.FULLY_CONNECTED, [1, 3], options("FullyConnectedOptions", fusedActivationFunction=1),
                               lambda g: [g.const(_w(3, 144)), g.const(_w(3, seed=2))]),
    "fully_connected-keep_num_dims": _single(OP.FULLY_CONNECTED, [1, 6, 6, 3],
                                             options("FullyConnectedOptions", keepNumDims=True),
                                             lambda g: [g.const(_w(3, 4)), -1]),
    "transpose_conv-same": _transpose_conv(0, 6),
    "transpose_conv-valid": _transpose_conv(1, 7),
    "Convolution2DTransposeBias": _custom_transpose,
    "average_pool-same-asymmetric": _pool(OP.AVERAGE_POOL_2D, 0, 3, 2, [1, 3, 3, 4]),
    "average_pool-same-symmetric": _pool(OP.AVERAGE_POOL_2D, 0, 3, 1, [1, 6, 6, 4]),
    "average_pool-valid": _pool(OP.AVERAGE_POOL_2D, 1, 2, 2, [1, 3, 3, 4]),
    "average_pool-global": _pool(OP.AVERAGE_POOL_2D, 1, 6, 1, [1, 1, 1, 4]),
    "max_pool-same-2x2": _pool(OP.MAX_POOL_2D, 0, 2, 2, [1, 3, 3, 4]),
    "max_pool-same-3x3-asymmetric": _pool(OP.MAX_POOL_2D, 0, 3, 2, [1, 3, 3, 4]),
    "max_pool-valid": _pool(OP.MAX_POOL_2D, 1, 3, 1, [1, 4, 4, 4]),
    "mean-keep_dims": _single(OP.MEAN, [1, 1, 1, 4], options("ReducerOptions", keepDims=True),
                              lambda g: [g.const([1, 2], "int32")]),
    "mean": _single(OP.MEAN, [1, 4], options("ReducerOptions", keepDims=False), lambda g: [g.const([1, 2], "int32")]),
    "add-broadcast-channels": _binary(OP.ADD, "AddOptions", lambda g: g.const(_w(4))),
    "sub-relu": _binary(OP.SUB, "SubOptions", lambda g: g.const(_w(1, 6, 6, 4)), act=1),
    "mul-broadcast-row": _binary(OP.MUL, "MulOptions", lambda g: g.const(_w(6, 1, 4))),
    "div": _binary(OP.DIV, "DivOptions", lambda g: g.const(np.full(4, 1.5))),
    "mul-two-inputs": _two_inputs,
    "minimum-scalar": _single(OP.MINIMUM, X, options("MaximumMinimumOptions"), lambda g: [g.const([0.3])]),
    "maximum-broadcast-channels": _single(OP.MAXIMUM, X, options("MaximumMinimumOptions"), lambda g: [g.const(_w(4))]),
    "relu": _single(OP.RELU, X),
    "relu6": _single(OP.RELU6, X),
    "relu_n1_to_1": _single(OP.RELU_N1_TO_1, X),
    "prelu": _single(OP.PRELU, X, extra=lambda g: [g.const(_w(1, 1, 4))]),
    "leaky_relu": _single(OP.LEAKY_RELU, X, options("LeakyReluOptions", alpha=0.2)),
    "hard_swish": _single(OP.HARD_SWISH, X),
    "logistic": _single(OP.LOGISTIC, X),
    "tanh": _single(OP.TANH, X),
    "softmax-beta": _single(OP.SOFTMAX, X, options("SoftmaxOptions", beta=0.5)),
    "softmax-rank2": _single(OP.SOFTMAX, [2, 5], options("SoftmaxOptions", beta=1.0), shape=[2, 5]),
    "pad": _single(OP.PAD, [1, 7, 9, 6], extra=lambda g: [g.const([[0, 0], [1, 0], [1, 2], [0, 2]], "int32")]),
    "padv2": _single(OP.PADV2, [1, 8, 8, 4], extra=lambda g: [g.const([[0, 0], [1, 1], [1, 1], [0, 0]], "int32"),
                                                               g.const([-0.5])]),
    "reshape": _single(OP.RESHAPE, [1, 144], extra=lambda g: [g.const([1, 144], "int32")]),
    "reshape-to-rank4": _single(OP.RESHAPE, [1, 3, 2, 24], extra=lambda g: [g.const([1, 3, 2, 24], "int32")]),
    "squeeze": _single(OP.SQUEEZE, [6, 6, 4], options("SqueezeOptions", squeezeDims=[0])),
    "concatenation-channels": _single(OP.CONCATENATION, [1, 6, 6, 8], options("ConcatenationOptions", axis=3),
                                      lambda g: [g.const(_w(1, 6, 6, 4))]),
    "concatenation-rows-relu-ignored": _single(OP.CONCATENATION, [1, 12, 6, 4],
                                       options("ConcatenationOptions", axis=-3, fusedActivationFunction=1),
                                       lambda g: [g.const(_w(1, 6, 6, 4))]),
    "split": _split,
    "strided_slice-masks": _strided([0, 1, 0, 1], [1, 5, 6, 4], [1, 2, 1, 2], [1, 2, 6, 2], beginMask=4, endMask=4),
    "strided_slice-shrink": _strided([0, 2, 0, 0], [1, 3, 6, 4], [1, 1, 1, 1], [1, 6, 4], shrinkAxisMask=2),
    "strided_slice-negative": _strided([0, -3, 0, 0], [1, -1, 6, 4], [1, 1, 1, 1], [1, 2, 6, 4]),
    "transpose": _single(OP.TRANSPOSE, [1, 4, 6, 6], extra=lambda g: [g.const([0, 3, 1, 2], "int32")]),
    "transpose-rank3": _single(OP.TRANSPOSE, [5, 2, 3], extra=lambda g: [g.const([2, 0, 1], "int32")], shape=[2, 3, 5]),
    "resize_bilinear-half_pixel": _resize(OP.RESIZE_BILINEAR, "ResizeBilinearOptions", [12, 9], halfPixelCenters=True),
    "resize_bilinear-align_corners": _resize(OP.RESIZE_BILINEAR, "ResizeBilinearOptions", [11, 11], alignCorners=True),
    "resize_bilinear-legacy": _resize(OP.RESIZE_BILINEAR, "ResizeBilinearOptions", [9, 12]),
    "resize_bilinear-down": _resize(OP.RESIZE_BILINEAR, "ResizeBilinearOptions", [4, 3], halfPixelCenters=True),
    "resize_nearest-x2": _resize(OP.RESIZE_NEAREST_NEIGHBOR, "ResizeNearestNeighborOptions", [12, 12]),
    "resize_nearest-legacy": _resize(OP.RESIZE_NEAREST_NEIGHBOR, "ResizeNearestNeighborOptions", [9, 10]),
    "resize_nearest-align_corners": _resize(OP.RESIZE_NEAREST_NEIGHBOR, "ResizeNearestNeighborOptions", [9, 10],
                                            alignCorners=True),
    "resize_nearest-half_pixel": _resize(OP.RESIZE_NEAREST_NEIGHBOR, "ResizeNearestNeighborOptions", [9, 10],
                                         halfPixelCenters=True),
    "dequantize-float16-weights": _float16_conv,
    "densify-sparse-weights": _sparse_fc,
    "depth_to_space": _single(OP.DEPTH_TO_SPACE, [1, 12, 12, 1], options("DepthToSpaceOptions", blockSize=2)),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_matches_the_tflite_interpreter(case: str) -> None:
    import torch

    from zoo._tflite import load, module_from_model

    data = CASES[case]().to_bytes()
    model = load(data, case)
    rng = np.random.default_rng(0)
    inputs = [rng.standard_normal(model.tensors[i].shape).astype(np.float32) * 2 for i in model.inputs]
    expected = interpret(data, inputs)
    with torch.no_grad():
        got = module_from_model(model)(*[torch.from_numpy(x) for x in inputs])
    got = got if isinstance(got, tuple) else (got,)
    assert len(got) == len(expected)
    for g, e in zip(got, expected, strict=True):
        assert tuple(g.shape) == e.shape
        scale = max(float(e.max() - e.min()), 1e-6)
        assert float(np.abs(g.numpy() - e).max()) <= 1e-4 * scale, case


def test_an_int8_file_reads_as_its_float_model() -> None:
    """The weights dequantized, QUANTIZE and DEQUANTIZE pass real values: the float module is as
    far from TFLite's int8 outputs as the file's own quantization steps."""
    import torch

    from zoo._tflite import is_quantized, load, module_from_model

    data = _int8_conv().to_bytes()
    model = load(data, "int8")
    assert is_quantized(model)
    x = np.random.default_rng(0).uniform(-1, 1, X).astype(np.float32)
    (expected,) = interpret(data, [x])
    with torch.no_grad():
        got = module_from_model(model)(torch.from_numpy(x)).numpy()
    assert np.abs(got - expected).max() <= 4 * 0.05  # a few output steps of 0.05
    assert np.abs(got - expected).max() > 0  # and not TFLite's integer arithmetic


def test_a_uint8_file_reads_its_zero_points() -> None:
    """TensorFlow 1's uint8 files: a uint8 input, uint8 weights whose zero point is not 0, a uint8
    output. Read as real values, the module is within TFLite's own rounding of its output."""
    import torch

    from zoo._tflite import load, module_from_model

    g = Graph()
    x = g.input(X, "uint8", quant=([0.02], [128], 0))
    w = _w(5, 3, 3, 4)
    step, zero = float(np.abs(w).max() / 127), 120
    wq = g.tensor(w.shape, "uint8", np.clip(np.round(w / step) + zero, 0, 255).astype(np.uint8), quant=([step], [zero], 0))
    bq = g.tensor([5], "int32", np.round(_w(5, seed=2) / (step * 0.02)).astype(np.int32), quant=([step * 0.02], [0], 0))
    o, t = options("Conv2DOptions", padding=0, strideW=1, strideH=1)
    g.outputs = g.op(OP.CONV_2D, [x, wq, bq], [[1, 6, 6, 5]], o, t, out_dtype="uint8", out_quant=([0.05], [128], 0))
    data = g.to_bytes()
    q = np.clip(np.round(np.random.default_rng(0).uniform(-1, 1, X) / 0.02) + 128, 0, 255).astype(np.uint8)
    (expected,) = interpret(data, [q])
    with torch.no_grad():
        got = module_from_model(load(data, "uint8"))(torch.from_numpy((q.astype(np.float32) - 128) * 0.02)).numpy()
    assert np.abs(got - (expected.astype(np.float32) - 128) * 0.05).max() <= 0.6 * 0.05  # its requantization rounds to about half a step


def test_a_global_average_pool_exports_as_a_mean() -> None:
    """zoo's pipeline lowers a spatial mean as a pool only where the target takes the kernel;
    an avg_pool2d of a 64×64 window would fall to the CPU on U55."""
    import torch

    from zoo._tflite import load, module_from_model

    module = module_from_model(load(CASES["average_pool-global"]().to_bytes(), "global"))
    program = torch.export.export(module, (torch.zeros(X),))
    targets = {str(n.target) for n in program.graph.nodes if n.op == "call_function"}
    assert "aten.mean.dim" in targets and not any("avg_pool" in t for t in targets)
