"""A tensor's constant bytes as a numpy array in TFLite's layout: checked, dequantized, densified.

Floats come out as float32 (float16 weights widen exactly); an integer tensor with quantization
parameters (an int8 file's weights and biases) comes out dequantized, as float32; other integers
(shapes, axes, paddings) stay integers.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from zoo._errors import SpecError
from zoo._tflite.schema import DTYPES, Model, Sparsity, Tensor


def constant(model: Model, t: Tensor) -> np.ndarray[Any, Any] | None:
    if t.data is None:
        return None
    dtype = DTYPES.get(t.type)
    if dtype is None:
        raise SpecError(f"{model.where}: tensor {t.index} ({t.name!r}) holds {t.type_name} data, which zoo does not read")
    start, size = t.data
    if t.sparsity is not None:
        count = size // dtype.itemsize
        values = np.frombuffer(model.data, dtype, count, start)
        array = _densify(values, t.shape, t.sparsity, f"{model.where}: tensor {t.index} ({t.name!r})")
    else:
        count = int(np.prod(t.shape, dtype=np.int64))
        if size != count * dtype.itemsize:
            raise SpecError(f"{model.where}: tensor {t.index} ({t.name!r}) has {size:,} bytes of data; its shape "
                            f"{list(t.shape)} of {t.type_name} needs {count * dtype.itemsize:,}")
        array = np.frombuffer(model.data, dtype, count, start).reshape(t.shape)
    if t.quantized and t.quant is not None:
        return _dequantize(array, t, model.where)
    if dtype.kind == "f":
        return array.astype(np.float32)
    return array.copy()


def _dequantize(array: np.ndarray[Any, Any], t: Tensor, where: str) -> np.ndarray[Any, Any]:
    assert t.quant is not None
    scale = np.asarray(t.quant.scale, np.float64)
    zero = np.asarray(t.quant.zero_point or (0,) * len(scale), np.float64)
    if len(scale) > 1:
        axis = t.quant.axis
        if not 0 <= axis < array.ndim or array.shape[axis] != len(scale) or len(zero) != len(scale):
            raise SpecError(f"{where}: tensor {t.index} ({t.name!r}) has {len(scale)} quantization scales along "
                            f"axis {axis} of shape {list(array.shape)}")
        shape = [1] * array.ndim
        shape[axis] = len(scale)
        scale, zero = scale.reshape(shape), zero.reshape(shape)
    elif len(zero) != 1:
        zero = zero[:1]
    return ((array.astype(np.float64) - zero) * scale).astype(np.float32)


def _densify(values: np.ndarray[Any, Any], shape: tuple[int, ...], sp: Sparsity, what: str) -> np.ndarray[Any, Any]:
    """TFLite's sparse format (schema.fbs' SparsityParameters) made dense: walk the dimensions in
    traversal order, dense ones by their size and CSR ones by their segments and indices; a value's
    position at the last level is its index in ``values``."""
    n = len(shape)
    order, blocks = sp.traversal_order, sp.block_map
    if len(sp.dims) != len(order) or sorted(order) != list(range(len(order))) or len(order) != n + len(blocks) \
            or any(not 0 <= b < n for b in blocks):
        raise SpecError(f"{what}: its sparsity parameters do not describe a shape {list(shape)}")
    block_size = {blocks[k]: sp.dims[order.index(n + k)].size for k in range(len(blocks))}
    pos = np.zeros(1, np.int64)
    coords: list[np.ndarray[Any, Any]] = []
    for dm in sp.dims:
        if dm.dense:
            size = max(dm.size, 0)
            coords = [np.repeat(c, size) for c in coords] + [np.tile(np.arange(size), len(pos))]
            pos = (pos[:, None] * size + np.arange(size)).reshape(-1)
        else:
            seg, idx = dm.segments, dm.indices
            if seg is None or idx is None or (len(pos) and (pos.max() + 1 >= len(seg))):
                raise SpecError(f"{what}: a sparse dimension's segments are missing or too short")
            lo, hi = seg[pos], seg[pos + 1]
            counts = hi - lo
            if (counts < 0).any() or (len(hi) and hi.max() > len(idx)):
                raise SpecError(f"{what}: a sparse dimension's segments point outside its indices")
            total = int(counts.sum())
            starts = np.repeat(lo, counts)
            new_pos = starts + np.arange(total) - np.repeat(np.cumsum(counts) - counts, counts)
            coords = [np.repeat(c, counts) for c in coords] + [idx[new_pos]]
            pos = new_pos
    if len(pos) and pos.max() >= len(values):
        raise SpecError(f"{what}: its sparse indices name value {int(pos.max())}, and it has {len(values)}")
    dense_index = [np.zeros(len(pos), np.int64) for _ in range(n)]
    for level, k in enumerate(order):
        if k < n:
            dense_index[k] = dense_index[k] + coords[level] * block_size.get(k, 1)
        else:
            dense_index[blocks[k - n]] = dense_index[blocks[k - n]] + coords[level]
    for d in range(n):
        if len(pos) and (dense_index[d].min() < 0 or dense_index[d].max() >= shape[d]):
            raise SpecError(f"{what}: its sparse indices fall outside its shape {list(shape)}")
    dense = np.zeros(shape, values.dtype)
    dense[tuple(dense_index)] = values[pos]
    return dense
