"""Layer operators (convolution, pooling, normalisation, matrix products): one function each."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from zoo._onnx.graph import Node, is_static

_CONV = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}
_CONV_T = {1: F.conv_transpose1d, 2: F.conv_transpose2d, 3: F.conv_transpose3d}
_AVG = {1: F.avg_pool1d, 2: F.avg_pool2d, 3: F.avg_pool3d}
_MAX = {1: F.max_pool1d, 2: F.max_pool2d, 3: F.max_pool3d}


def _spatial(n: Node, x: Any, kernel: list[int]) -> tuple[list[int], list[int], list[int], list[int]]:
    """Strides, dilations and the (begin, end) pads of each spatial axis, auto_pad resolved."""
    k = len(kernel)
    if x.dim() != k + 2 or k not in _CONV:
        raise n.error(f"a rank-{x.dim()} input with a {k}-D kernel: only 1-D to 3-D are supported")
    strides = [int(s) for s in n.attr("strides", [1] * k)]
    dilations = [int(d) for d in n.attr("dilations", [1] * k)]
    pads = [int(p) for p in n.attr("pads", [0] * (2 * k))]
    auto_pad = n.attr("auto_pad", b"NOTSET")
    auto_pad = auto_pad.decode() if isinstance(auto_pad, bytes) else str(auto_pad)
    if auto_pad == "VALID":
        pads = [0] * (2 * k)
    elif auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        pads = [0] * (2 * k)
        for i in range(k):
            size = int(x.shape[2 + i])
            total = max((math.ceil(size / strides[i]) - 1) * strides[i] + (kernel[i] - 1) * dilations[i] + 1 - size, 0)
            small, large = total // 2, total - total // 2
            pads[i], pads[k + i] = (small, large) if auto_pad == "SAME_UPPER" else (large, small)
    elif auto_pad != "NOTSET":
        raise n.error(f"attribute auto_pad={auto_pad!r} is not supported (NOTSET, VALID, SAME_UPPER, SAME_LOWER)")
    return strides, dilations, pads[:k], pads[k:]


def _pad_first(x: Any, begin: list[int], end: list[int], value: float = 0.0) -> tuple[Any, list[int]]:
    """Symmetric pads go to the layer; asymmetric ones become an explicit F.pad."""
    if begin == end:
        return x, begin
    flat: list[int] = []
    for b, e in zip(reversed(begin), reversed(end), strict=True):
        flat += [b, e]
    return F.pad(x, flat, value=value), [0] * len(begin)


def conv(n: Node, x: Any, w: Any, b: Any = None) -> Any:
    kernel = list(w.shape[2:])
    strides, dilations, begin, end = _spatial(n, x, kernel)
    x, padding = _pad_first(x, begin, end)
    return _CONV[len(kernel)](x, w, b, strides, padding, dilations, int(n.attr("group", 1)))


def conv_transpose(n: Node, x: Any, w: Any, b: Any = None) -> Any:
    kernel = list(w.shape[2:])
    if n.attr("output_shape") is not None:
        raise n.error("attribute output_shape is not supported; give pads and output_padding instead")
    if n.attr("auto_pad", b"NOTSET") not in (b"NOTSET", "NOTSET"):
        raise n.error(f"attribute auto_pad={n.attr('auto_pad')!r} is not supported for ConvTranspose (only NOTSET)")
    k = len(kernel)
    strides = [int(s) for s in n.attr("strides", [1] * k)]
    dilations = [int(d) for d in n.attr("dilations", [1] * k)]
    pads = [int(p) for p in n.attr("pads", [0] * (2 * k))]
    extra = [int(p) for p in n.attr("output_padding", [0] * k)]
    group = int(n.attr("group", 1))
    fn = _CONV_T[k]
    if pads[:k] == pads[k:]:
        return fn(x, w, b, strides, pads[:k], extra, group, dilations)
    # Asymmetric pads: compute the unpadded output, then crop each side.
    y = fn(x, w, b, strides, [0] * k, extra, group, dilations)
    for i in range(k):
        y = y.narrow(2 + i, pads[i], y.shape[2 + i] - pads[i] - pads[k + i])
    return y


def batch_norm(n: Node, x: Any, scale: Any, bias: Any, mean: Any, var: Any) -> Any:
    if n.attr("training_mode", 0):
        raise n.error("attribute training_mode=1 is not supported (zoo reads inference graphs)")
    if len(n.outputs) > 1 and any(n.outputs[1:]):
        raise n.error("the running-statistics outputs are not supported (zoo reads inference graphs)")
    return F.batch_norm(x, mean, var, scale, bias, False, 0.0, float(n.attr("epsilon", 1e-5)))


def _pool_args(n: Node, x: Any) -> tuple[list[int], list[int], list[int], list[int], list[int], bool]:
    kernel = [int(k) for k in n.attr("kernel_shape")]
    strides, dilations, begin, end = _spatial(n, x, kernel)
    return kernel, strides, dilations, begin, end, bool(n.attr("ceil_mode", 0))


def average_pool(n: Node, x: Any) -> Any:
    kernel, strides, dilations, begin, end, ceil = _pool_args(n, x)
    if any(d != 1 for d in dilations):
        raise n.error(f"attribute dilations={dilations} is not supported for AveragePool")
    include = bool(n.attr("count_include_pad", 0))
    if begin != end:
        if not include:
            raise n.error(f"asymmetric pads {begin + end} with count_include_pad=0 are not supported")
        x, begin = _pad_first(x, begin, end)
    if any(2 * p > k for p, k in zip(begin, kernel, strict=True)):
        raise n.error(f"pads {begin} larger than half the kernel {kernel} are not supported")
    return _AVG[len(kernel)](x, kernel, strides, begin, ceil, include)


def max_pool(n: Node, x: Any) -> Any:
    if len(n.outputs) > 1 and n.outputs[1]:
        raise n.error("the Indices output is not supported")
    kernel, strides, dilations, begin, end, ceil = _pool_args(n, x)
    x, begin = _pad_first(x, begin, end, value=-math.inf)
    if any(2 * p > k for p, k in zip(begin, kernel, strict=True)):
        raise n.error(f"pads {begin} larger than half the kernel {kernel} are not supported")
    return _MAX[len(kernel)](x, kernel, strides, begin, dilations, ceil)


def global_average_pool(n: Node, x: Any) -> Any:
    if x.dim() == 4:
        return F.adaptive_avg_pool2d(x, 1)
    return x.mean(dim=list(range(2, x.dim())), keepdim=True)


def prepare_matmul(n: Node, values: list[Any]) -> list[Any]:
    """MatMul by a constant matrix is a Linear: keep its weight as (out, in)."""
    a, b = values
    if is_static(b) and b.ndim == 2 and np.issubdtype(b.dtype, np.floating) and not is_static(a):
        n.extra["linear"] = True
        n.extra["stored_as_1"] = "T"
        return [a, np.ascontiguousarray(b.T)]
    return values


def matmul(n: Node, a: Any, b: Any) -> Any:
    if n.extra.get("linear"):
        return F.linear(a, b)
    return torch.matmul(a, b)


def prepare_gemm(n: Node, values: list[Any]) -> list[Any]:
    """Gemm with a constant B is a Linear: store the weight (out, in) with alpha applied and the
    bias with beta applied, when C is a per-output vector."""
    a, b, c = [*values, None][:3]
    alpha, beta = float(n.attr("alpha", 1.0)), float(n.attr("beta", 1.0))
    if not is_static(b) or b.ndim != 2 or is_static(a):
        return values
    weight = b if n.attr("transB", 0) else b.T
    if alpha != 1.0:
        weight = weight * np.float32(alpha)  # one IEEE multiplication: the same on every CPU
    n.extra["linear"] = True
    n.extra["stored_as_1"] = f"gemm{alpha}{n.attr('transB', 0)}"
    out = weight.shape[0]
    if c is not None and is_static(c) and c.size in (1, out) and (c.ndim <= 1 or c.shape == (1, out)):
        bias = np.broadcast_to(c.reshape(-1), (out,)).astype(weight.dtype)
        if beta != 1.0:
            bias = bias * np.float32(beta)
        n.extra["linear_bias"] = True
        n.extra["stored_as_2"] = f"gemm{beta}"
        return [a, np.ascontiguousarray(weight), np.ascontiguousarray(bias)]
    return [a, np.ascontiguousarray(weight), c]


def gemm(n: Node, a: Any, b: Any, c: Any = None) -> Any:
    if n.attr("transA", 0):
        a = a.t()
    alpha, beta = float(n.attr("alpha", 1.0)), float(n.attr("beta", 1.0))
    if n.extra.get("linear"):
        if n.extra.get("linear_bias"):
            return F.linear(a, b, c)
        y = F.linear(a, b)
    else:
        y = torch.matmul(a, b.t() if n.attr("transB", 0) else b)
        if alpha != 1.0:
            y = y * alpha
    if c is None:
        return y
    return y + (c * beta if beta != 1.0 else c)
