"""Elementwise, activation and shape operators: one small function per ONNX operator.

Each takes the node and its inputs (runtime tensors, or constants: integer arrays for
shapes and axes, numbers or stored tensors for data) and returns its output(s).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from zoo._onnx.graph import Node

# ONNX TensorProto data types zoo can represent.
DTYPES = {1: torch.float32, 2: torch.uint8, 3: torch.int8, 5: torch.int16, 6: torch.int32, 7: torch.int64,
          9: torch.bool, 10: torch.float16, 11: torch.float64, 16: torch.bfloat16}


def ints(value: Any) -> list[int]:
    """A constant's values as Python ints (a shape, axes, indices)."""
    if isinstance(value, torch.Tensor):
        return [int(v) for v in value.reshape(-1).tolist()]
    return [int(v) for v in np.asarray(value).reshape(-1).tolist()]


def number(value: Any) -> float:
    if isinstance(value, float | int):
        return float(value)
    flat = value.reshape(-1)
    return float(flat[0].item() if isinstance(flat, torch.Tensor) else flat[0])


def axis(node: Node, a: int, rank: int) -> int:
    if not -rank <= a < rank:
        raise node.error(f"axis {a} is out of range for a rank-{rank} input")
    return a % rank


def _tensor(value: Any) -> torch.Tensor:
    return value if isinstance(value, torch.Tensor) else torch.tensor(value)


def add(n: Node, a: Any, b: Any) -> Any:
    return torch.add(_tensor(a), b) if not isinstance(a, torch.Tensor) else torch.add(a, b)


def sub(n: Node, a: Any, b: Any) -> Any:
    return torch.sub(_tensor(a), b)


def mul(n: Node, a: Any, b: Any) -> Any:
    return torch.mul(b, a) if not isinstance(a, torch.Tensor) else torch.mul(a, b)


def div(n: Node, a: Any, b: Any) -> Any:
    a = _tensor(a)
    if not a.is_floating_point() and not (isinstance(b, float) or (isinstance(b, torch.Tensor) and b.is_floating_point())):
        return torch.div(a, b, rounding_mode="trunc")  # ONNX integer division truncates
    return torch.div(a, b)


def pow_(n: Node, x: Any, y: Any) -> Any:
    if isinstance(y, float | int) and float(y) == 2.0:
        return x * x  # a multiplication quantizes and lowers; a general pow does not
    return torch.pow(x, y)


def sqrt(n: Node, x: Any) -> Any:
    return torch.sqrt(x)


def relu(n: Node, x: Any) -> Any:
    return F.relu(x)


def sigmoid(n: Node, x: Any) -> Any:
    return torch.sigmoid(x)


def tanh(n: Node, x: Any) -> Any:
    return torch.tanh(x)


def leaky_relu(n: Node, x: Any) -> Any:
    return F.leaky_relu(x, float(n.attr("alpha", 0.01)))


def hard_swish(n: Node, x: Any) -> Any:
    return F.hardswish(x)


def hard_sigmoid(n: Node, x: Any) -> Any:
    alpha, beta = float(n.attr("alpha", 0.2)), float(n.attr("beta", 0.5))
    if np.float32(alpha) == np.float32(1 / 6) and beta == 0.5:
        return F.hardsigmoid(x)
    return torch.clamp(x * alpha + beta, 0.0, 1.0)


def clip(n: Node, x: Any, lo: Any = None, hi: Any = None) -> Any:
    if n.opset < 11:
        low, high = n.attr("min"), n.attr("max")
    else:
        low = None if lo is None else number(lo)
        high = None if hi is None else number(hi)
    if low is None and high is None:
        return x
    if not x.is_floating_point():
        low, high = (None if low is None else int(low)), (None if high is None else int(high))
    return torch.clamp(x, low, high)


def identity(n: Node, x: Any) -> Any:
    return x


def cast(n: Node, x: Any) -> Any:
    to = int(n.attr("to"))
    if to not in DTYPES:
        raise n.error(f"attribute to={to}: casting to that ONNX data type is not supported")
    return x.to(DTYPES[to])


def constant(n: Node) -> Any:
    from onnx import numpy_helper

    if "value" in n.attrs:
        return torch.from_numpy(numpy_helper.to_array(n.attrs["value"]).copy())
    for key, dtype in (("value_float", torch.float32), ("value_floats", torch.float32),
                       ("value_int", torch.int64), ("value_ints", torch.int64)):
        if key in n.attrs:
            return torch.tensor(n.attrs[key], dtype=dtype)
    raise n.error(f"attributes {sorted(n.attrs)}: only value, value_float(s) and value_int(s) are supported")


def shape(n: Node, x: Any) -> Any:
    dims = list(x.shape)
    start, end = int(n.attr("start", 0)), n.attr("end")
    return np.array(dims[start:None if end is None else int(end)], dtype=np.int64)


def concat(n: Node, *xs: Any) -> Any:
    tensors = [_tensor(x) for x in xs]
    return torch.cat(tensors, axis(n, int(n.attr("axis")), tensors[0].dim()))


