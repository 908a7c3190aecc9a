"""Layer operators: convolutions, transposed convolutions, pools, fully connected, resizes.

Inputs arrive channels-first (``build.py``'s layout rule); filters are read from the file in
TFLite's OHWI order and stored as torch's, as parameters, so that quantization sees them.
TFLite's SAME padding puts the odd pixel after (bottom, right); an asymmetric padding becomes
an explicit ``F.pad`` before the layer.
"""

from __future__ import annotations

import math
import struct
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from zoo._tflite.build import Ctx, Fn, to_internal, to_tflite
from zoo._tflite.ops import activation, fused
from zoo._tflite.schema import Operator

Pads = tuple[int, int, int, int]  # top, bottom, left, right


def same_pads(size: int, kernel: int, stride: int, dilation: int) -> tuple[int, int]:
    out = -(-size // stride)
    total = max((out - 1) * stride + (kernel - 1) * dilation + 1 - size, 0)
    return total // 2, total - total // 2


def _pads(ctx: Ctx, op: Operator, padding: int, x_shape: tuple[int, ...], kh: int, kw: int,
          strides: tuple[int, int], dilations: tuple[int, int] = (1, 1)) -> Pads:
    if padding == 1:  # VALID
        return 0, 0, 0, 0
    if padding != 0:
        raise op.error(f"padding {padding} is neither SAME (0) nor VALID (1)", ctx.where)
    top, bottom = same_pads(x_shape[1], kh, strides[0], dilations[0])
    left, right = same_pads(x_shape[2], kw, strides[1], dilations[1])
    return top, bottom, left, right


def _strides(ctx: Ctx, op: Operator, h_fid: int, w_fid: int) -> tuple[int, int]:
    s = (ctx.opt(op, h_fid), ctx.opt(op, w_fid))
    if min(s) < 1:
        raise op.error(f"strides {list(s)} are not positive", ctx.where)
    return s


def _param(a: np.ndarray[Any, Any]) -> nn.Parameter:
    return nn.Parameter(torch.from_numpy(np.ascontiguousarray(a, np.float32)), requires_grad=False)


class Conv(nn.Module):
    def __init__(self, weight: np.ndarray[Any, Any], bias: np.ndarray[Any, Any] | None, stride: tuple[int, int],
                 dilation: tuple[int, int], pads: Pads, groups: int, act: int) -> None:
        super().__init__()
        self.weight = _param(weight)
        self.bias = None if bias is None else _param(bias)
        self.stride, self.dilation, self.groups, self.act = stride, dilation, groups, act
        top, bottom, left, right = pads
        self.symmetric = top == bottom and left == right
        self.pad_first = (left, right, top, bottom)
        self.padding = (top, left) if self.symmetric else (0, 0)

    def forward(self, x: Any) -> Any:
        if not self.symmetric:
            x = F.pad(x, self.pad_first)
        y = F.conv2d(x, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups)
        return activation(y, self.act)


def _bias(ctx: Ctx, op: Operator, position: int, channels: int) -> np.ndarray[Any, Any] | None:
    if position >= len(op.inputs) or op.inputs[position] < 0:
        return None
    bias = ctx.need(op, position, "bias")
    if bias.size != channels:
        raise op.error(f"its bias has {bias.size} values for {channels} output channels", ctx.where)
    return bias.reshape(channels).astype(np.float32)


def conv_2d(ctx: Ctx, op: Operator) -> tuple[nn.Module, list[int]]:
    x = ctx.shape(op.inputs[0])
    w = ctx.need(op, 1, "filter")
    if len(x) != 4 or w.ndim != 4 or x[3] % w.shape[3]:
        raise op.error(f"input {list(x)} and filter {list(w.shape)} are not an NHWC image and an OHWI filter", ctx.where)
    strides = _strides(ctx, op, 2, 1)
    dilations = (ctx.opt(op, 5, default=1), ctx.opt(op, 4, default=1))
    pads = _pads(ctx, op, ctx.opt(op, 0, "<b"), x, w.shape[1], w.shape[2], strides, dilations)
    module = Conv(w.transpose(0, 3, 1, 2), _bias(ctx, op, 2, w.shape[0]), strides, dilations, pads,
                  x[3] // w.shape[3], fused(ctx, op, 3))
    return module, [op.inputs[0]]


def depthwise_conv_2d(ctx: Ctx, op: Operator) -> tuple[nn.Module, list[int]]:
    x = ctx.shape(op.inputs[0])
    w = ctx.need(op, 1, "filter")
    if len(x) != 4 or w.ndim != 4 or w.shape[0] != 1 or w.shape[3] % x[3]:
        raise op.error(f"input {list(x)} and filter {list(w.shape)} are not an NHWC image and a 1HWC filter", ctx.where)
    multiplier = ctx.opt(op, 3, default=1)
    if multiplier and w.shape[3] != x[3] * multiplier:
        raise op.error(f"depth_multiplier {multiplier} does not give the filter's {w.shape[3]} channels "
                       f"from {x[3]}", ctx.where)
    strides = _strides(ctx, op, 2, 1)
    dilations = (ctx.opt(op, 6, default=1), ctx.opt(op, 5, default=1))
    pads = _pads(ctx, op, ctx.opt(op, 0, "<b"), x, w.shape[1], w.shape[2], strides, dilations)
    module = Conv(w.transpose(3, 0, 1, 2), _bias(ctx, op, 2, w.shape[3]), strides, dilations, pads, x[3],
                  fused(ctx, op, 4))
    return module, [op.inputs[0]]


class TransposeConv(nn.Module):
    def __init__(self, weight: np.ndarray[Any, Any], bias: np.ndarray[Any, Any] | None, stride: tuple[int, int],
                 crop: tuple[int, int], out_hw: tuple[int, int], act: int) -> None:
        super().__init__()
        self.weight = _param(weight.transpose(3, 0, 1, 2))  # OHWI -> torch's (in, out, kh, kw)
        self.bias = None if bias is None else _param(bias)
        self.stride, self.crop, self.out_hw, self.act = stride, crop, out_hw, act

    def forward(self, x: Any) -> Any:
        y = F.conv_transpose2d(x, self.weight, None, self.stride)
        (top, left), (h, w) = self.crop, self.out_hw
        short_h, short_w = max(top + h - y.shape[2], 0), max(left + w - y.shape[3], 0)
        if short_h or short_w:
            y = F.pad(y, (0, short_w, 0, short_h))
        y = y[:, :, top:top + h, left:left + w]
        if self.bias is not None:
            y = y + self.bias.reshape(1, -1, 1, 1)
        return activation(y, self.act)


def transpose_conv(ctx: Ctx, op: Operator) -> tuple[nn.Module, list[int]]:
    out = tuple(int(v) for v in ctx.need(op, 0, "output shape").reshape(-1))
    w = ctx.need(op, 1, "filter")
    x = ctx.shape(op.inputs[2])
    if len(out) != 4 or w.ndim != 4 or len(x) != 4 or w.shape[3] != x[3] or w.shape[0] != out[3]:
        raise op.error(f"output shape {list(out)}, filter {list(w.shape)} and input {list(x)} do not fit", ctx.where)
    strides = _strides(ctx, op, 2, 1)
    padding = ctx.opt(op, 0, "<b")
    crop = []
    for size, k, s in ((out[1], w.shape[1], strides[0]), (out[2], w.shape[2], strides[1])):
        # TFLite pads as for the forward convolution from the output's size to the input's.
        forward = -(-size // s) if padding == 0 else (size - k + s) // s
        crop.append(max((forward - 1) * s + k - size, 0) // 2 if padding in (0, 1) else -1)
    if -1 in crop:
        raise op.error(f"padding {padding} is neither SAME (0) nor VALID (1)", ctx.where)
    module = TransposeConv(w, _bias(ctx, op, 3, w.shape[0]), strides, (crop[0], crop[1]), (out[1], out[2]),
                           fused(ctx, op, 3))
    return module, [op.inputs[2]]


def transpose_conv_bias(ctx: Ctx, op: Operator) -> tuple[nn.Module, list[int]]:
    """MediaPipe's custom Convolution2DTransposeBias: input, OHWI filter, bias; its options are a
    C struct of padding (1 SAME, 2 VALID), stride_width and stride_height."""
    if len(op.custom) < 12:
        raise op.error(f"its custom options have {len(op.custom)} bytes, not the 12 of padding and strides", ctx.where)
    padding, stride_w, stride_h = struct.unpack_from("<iii", op.custom)
    if padding not in (1, 2) or min(stride_w, stride_h) < 1:
        raise op.error(f"padding {padding} and strides {[stride_h, stride_w]} are not SAME/VALID and positive", ctx.where)
    w = ctx.need(op, 1, "filter")
    x, out = ctx.shape(op.inputs[0]), ctx.shape(op.outputs[0])
    if w.ndim != 4 or len(x) != 4 or len(out) != 4 or w.shape[3] != x[3] or w.shape[0] != out[3]:
        raise op.error(f"filter {list(w.shape)}, input {list(x)} and output {list(out)} do not fit", ctx.where)
    crop = [0, 0] if padding == 2 else [max((i - 1) * s + k - o, 0) // 2 for i, s, k, o in
                                        ((x[1], stride_h, w.shape[1], out[1]), (x[2], stride_w, w.shape[2], out[2]))]
    module = TransposeConv(w, _bias(ctx, op, 2, w.shape[0]), (stride_h, stride_w), (crop[0], crop[1]),
                           (out[1], out[2]), 0)
    return module, [op.inputs[0]]


class Pool(nn.Module):
    count_scale: torch.Tensor

    def __init__(self, kind: str, kernel: tuple[int, int], stride: tuple[int, int], pads: Pads,
                 in_hw: tuple[int, int], act: int) -> None:
        super().__init__()
        self.kind, self.kernel, self.stride, self.act = kind, kernel, stride, act
        top, bottom, left, right = pads
        # A window over the whole image is a mean: zoo's compile pipeline lowers it as a pool where
        # the target takes that kernel, and as a sum elsewhere (U55's pools stop at small kernels).
        self.global_mean = kind == "avg" and kernel == in_hw and not any(pads)
        fits = top == bottom and left == right and 2 * top <= kernel[0] and 2 * left <= kernel[1]
        self.padding = (top, left) if fits else (0, 0)
        self.pad_first = None if fits else (left, right, top, bottom)
        if kind == "avg" and self.pad_first is not None:
            # The average over the window's pixels inside the image only, as TFLite takes it.
            ones = torch.ones(1, 1, *in_hw)
            counts = F.avg_pool2d(F.pad(ones, self.pad_first), kernel, stride, divisor_override=1)
            self.register_buffer("count_scale", (kernel[0] * kernel[1]) / counts)

    def forward(self, x: Any) -> Any:
        if self.global_mean:
            return activation(torch.mean(x, dim=(2, 3), keepdim=True), self.act)
        if self.kind == "max":
            if self.pad_first is not None:
                x = F.pad(x, self.pad_first, value=float(torch.finfo(torch.float32).min))
            y = F.max_pool2d(x, self.kernel, self.stride, self.padding)
        elif self.pad_first is not None:
            y = F.avg_pool2d(F.pad(x, self.pad_first), self.kernel, self.stride) * self.count_scale
        else:
            y = F.avg_pool2d(x, self.kernel, self.stride, self.padding, count_include_pad=False)
        return activation(y, self.act)


def _pool(kind: str) -> Any:
    def make(ctx: Ctx, op: Operator) -> tuple[nn.Module, list[int]]:
        x = ctx.shape(op.inputs[0])
        kernel = (ctx.opt(op, 4), ctx.opt(op, 3))
        if len(x) != 4 or min(kernel) < 1:
            raise op.error(f"input {list(x)} with a {list(kernel)} window is not an NHWC image pooled", ctx.where)
        strides = _strides(ctx, op, 2, 1)
        pads = _pads(ctx, op, ctx.opt(op, 0, "<b"), x, kernel[0], kernel[1], strides)
        return Pool(kind, kernel, strides, pads, (x[1], x[2]), fused(ctx, op, 5)), [op.inputs[0]]
    return make


class Linear(nn.Module):
    def __init__(self, weight: np.ndarray[Any, Any], bias: np.ndarray[Any, Any] | None, out: tuple[int, ...],
                 act: int) -> None:
        super().__init__()
        self.weight = _param(weight)
        self.bias = None if bias is None else _param(bias)
        self.out, self.act = out, act

    def forward(self, x: Any) -> Any:
        x = to_tflite(x).reshape(-1, self.weight.shape[1])
        return to_internal(activation(F.linear(x, self.weight, self.bias), self.act).reshape(self.out))


def fully_connected(ctx: Ctx, op: Operator) -> tuple[nn.Module, list[int]]:
    w = ctx.need(op, 1, "weights")
    x = ctx.shape(op.inputs[0])
    if ctx.opt(op, 1, "<b") != 0:
        raise op.error("its weights are in a shuffled format; zoo reads the default one", ctx.where)
    if w.ndim != 2 or math.prod(x) % w.shape[1]:
        raise op.error(f"input {list(x)} does not split into rows of the weights' {list(w.shape)} inputs", ctx.where)
    module = Linear(w, _bias(ctx, op, 2, w.shape[0]), ctx.shape(op.outputs[0]), fused(ctx, op, 0))
    return module, [op.inputs[0]]


def _resize_source(out: int, size: int, align: bool, half: bool) -> np.ndarray[Any, Any]:
    scale = (size - 1) / (out - 1) if align and out > 1 else size / out
    return (np.arange(out, dtype=np.float32) + (0.5 if half else 0.0)) * np.float32(scale) - (0.5 if half else 0.0)


def _interp_matrix(out: int, size: int, align: bool, half: bool) -> np.ndarray[Any, Any]:
    src = _resize_source(out, size, align, half)
    low = np.floor(src)
    lo = np.clip(low.astype(np.int64), 0, size - 1)
    hi = np.clip(np.ceil(src).astype(np.int64), 0, size - 1)
    frac = src - np.maximum(low, 0)
    m = np.zeros((out, size), np.float32)
    np.add.at(m, (np.arange(out), lo), 1 - frac)
    np.add.at(m, (np.arange(out), hi), frac)
    return m


def resize(kind: str) -> Any:
    def make(ctx: Ctx, op: Operator) -> tuple[nn.Module, list[int]]:
        x = ctx.shape(op.inputs[0])
        size = tuple(int(v) for v in ctx.need(op, 1, "size").reshape(-1))
        if len(x) != 4 or len(size) != 2 or min(size) < 1:
            raise op.error(f"input {list(x)} resized to {list(size)} is not an NHWC image to a height and width",
                           ctx.where)
        align, half = (ctx.opt(op, 2, "<b"), ctx.opt(op, 3, "<b")) if kind == "bilinear" else \
            (ctx.opt(op, 0, "<b"), ctx.opt(op, 1, "<b"))
        if kind == "bilinear":
            return _bilinear(size, (x[1], x[2]), bool(align), bool(half)), [op.inputs[0]]
        return _nearest(size, (x[1], x[2]), bool(align), bool(half)), [op.inputs[0]]
    return make


def _bilinear(size: tuple[int, ...], hw: tuple[int, int], align: bool, half: bool) -> nn.Module:
    if half and not align:
        return Fn(lambda x: F.interpolate(x, size=size, mode="bilinear", align_corners=False), "resize")
    if align:
        return Fn(lambda x: F.interpolate(x, size=size, mode="bilinear", align_corners=True), "resize")
    # TF's legacy sampling (source = destination * scale) is none of torch's modes: a matrix each axis.
    return MatrixResize(_interp_matrix(size[0], hw[0], False, False), _interp_matrix(size[1], hw[1], False, False).T)


class MatrixResize(nn.Module):
    rows: torch.Tensor
    cols: torch.Tensor

    def __init__(self, rows: np.ndarray[Any, Any], cols: np.ndarray[Any, Any]) -> None:
        super().__init__()
        self.register_buffer("rows", torch.from_numpy(np.ascontiguousarray(rows)))
        self.register_buffer("cols", torch.from_numpy(np.ascontiguousarray(cols)))

    def forward(self, x: Any) -> Any:
        return torch.matmul(self.rows, torch.matmul(x, self.cols))


class IndexResize(nn.Module):
    rows: torch.Tensor
    cols: torch.Tensor

    def __init__(self, rows: np.ndarray[Any, Any], cols: np.ndarray[Any, Any]) -> None:
        super().__init__()
        self.register_buffer("rows", torch.from_numpy(rows))
        self.register_buffer("cols", torch.from_numpy(cols))

    def forward(self, x: Any) -> Any:
        return x.index_select(2, self.rows).index_select(3, self.cols)


def _nearest_index(out: int, size: int, align: bool, half: bool) -> np.ndarray[Any, Any]:
    scale = np.float32((size - 1) / (out - 1) if align and out > 1 else size / out)
    src = (np.arange(out, dtype=np.float32) + np.float32(0.5 if half else 0.0)) * scale
    index = np.floor(src + np.float32(0.5)) if align else np.floor(src)
    clipped: np.ndarray[Any, Any] = np.clip(index.astype(np.int64), 0, size - 1)
    return clipped


def _nearest(size: tuple[int, ...], hw: tuple[int, int], align: bool, half: bool) -> nn.Module:
    rows, cols = (_nearest_index(o, s, align, half) for o, s in zip(size, hw, strict=True))
    if all(o % s == 0 and (idx == np.arange(o) // (o // s)).all() for idx, o, s in ((rows, size[0], hw[0]),
                                                                                  (cols, size[1], hw[1]))):
        factors = (size[0] // hw[0], size[1] // hw[1])
        return Fn(lambda x: F.interpolate(x, scale_factor=factors, mode="nearest"), "resize")
    return IndexResize(rows, cols)


def depth_to_space(ctx: Ctx, op: Operator) -> tuple[nn.Module, list[int]]:
    b = ctx.opt(op, 0)
    x = ctx.shape(op.inputs[0])
    if len(x) != 4 or b < 1 or x[3] % (b * b):
        raise op.error(f"block size {b} does not divide input {list(x)}'s channels", ctx.where)
    n, h, w, c = x[0], x[1], x[2], x[3] // (b * b)

    def run(t: Any) -> Any:  # TFLite's channel order is (row, column, channel): "DCR"
        t = t.reshape(n, b, b, c, h, w).permute(0, 3, 4, 1, 5, 2)
        return t.reshape(n, c, h * b, w * b)
    return Fn(run, "depth_to_space"), [op.inputs[0]]


TABLE_NN = {
    "CONV_2D": conv_2d, "DEPTHWISE_CONV_2D": depthwise_conv_2d, "TRANSPOSE_CONV": transpose_conv,
    "Convolution2DTransposeBias": transpose_conv_bias, "AVERAGE_POOL_2D": _pool("avg"), "MAX_POOL_2D": _pool("max"),
    "FULLY_CONNECTED": fully_connected, "RESIZE_BILINEAR": resize("bilinear"),
    "RESIZE_NEAREST_NEIGHBOR": resize("nearest"), "DEPTH_TO_SPACE": depth_to_space,
}
