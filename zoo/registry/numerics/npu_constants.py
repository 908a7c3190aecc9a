"""The NPU-program level's second half: every weight, bias and scale the program's convolutions read,
against the TOSA graph's constants, so that a changed value fails the level whichever samples run.

The program side is ``command_stream.constants``: each CONV and DEPTHWISE of Vela's command stream,
its weight streams decoded to (O, H, W, I) and its scale records to (bias, scale, shift) per OFM
channel. The graph side is each CONV2D, DEPTHWISE_CONV2D and TRANSPOSE_CONV2D of the TOSA graph Vela
was given: its weights less their zero point (a depthwise's [KH, KW, C, M] as C*M channels of one input
each; a transposed convolution's as each reversed kernel Vela makes of it), its bias, and the
multiplier and shift of the RESCALE that reads its result (scale 1, shift 0 where none does). A
program channel is related to a graph channel by its weights: Vela splits an operation by OFM depth
into stripes, so each program operation is the graph operation, and the channel offset, that most of
its channels' weights name. Then every channel is compared in full: its weights, its
bias, and its scale as the exact rational ``scale / 2**shift`` (Regor may move a factor of two from
the multiplier to the shift). A program operation none of whose channels names a graph channel is
not related (a rewrite this check does not model); it is counted, never failed, and the samples
still check it.

numpy and the TOSA reader are imported inside functions: ``numerics`` loads on cache hits.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Comparison", "GraphConv", "compare", "graph_convs", "transposed_kernels"]

_INT = {"INT8": 1, "INT16": 2, "INT32": 4, "INT48": 6}


@dataclass(frozen=True)
class GraphConv:
    name: str
    """The operator as messages name it: its type, output tensor and index in the graph."""
    weights: Any
    """(O, H, W, I) int64, less the weight zero point."""
    bias: Any
    multiplier: Any
    shift: Any
    rescale_bits: int = 0
    """The width of what the RESCALE reading the result writes: 32 where a 48-bit accumulator (a 16-bit IFM's)
    is rescaled into 32 bits, which Vela folds into the convolution; 0 where no RESCALE reads it."""


@dataclass
class Comparison:
    operations: int = 0
    """Program operations compared with a graph operation."""
    unrelated: list[str] = field(default_factory=list)
    """Program operations no graph operation's weights name."""
    values: int = 0
    """Weights, biases and scales compared."""
    difference: str | None = None


def _dtype(tensor: Any) -> str:
    from tosa.DType import DType

    names = {v: k for k, v in vars(DType).items() if not k.startswith("_")}
    return str(names.get(tensor.Type(), tensor.Type()))


def _values(tensor: Any) -> Any:
    import numpy as np

    kind = _dtype(tensor)
    if kind not in _INT:
        raise ValueError(f"a {kind} constant")
    raw = tensor.DataAsNumpy()
    raw = np.zeros(0, dtype=np.uint8) if isinstance(raw, int) else np.asarray(raw, dtype=np.uint8)
    shape = tuple(int(d) for d in np.atleast_1d(tensor.ShapeAsNumpy()))
    count = int(np.prod(shape)) if shape else 1
    size = _INT[kind]
    raw = raw[:count * size]
    if size == 6:
        b = raw.reshape(-1, 6).astype(np.int64)
        v = sum(b[:, k] << (8 * k) for k in range(6))
        return np.where(v >= 1 << 47, v - (1 << 48), v).reshape(shape)
    return np.frombuffer(raw.tobytes(), dtype=f"<i{size}").astype(np.int64).reshape(shape)


def graph_convs(tosa: bytes) -> list[GraphConv]:
    """Each CONV2D, DEPTHWISE_CONV2D and TRANSPOSE_CONV2D of the graph whose weights, bias and rescale are
    constants; a TRANSPOSE_CONV2D as each kernel Vela may make of it (:func:`transposed_kernels`)."""
    import numpy as np
    from tosa.Op import Op
    from tosa.TosaGraph import TosaGraph

    kinds = {Op.CONV2D: "CONV2D", Op.DEPTHWISE_CONV2D: "DEPTHWISE_CONV2D", Op.TRANSPOSE_CONV2D: "TRANSPOSE_CONV2D"}
    block = TosaGraph.GetRootAs(tosa, 0).Regions(0).Blocks(0)
    tensors = {block.Tensors(i).Name(): block.Tensors(i) for i in range(block.TensorsLength())}
    ops = [block.Operators(i) for i in range(block.OperatorsLength())]
    rescale_of = {op.Inputs(0): op for op in ops if op.Op() == Op.RESCALE and op.InputsLength() >= 3}
    out = []
    for index, op in enumerate(ops):
        if op.Op() not in kinds or op.InputsLength() < 5:
            continue
        try:
            weights, bias, zp = (_values(tensors[op.Inputs(k)]) for k in (1, 2, 4))
            rescale = rescale_of.get(op.Outputs(0))
            multiplier, shift = ((_values(tensors[rescale.Inputs(1)]), _values(tensors[rescale.Inputs(2)]))
                                 if rescale is not None else (np.ones(1, np.int64), np.zeros(1, np.int64)))
            rescale_bits = 0 if rescale is None else 8 * _INT.get(_dtype(tensors[rescale.Outputs(0)]), 0)
        except (KeyError, ValueError):  # a tensor computed at run time, or a type not modelled: not a constant here
            continue
        if zp.size != 1 and (zp.size == 0 or (zp != zp.reshape(-1)[0]).any()):
            continue  # per-channel weight zero points are not modelled: the samples alone check this operation
        weights = weights - zp.reshape(-1)[0]
        if op.Op() == Op.DEPTHWISE_CONV2D:
            kh, kw, c, m = weights.shape
            weights = weights.transpose(2, 3, 0, 1).reshape(c * m, kh, kw, 1)
        name = f"{kinds[op.Op()]} {op.Outputs(0).decode()!r} (operator {index})"
        kernels = (transposed_kernels(weights, _stride(op)) if op.Op() == Op.TRANSPOSE_CONV2D
                   else [("", weights)])
        channels = weights.shape[0]
        for how, kernel in kernels:
            out.append(GraphConv(name + how, kernel, np.broadcast_to(bias.reshape(-1), (channels,)),
                                 np.broadcast_to(multiplier.reshape(-1), (channels,)),
                                 np.broadcast_to(shift.reshape(-1), (channels,)), rescale_bits))
    return out


def transposed_kernels(weights: Any, stride: tuple[int, int]) -> list[tuple[str, Any]]:
    """The stride-1 CONV kernels Vela 5.1.0 makes of a TRANSPOSE_CONV2D's (O, KH, KW, I) ``weights``, each with
    how it was taken. On the U55 and U65 (Regor's ``LegaliseTransposeConv2D``) one CONV over the IFM upscaled
    with zeros reads the kernel reversed in y and x. On the U85 (``DecomposeTransposeConv2DLargeStride``) each
    OFM phase (oy, ox) modulo the stride is one CONV whose kernel is the taps ``[ky::sy, kx::sx]`` reversed
    (``ReverseHWStrided``), ky < min(sy, KH) and kx < min(sx, KW); at stride 1 that is the first kernel again.
    Where the stride exceeds the kernel, the all-zero 1x1 CONV Regor adds to fill the OFM first is not modelled:
    it stays unrelated, as any rewrite this check does not model."""
    sy, sx = stride
    kh, kw = weights.shape[1:3]
    out = [(", its kernel reversed in y and x", weights[:, ::-1, ::-1, :])]
    if (sy, sx) != (1, 1):
        out += [(f", its taps [{ky}::{sy}, {kx}::{sx}] reversed in y and x",
                 weights[:, ky::sy, kx::sx, :][:, ::-1, ::-1, :]) for ky in range(min(sy, kh)) for kx in range(min(sx, kw))]
    return out


def _stride(op: Any) -> tuple[int, int]:
    """A TRANSPOSE_CONV2D's (y, x) stride, from its attribute."""
    from tosa.TransposeConv2dAttribute import TransposeConv2dAttribute

    table = op.Attribute()
    attribute = TransposeConv2dAttribute()
    attribute.Init(table.Bytes, table.Pos)
    sy, sx = (int(s) for s in attribute.StrideAsNumpy())
    return sy, sx


def compare(program: Sequence[Any], graph: Sequence[GraphConv]) -> Comparison:
    """``program``: ``command_stream.OpConstants`` in stream order. Stops at the first difference."""
    index: dict[tuple[tuple[int, ...], bytes], list[tuple[int, int]]] = {}
    for g, conv in enumerate(graph):
        for ch in range(conv.weights.shape[0]):
            index.setdefault((conv.weights.shape[1:], conv.weights[ch].tobytes()), []).append((g, ch))
    result = Comparison()
    for op in program:
        votes: Counter[tuple[int, int]] = Counter()
        for c in range(op.weights.shape[0]):
            for g, ch in index.get((op.weights.shape[1:], op.weights[c].tobytes()), []):
                votes[(g, ch - c)] += 1
        if not votes:
            result.unrelated.append(op.op)
            continue
        (g, offset), _ = votes.most_common(1)[0]
        result.operations += 1
        result.difference = _first_difference(op, graph, index, g, offset)
        result.values += op.weights.size + 3 * op.weights.shape[0]
        if result.difference is not None:
            break
    return result


def _scale(op: Any, conv: GraphConv, ch: int) -> tuple[int, int, str]:
    """The scale the program's ``op`` must hold for graph channel ``ch``: the RESCALE's, or 1 / 2^0 where the op
    writes a 32-bit OFM (Regor leaves the rescale of such a result to a later operation: ops-mix's MAXIMUM)
    unless that RESCALE itself writes 32 bits (a 48-bit accumulator's, folded into the op: a16w8's residual
    adds), or a 64-bit OFM (the 48-bit accumulator itself, unscaled, where two RESCALEs read it: each is a null
    pool of its own, which the samples check)."""
    if op.ofm_bits == 64:
        return 1, 0, "1 / 2^0 of a 64-bit OFM"
    if op.ofm_bits == 32 and conv.rescale_bits != 32:
        return 1, 0, "1 / 2^0 of a 32-bit OFM"
    multiplier, shift = int(conv.multiplier[ch]), int(conv.shift[ch])
    return multiplier, shift, f"the RESCALE's {multiplier} / 2^{shift} in the graph"


def _scale_equal(op: Any, c: int, conv: GraphConv, ch: int) -> bool:
    multiplier, graph_shift, _ = _scale(op, conv, ch)
    return graph_shift >= 0 and int(op.records.scale[c]) << graph_shift == multiplier << int(op.records.shift[c])


def _equal(op: Any, c: int, conv: GraphConv, ch: int) -> bool:
    """Channel ``c`` of the program's ``op`` holds channel ``ch`` of the graph's ``conv``: bias and scale (its
    weights are the index's key)."""
    return int(op.records.bias[c]) == int(conv.bias[ch]) and _scale_equal(op, c, conv, ch)


def _first_difference(op: Any, graph: Sequence[GraphConv], index: dict[tuple[tuple[int, ...], bytes],
                      list[tuple[int, int]]], g: int, offset: int) -> str | None:
    """The first channel of ``op`` that no graph channel holds in full. A channel whose weights, bias and scale
    are some graph channel's passes wherever it sits (a stripe of channels need not be contiguous in the graph);
    a differing one is explained against the channel the operation's offset names, ``g``'s ``c + offset``."""
    import numpy as np

    conv = graph[g]
    for c in range(op.weights.shape[0]):
        candidates = index.get((op.weights.shape[1:], op.weights[c].tobytes()), [])
        if any(_equal(op, c, graph[h], ch) for h, ch in candidates):
            continue
        ch = c + offset
        where = f"{op.op} (the TOSA graph's {conv.name}, output channel {ch})"
        if not 0 <= ch < conv.weights.shape[0]:
            return f"{where}: the graph operation has {conv.weights.shape[0]} output channels"
        mine, theirs = op.weights[c], conv.weights[ch]
        if mine.shape != theirs.shape:
            return f"{where}: the kernel is {list(mine.shape)} in the program, {list(theirs.shape)} in the graph"
        if not np.array_equal(mine, theirs):
            at = tuple(int(i) for i in np.argwhere(mine != theirs)[0])
            return (f"{where}: weight {list(at)} (kernel y, x, input channel) is {int(mine[at])} in the program, "
                    f"{int(theirs[at])} in the graph")
        bias = int(op.records.bias[c])
        if bias != int(conv.bias[ch]):
            return f"{where}: the bias is {bias} in the program, {int(conv.bias[ch])} in the graph"
        if not _scale_equal(op, c, conv, ch):
            return (f"{where}: the scale is {int(op.records.scale[c])} / 2^{int(op.records.shift[c])} in the "
                    f"program, {_scale(op, conv, ch)[2]}")
    return None