def reshape(n: Node, x: Any, target: Any) -> Any:
    dims = ints(target)
    if not n.attr("allowzero", 0):
        dims = [x.shape[i] if d == 0 else d for i, d in enumerate(dims)]
    if -1 in dims:  # concrete ints: the shapes are fixed
        known = int(np.prod([d for d in dims if d != -1]))
        dims[dims.index(-1)] = x.numel() // known if known else 0
    return x.reshape(dims)


def flatten(n: Node, x: Any) -> Any:
    a = int(n.attr("axis", 1))
    a = a + x.dim() if a < 0 else a
    outer = int(np.prod(x.shape[:a])) if a else 1
    return x.reshape(outer, x.numel() // outer if outer else 0)


def transpose(n: Node, x: Any) -> Any:
    perm = n.attr("perm")
    return x.permute(*(perm if perm is not None else reversed(range(x.dim()))))


def _axes(n: Node, given: Any) -> list[int] | None:
    """Axes from the attribute (older opsets) or the second input (newer)."""
    if given is not None:
        return ints(given)
    a = n.attr("axes")
    return None if a is None else [int(v) for v in a]


def squeeze(n: Node, x: Any, axes: Any = None) -> Any:
    chosen = _axes(n, axes)
    dims = [i for i, d in enumerate(x.shape) if d == 1] if chosen is None else \
        sorted(axis(n, a, x.dim()) for a in chosen)
    for d in dims:
        if x.shape[d] != 1:
            raise n.error(f"cannot squeeze axis {d} of size {x.shape[d]}")
    return x.reshape([s for i, s in enumerate(x.shape) if i not in dims])


def unsqueeze(n: Node, x: Any, axes: Any = None) -> Any:
    chosen = _axes(n, axes)
    if chosen is None:
        raise n.error("no axes given (attribute axes, or the second input from opset 13)")
    rank = x.dim() + len(chosen)
    dims = list(x.shape)
    for a in sorted(axis(n, a, rank) for a in chosen):
        dims.insert(a, 1)
    return x.reshape(dims)


def reduce_mean(n: Node, x: Any, axes: Any = None) -> Any:
    chosen = _axes(n, axes)
    if chosen is None or not chosen:
        if n.attr("noop_with_empty_axes", 0):
            return x
        chosen = list(range(x.dim()))
    return x.mean(dim=[axis(n, a, x.dim()) for a in chosen], keepdim=bool(n.attr("keepdims", 1)))


def gather(n: Node, x: Any, indices: Any) -> Any:
    x = _tensor(x)
    a = axis(n, int(n.attr("axis", 0)), x.dim())
    idx = np.asarray(ints(indices), dtype=np.int64).reshape(np.shape(indices))
    size = x.shape[a]
    if ((idx < -size) | (idx >= size)).any():
        raise n.error(f"index out of range for axis {a} of size {size}")
    flat = [int(i) % size for i in idx.reshape(-1)]
    if idx.ndim == 0:
        return x.select(a, flat[0])
    if flat == list(range(flat[0] if flat else 0, (flat[0] if flat else 0) + len(flat))):
        picked = x.narrow(a, flat[0] if flat else 0, len(flat))  # a run of indices is a slice
    else:
        picked = torch.index_select(x, a, torch.tensor(flat, dtype=torch.int64))
    return picked.reshape([*x.shape[:a], *idx.shape, *x.shape[a + 1:]])


def slice_(n: Node, x: Any, starts: Any = None, ends: Any = None, axes: Any = None, steps: Any = None) -> Any:
    if n.opset < 10:
        starts, ends, axes = n.attr("starts"), n.attr("ends"), n.attr("axes")
    begin, end = ints(starts), ints(ends)
    chosen = list(range(len(begin))) if axes is None else ints(axes)
    step = [1] * len(begin) if steps is None else ints(steps)
    index: list[Any] = [slice(None)] * x.dim()
    flips = []
    for a, b, e, s in zip(chosen, begin, end, step, strict=True):
        a = axis(n, a, x.dim())
        size = x.shape[a]
        if s == 0:
            raise n.error("a step of 0")
        b = b + size if b < 0 else b
        e = e + size if e < 0 else e
        if s > 0:
            index[a] = slice(min(max(b, 0), size), min(max(e, 0), size), s)
        else:  # reversed: flip, then step forward over the same elements
            b, e = min(max(b, -1), size - 1), min(max(e, -1), size - 1)
            index[a] = slice(size - 1 - b, size - 1 - e, -s) if b > e else slice(0, 0)
            flips.append(a)
    if flips:
        x = torch.flip(x, flips)
    return x[tuple(index)]


def softmax(n: Node, x: Any) -> Any:
    if n.opset >= 13:
        return torch.softmax(x, axis(n, int(n.attr("axis", -1)), x.dim()))
    a = axis(n, int(n.attr("axis", 1)), x.dim())
    if a == x.dim() - 1:
        return torch.softmax(x, a)
    # Before opset 13 the input is flattened to 2-D at axis and normalised over the second part.
    outer = int(np.prod(x.shape[:a])) if a else 1
    return torch.softmax(x.reshape(outer, -1), 1).reshape(x.shape)
