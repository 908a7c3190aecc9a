"""Element-wise, activation and shape operators, in ``build.py``'s layout rule.

A rank-4 tensor arrives channels-first; an operator that reads axes (MEAN, CONCATENATION,
SPLIT, SOFTMAX, PAD, STRIDED_SLICE, TRANSPOSE) maps them, and one that changes the rank
(RESHAPE, SQUEEZE, a MEAN without keep_dims) goes through TFLite's own order.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from zoo._tflite.build import (
    AXIS4,
    TO_NCHW,
    TO_NHWC,
    Ctx,
    Fn,
    internal_axis,
    to_internal,
    to_tflite,
)
from zoo._tflite.schema import Operator

# ActivationFunctionType: NONE, RELU, RELU_N1_TO_1, RELU6, TANH, SIGN_BIT. TFLite's float kernels
# clamp to the RELU family's ranges only and leave TANH and SIGN_BIT unapplied; so does zoo.
_ACTIVATIONS = (None, F.relu, lambda x: torch.clamp(x, -1.0, 1.0), lambda x: torch.clamp(x, 0.0, 6.0), None, None)


def activation(x: Any, code: int) -> Any:
    fn = _ACTIVATIONS[code] if 0 <= code < len(_ACTIVATIONS) else None
    return x if fn is None else fn(x)


def fused(ctx: Ctx, op: Operator, fid: int) -> int:
    code = ctx.opt(op, fid, "<b")
    if not 0 <= code < len(_ACTIVATIONS):
        raise op.error(f"its fused activation {code} is not one of TFLite's (0 to 5)", ctx.where)
    return code


def _unary(fn: Any) -> Any:
    def make(ctx: Ctx, op: Operator) -> tuple[nn.Module, list[int]]:
        return Fn(fn, op.name), [op.inputs[0]]
    return make


def leaky_relu(ctx: Ctx, op: Operator) -> tuple[nn.Module, list[int]]:
    alpha = ctx.opt_real(op, 0, 0.0)
    return Fn(lambda x: F.leaky_relu(x, alpha), op.name), [op.inputs[0]]


def softmax(ctx: Ctx, op: Operator) -> tuple[nn.Module, list[int]]:
    beta = ctx.opt_real(op, 0, 1.0)
    rank = len(ctx.shape(op.inputs[0]))
    axis = internal_axis(-1, rank)
    return Fn(lambda x: torch.softmax(x * beta if beta != 1.0 else x, dim=axis), op.name), [op.inputs[0]]


class Broadcast(nn.Module):
    """ADD, SUB, MUL, DIV, MAXIMUM, MINIMUM with TFLite's broadcasting: an operand of lower rank
    than a rank-4 result is aligned right in NHWC, then made channels-first."""

    def __init__(self, fn: Any, ranks: tuple[int, int], out_rank: int, act: int) -> None:
        super().__init__()
        self.fn, self.ranks, self.out_rank, self.act = fn, ranks, out_rank, act

    def forward(self, a: Any, b: Any) -> Any:
        if self.out_rank == 4:
            a, b = (_as_rank4(t, r) for t, r in ((a, self.ranks[0]), (b, self.ranks[1])))
        return activation(self.fn(a, b), self.act)


def _as_rank4(t: Any, rank: int) -> Any:
    if rank == 4:
        return t
    return t.reshape((1,) * (4 - rank) + tuple(t.shape)).permute(*TO_NCHW)


def _binary(fn: Any, act_fid: int | None) -> Any:
    def make(ctx: Ctx, op: Operator) -> tuple[nn.Module, list[int]]:
        ranks = (len(ctx.shape(op.inputs[0])), len(ctx.shape(op.inputs[1])))
        act = 0 if act_fid is None else fused(ctx, op, act_fid)
        return Broadcast(fn, ranks, len(ctx.shape(op.outputs[0])), act), [op.inputs[0], op.inputs[1]]
    return make


class Prelu(nn.Module):
    alpha: torch.Tensor

    def __init__(self, alpha: np.ndarray[Any, Any], out_rank: int) -> None:
        super().__init__()
        if out_rank == 4:
            alpha = alpha.reshape((1,) * (4 - alpha.ndim) + alpha.shape).transpose(TO_NCHW)
        self.register_buffer("alpha", torch.from_numpy(np.ascontiguousarray(alpha, np.float32)))

    def forward(self, x: Any) -> Any:
        # Not relu(x) - alpha*relu(-x): the quantizer gives neg's output its own observer, and
        # ExecuTorch lowers an int8 neg to a TOSA NEGATE without rescaling to it (docs/upstream.md).
        return torch.clamp(x, min=0.0) + self.alpha * torch.clamp(x, max=0.0)


def prelu(ctx: Ctx, op: Operator) -> tuple[nn.Module, list[int]]:
    return Prelu(ctx.need(op, 1, "alpha"), len(ctx.shape(op.outputs[0]))), [op.inputs[0]]


def _relayout(out_shape: tuple[int, ...], name: str) -> Fn:
    return Fn(lambda x: to_internal(to_tflite(x).reshape(out_shape)), name)


def reshape(ctx: Ctx, op: Operator) -> tuple[nn.Module, list[int]]:
    # The output's declared shape is the reshape's: the build checks the element counts agree.
    return _relayout(ctx.shape(op.outputs[0]), op.name), [op.inputs[0]]


def mean(ctx: Ctx, op: Operator) -> tuple[nn.Module, list[int]]:
    rank = len(ctx.shape(op.inputs[0]))
    axes = sorted({internal_axis(int(a), rank) for a in ctx.need(op, 1, "axes").reshape(-1)})
    if any(not 0 <= a < rank for a in axes):
        raise op.error(f"axes {axes} are outside rank {rank}", ctx.where)
    out = ctx.shape(op.outputs[0])
    return Fn(lambda x: to_internal(to_tflite(torch.mean(x, dim=axes, keepdim=True)).reshape(out)), op.name), \
        [op.inputs[0]]


def concatenation(ctx: Ctx, op: Operator) -> tuple[nn.Module, list[int]]:
    rank = len(ctx.shape(op.outputs[0]))
    axis = internal_axis(ctx.opt(op, 0), rank)
    # A fused activation is not applied: TFLite's float kernel ignores it, and the interpreter is the reference.
    return Fn(lambda *xs: torch.cat(xs, dim=axis), op.name), list(op.inputs)


def split(ctx: Ctx, op: Operator) -> tuple[nn.Module, list[int]]:
    x = ctx.shape(op.inputs[1])
    axis_value = int(ctx.need(op, 0, "axis").reshape(-1)[0])
    n = ctx.opt(op, 0) or len(op.outputs)
    tf_axis = axis_value + len(x) if axis_value < 0 else axis_value
    if not 0 <= tf_axis < len(x) or x[tf_axis] % n:
        raise op.error(f"axis {axis_value} of {list(x)} does not split into {n} equal parts", ctx.where)
    axis, size = internal_axis(tf_axis, len(x)), x[tf_axis] // n
    return Fn(lambda t: tuple(torch.split(t, size, dim=axis)), op.name), [op.inputs[1]]


def pad(ctx: Ctx, op: Operator) -> tuple[nn.Module, list[int]]:
    x = ctx.shape(op.inputs[0])
    pads = ctx.need(op, 1, "paddings").astype(np.int64)
    if pads.shape != (len(x), 2) or (pads < 0).any():
        raise op.error(f"paddings {pads.tolist()} are not one non-negative (before, after) pair per axis of "
                       f"{list(x)}", ctx.where)
    value = 0.0
    if op.name == "PADV2" and len(op.inputs) > 2 and op.inputs[2] >= 0:
        value = float(ctx.need(op, 2, "constant value").reshape(-1)[0])
    order = [pads[a] for a in (TO_NCHW if len(x) == 4 else range(len(x)))]
    flat = [int(v) for pair in reversed(order) for v in pair]
    return Fn(lambda t: F.pad(t, flat, value=value), op.name), [op.inputs[0]]


def transpose(ctx: Ctx, op: Operator) -> tuple[nn.Module, list[int]]:
    rank = len(ctx.shape(op.inputs[0]))
    perm = [int(p) for p in ctx.need(op, 1, "permutation").reshape(-1)]
    if sorted(perm) != list(range(rank)):
        raise op.error(f"permutation {perm} is not one of rank {rank}", ctx.where)
    # internal -> TFLite order -> perm -> internal, as one permute.
    inner = list(TO_NHWC) if rank == 4 else list(range(rank))
    outer = list(TO_NCHW) if rank == 4 else list(range(rank))
    total = [inner[perm[o]] for o in outer]
    if total == list(range(rank)):
        return Fn(lambda t: t, op.name), [op.inputs[0]]
    return Fn(lambda t: t.permute(*total), op.name), [op.inputs[0]]


def strided_slice(ctx: Ctx, op: Operator) -> tuple[nn.Module, list[int]]:
    x = ctx.shape(op.inputs[0])
    begin, end, strides = (ctx.need(op, i, what).reshape(-1).astype(np.int64)
                           for i, what in ((1, "begin"), (2, "end"), (3, "strides")))
    begin_mask, end_mask, ellipsis, new_axis, shrink = (ctx.opt(op, f) for f in range(5))
    offset = bool(ctx.opt(op, 5, "<b"))
    if ellipsis or new_axis:
        raise op.error("its ellipsis_mask or new_axis_mask is set; zoo reads begin, end and shrink masks only",
                       ctx.where)
    if not len(begin) == len(end) == len(strides) == len(x) or (strides <= 0).any():
        raise op.error(f"begin {begin.tolist()}, end {end.tolist()} and strides {strides.tolist()} are not one "
                       f"positive step per axis of {list(x)}", ctx.where)
    slices = []
    for d, size in enumerate(x):
        b, e = int(begin[d]), int(end[d]) + (int(begin[d]) if offset else 0)
        start = 0 if begin_mask >> d & 1 else min(max(b + size if b < 0 else b, 0), size)
        stop = size if end_mask >> d & 1 else min(max(e + size if e < 0 else e, 0), size)
        if shrink >> d & 1:
            start = b + size if b < 0 else b
            stop = start + 1
        slices.append(slice(start, stop, int(strides[d])))
    order = [slices[AXIS4.index(a)] for a in range(4)] if len(x) == 4 else slices
    out = ctx.shape(op.outputs[0])
    index = tuple(order)
    if shrink:
        return Fn(lambda t: to_internal(to_tflite(t[index]).reshape(out)), op.name), [op.inputs[0]]
    return Fn(lambda t: t[index], op.name), [op.inputs[0]]


def _identity(ctx: Ctx, op: Operator) -> tuple[nn.Module, list[int]]:
    """DEQUANTIZE and QUANTIZE: the module computes in float, so both pass real values through
    (a constant input, float16 or int8 weights, is widened when the file is read)."""
    return Fn(lambda t: t.float() if not t.is_floating_point() else t, op.name), [op.inputs[0]]


TABLE_OPS = {
    "ADD": _binary(torch.add, 0), "SUB": _binary(torch.sub, 0), "MUL": _binary(torch.mul, 0),
    "DIV": _binary(torch.div, 0),
    # onnx2tf ends ONNX's HardSigmoid (ppocr-cls's squeeze-excite gates) with MINIMUM of a constant (issue 56).
    "MAXIMUM": _binary(torch.maximum, None), "MINIMUM": _binary(torch.minimum, None),
    "RELU": _unary(F.relu), "RELU6": _unary(lambda x: torch.clamp(x, 0.0, 6.0)),
    "RELU_N1_TO_1": _unary(lambda x: torch.clamp(x, -1.0, 1.0)), "LOGISTIC": _unary(torch.sigmoid),
    "TANH": _unary(torch.tanh), "HARD_SWISH": _unary(F.hardswish), "LEAKY_RELU": leaky_relu, "PRELU": prelu,
    "SOFTMAX": softmax, "RESHAPE": reshape, "SQUEEZE": reshape, "MEAN": mean, "CONCATENATION": concatenation,
    "SPLIT": split, "PAD": pad, "PADV2": pad, "TRANSPOSE": transpose, "STRIDED_SLICE": strided_slice,
    "DEQUANTIZE": _identity, "QUANTIZE": _identity, "DENSIFY": _identity,
}
