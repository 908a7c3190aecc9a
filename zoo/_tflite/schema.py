"""The parts of TFLite's schema (``tensorflow/lite/schema/schema.fbs``) zoo reads, checked.

``parse`` reads one ``.tflite`` file into plain dataclasses: its tensors (shape, type, where
their constant bytes lie, quantization, sparsity) and its operators (name, tensors, options).
Whatever zoo cannot read faithfully is refused here, before torch loads: more than one
subgraph, control flow, an operator zoo lacks (named, with its index), a buffer outside the
file, a huge shape. Torch-free, so that a listing can read a model's inputs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from zoo import _flatbuffer
from zoo._errors import SpecError
from zoo._flatbuffer import Table

# BuiltinOperator's codes 0 to 161, in order (schema.fbs).
BUILTIN_NAMES = ["ADD", "AVERAGE_POOL_2D", "CONCATENATION", "CONV_2D", "DEPTHWISE_CONV_2D", "DEPTH_TO_SPACE", "DEQUANTIZE", "EMBEDDING_LOOKUP", "FLOOR", "FULLY_CONNECTED", "HASHTABLE_LOOKUP", "L2_NORMALIZATION", "L2_POOL_2D", "LOCAL_RESPONSE_NORMALIZATION", "LOGISTIC", "LSH_PROJECTION", "LSTM", "MAX_POOL_2D", "MUL", "RELU", "RELU_N1_TO_1", "RELU6", "RESHAPE", "RESIZE_BILINEAR", "RNN", "SOFTMAX", "SPACE_TO_DEPTH", "SVDF", "TANH", "CONCAT_EMBEDDINGS", "SKIP_GRAM", "CALL", "CUSTOM", "EMBEDDING_LOOKUP_SPARSE", "PAD", "UNIDIRECTIONAL_SEQUENCE_RNN", "GATHER", "BATCH_TO_SPACE_ND", "SPACE_TO_BATCH_ND", "TRANSPOSE", "MEAN", "SUB", "DIV", "SQUEEZE", "UNIDIRECTIONAL_SEQUENCE_LSTM", "STRIDED_SLICE", "BIDIRECTIONAL_SEQUENCE_RNN", "EXP", "TOPK_V2", "SPLIT", "LOG_SOFTMAX", "DELEGATE", "BIDIRECTIONAL_SEQUENCE_LSTM", "CAST", "PRELU", "MAXIMUM", "ARG_MAX", "MINIMUM", "LESS", "NEG", "PADV2", "GREATER", "GREATER_EQUAL", "LESS_EQUAL", "SELECT", "SLICE", "SIN", "TRANSPOSE_CONV", "SPARSE_TO_DENSE", "TILE", "EXPAND_DIMS", "EQUAL", "NOT_EQUAL", "LOG", "SUM", "SQRT", "RSQRT", "SHAPE", "POW", "ARG_MIN", "FAKE_QUANT", "REDUCE_PROD", "REDUCE_MAX", "PACK", "LOGICAL_OR", "ONE_HOT", "LOGICAL_AND", "LOGICAL_NOT", "UNPACK", "REDUCE_MIN", "FLOOR_DIV", "REDUCE_ANY", "SQUARE", "ZEROS_LIKE", "FILL", "FLOOR_MOD", "RANGE", "RESIZE_NEAREST_NEIGHBOR", "LEAKY_RELU", "SQUARED_DIFFERENCE", "MIRROR_PAD", "ABS", "SPLIT_V", "UNIQUE", "CEIL", "REVERSE_V2", "ADD_N", "GATHER_ND", "COS", "WHERE", "RANK", "ELU", "REVERSE_SEQUENCE", "MATRIX_DIAG", "QUANTIZE", "MATRIX_SET_DIAG", "ROUND", "HARD_SWISH", "IF", "WHILE", "NON_MAX_SUPPRESSION_V4", "NON_MAX_SUPPRESSION_V5", "SCATTER_ND", "SELECT_V2", "DENSIFY", "SEGMENT_SUM", "BATCH_MATMUL", "PLACEHOLDER_FOR_GREATER_OP_CODES", "CUMSUM", "CALL_ONCE", "BROADCAST_TO", "RFFT2D", "CONV_3D", "IMAG", "REAL", "COMPLEX_ABS", "HASHTABLE", "HASHTABLE_FIND", "HASHTABLE_IMPORT", "HASHTABLE_SIZE", "REDUCE_ALL", "CONV_3D_TRANSPOSE", "VAR_HANDLE", "READ_VARIABLE", "ASSIGN_VARIABLE", "BROADCAST_ARGS", "RANDOM_STANDARD_NORMAL", "BUCKETIZE", "RANDOM_UNIFORM", "MULTINOMIAL", "GELU", "DYNAMIC_UPDATE_SLICE", "RELU_0_TO_1", "UNSORTED_SEGMENT_PROD", "UNSORTED_SEGMENT_MAX", "UNSORTED_SEGMENT_SUM", "ATAN2", "UNSORTED_SEGMENT_MIN", "SIGN", "BITCAST", "BITWISE_XOR", "RIGHT_SHIFT"]

SUPPORTED = frozenset(["ADD", "AVERAGE_POOL_2D", "CONCATENATION", "CONV_2D", "DEPTH_TO_SPACE", "DEPTHWISE_CONV_2D", "DEQUANTIZE", "DENSIFY", "DIV", "FULLY_CONNECTED", "HARD_SWISH", "LEAKY_RELU", "LOGISTIC", "MAXIMUM", "MAX_POOL_2D", "MEAN", "MINIMUM", "MUL", "PAD", "PADV2", "PRELU", "QUANTIZE", "RELU", "RELU6", "RELU_N1_TO_1", "RESHAPE", "RESIZE_BILINEAR", "RESIZE_NEAREST_NEIGHBOR", "SOFTMAX", "SPLIT", "SQUEEZE", "STRIDED_SLICE", "SUB", "TANH", "TRANSPOSE", "TRANSPOSE_CONV"])
# Custom operators zoo reads, by their custom_code.
CUSTOM_SUPPORTED = frozenset({"Convolution2DTransposeBias"})
_CONTROL_FLOW = frozenset({"IF", "WHILE", "CALL_ONCE", "CALL"})

# TensorType codes zoo reads, as numpy dtypes (schema.fbs: FLOAT32=0, FLOAT16=1, INT32=2, UINT8=3,
# INT64=4, BOOL=6, INT16=7, INT8=9).
DTYPES: dict[int, np.dtype[Any]] = {0: np.dtype("<f4"), 1: np.dtype("<f2"), 2: np.dtype("<i4"), 3: np.dtype("u1"), 4: np.dtype("<i8"),
          6: np.dtype("bool"), 7: np.dtype("<i2"), 9: np.dtype("i1")}
TYPE_NAMES = {0: "float32", 1: "float16", 2: "int32", 3: "uint8", 4: "int64", 5: "string", 6: "bool",
              7: "int16", 8: "complex64", 9: "int8", 10: "float64"}
MAX_RANK = 6
MAX_ELEMENTS = 1 << 30


class Reader(_flatbuffer.Reader):
    """The file's flatbuffer, read with zoo's bounds checks; ``where`` names the file in errors."""

    # No real model needs vectors this long; a hostile length stops here rather than in memory.
    max_vector = 1 << 28

    def __init__(self, data: bytes, where: str) -> None:
        super().__init__(data)
        self.where = where

    def fail(self, problem: str) -> SpecError:
        return SpecError(f"{self.where}: not a readable TFLite model: {problem}. "
                         "Check that the file is a complete .tflite (e.g. its sha256 against the source's)")

    def outside(self, what: str, pos: int, size: int) -> SpecError:
        return self.fail(f"{what} at byte {pos} ({size} bytes) lies outside the file's {self.end:,} bytes")


@dataclass(frozen=True)
class Quant:
    scale: tuple[float, ...]
    zero_point: tuple[int, ...]
    axis: int


@dataclass(frozen=True)
class DimMeta:
    """One dimension of a sparse tensor: dense (``size``), or CSR (``segments``, ``indices``)."""

    dense: bool
    size: int
    segments: np.ndarray[Any, Any] | None
    indices: np.ndarray[Any, Any] | None


@dataclass(frozen=True)
class Sparsity:
    traversal_order: tuple[int, ...]
    block_map: tuple[int, ...]
    dims: tuple[DimMeta, ...]


@dataclass(frozen=True)
class Tensor:
    index: int
    name: str
    shape: tuple[int, ...]
    type: int
    data: tuple[int, int] | None  # (start, size) of its constant bytes in the file
    quant: Quant | None
    sparsity: Sparsity | None

    @property
    def type_name(self) -> str:
        return TYPE_NAMES.get(self.type, f"type {self.type}")

    @property
    def quantized(self) -> bool:
        return self.quant is not None and self.type in (3, 7, 9, 2) and bool(self.quant.scale)


@dataclass(frozen=True)
class Operator:
    index: int
    name: str
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]
    options: Table | None
    custom: bytes

    def error(self, what: str, where: str) -> SpecError:
        return SpecError(f"{where}: operator {self.index} ({self.name}): {what}")


@dataclass(frozen=True)
class Model:
    data: bytes
    where: str
    tensors: tuple[Tensor, ...]
    operators: tuple[Operator, ...]
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]
    description: str


def parse(data: bytes, where: str) -> Model:
    r = Reader(data, where)
    if len(data) < 8:
        raise r.fail(f"the file has {len(data)} bytes")
    if data[4:8] != b"TFL3":
        raise SpecError(f"{where}: not a TFLite model (its bytes 4 to 8 are {data[4:8]!r}, a .tflite has b'TFL3')")
    root = r.root("model")
    subgraphs = root.tables(2, "subgraph list")
    if len(subgraphs) != 1:
        raise SpecError(f"{where}: the model has {len(subgraphs)} subgraphs; zoo reads models of exactly one "
                        "(no control flow, no signature-selected graphs): export the inference graph alone")
    if root.has(8) or root.has(9):
        raise SpecError(f"{where}: the model keeps tensors in external buffer files; zoo reads only the file's "
                        "own bytes, so that its sha256 covers the weights")
    graph = subgraphs[0]
    buffers = [_buffer(b, i, r) for i, b in enumerate(root.tables(4, "buffer list"))]
    codes = [_opcode(c, r) for c in root.tables(1, "operator-code list")]
    tensors = tuple(_tensor(t, i, buffers, r) for i, t in enumerate(graph.tables(0, "tensor list")))
    operators = tuple(_operator(op, i, codes, len(tensors), r) for i, op in enumerate(graph.tables(3, "operator list")))
    inputs = graph.ints(1, "the graph's inputs")
    outputs = graph.ints(2, "the graph's outputs")
    for i in inputs + outputs:
        if not 0 <= i < len(tensors):
            raise r.fail(f"a graph input or output names tensor {i}, and there are {len(tensors)}")
    return Model(data, where, tensors, operators, inputs, outputs, root.string(3, "the description") or "")


def _buffer(table: Table, index: int, r: Reader) -> tuple[int, int] | None:
    span = table.span(0, f"buffer {index}", 1)
    if span is not None and span[1]:
        return span
    offset, size = table.scalar(1, "<Q"), table.scalar(2, "<Q")
    if offset > 1 and size:  # offset 1 marks "no data" in files written with offsets
        if offset + size > len(r.data):
            raise SpecError(f"{r.where}: buffer {index} lies outside the file (bytes {offset:,} to {offset + size:,} "
                            f"of {len(r.data):,}); the file is truncated or damaged")
        return offset, size
    return None


def _opcode(table: Table, r: Reader) -> str:
    code = max(table.scalar(0, "<b"), table.scalar(3, "<i"))
    if code == 32:
        return "CUSTOM:" + (table.string(1, "a custom operator's name") or "")
    return BUILTIN_NAMES[code] if 0 <= code < len(BUILTIN_NAMES) else f"builtin operator {code}"


def _tensor(table: Table, index: int, buffers: list[tuple[int, int] | None], r: Reader) -> Tensor:
    name = table.string(3, f"tensor {index}'s name") or ""
    shape = table.ints(0, f"tensor {index}'s shape")
    if len(shape) > MAX_RANK or any(d < 0 for d in shape) or int(np.prod(shape, dtype=np.float64)) > MAX_ELEMENTS:
        raise SpecError(f"{r.where}: tensor {index} ({name!r}) declares shape {list(shape)}; zoo reads ranks up to "
                        f"{MAX_RANK} with at most {MAX_ELEMENTS:,} elements and no negative dim")
    if table.has(10):
        raise SpecError(f"{r.where}: tensor {index} ({name!r}) keeps its data in an external buffer; zoo reads only "
                        "the file's own bytes")
    buffer = table.scalar(2, "<I")
    if buffer >= max(len(buffers), 1):
        raise SpecError(f"{r.where}: tensor {index} ({name!r}) names buffer {buffer}, and the file has {len(buffers)}")
    data = buffers[buffer] if buffers else None
    q = table.table(4, f"tensor {index}'s quantization")
    quant = None
    if q is not None and q.has(2):
        quant = Quant(tuple(float(v) for v in q.numbers(2, "f", "a quantization scale")),
                      q.ints(3, "a quantization zero point", "q"), q.scalar(6, "<i"))
    sp = table.table(6, f"tensor {index}'s sparsity")
    sparsity = None if sp is None else Sparsity(sp.ints(0, "a traversal order"), sp.ints(1, "a block map"),
                                                 tuple(_dim_meta(d) for d in sp.tables(2, "a sparse dimension")))
    return Tensor(index, name, shape, table.scalar(1, "<b"), data, quant, sparsity)


_INDEX_TYPES = {1: "<i4", 2: "<u2", 3: "u1"}


def _dim_meta(table: Table) -> DimMeta:
    def vector(type_fid: int, fid: int) -> np.ndarray[Any, Any] | None:
        kind = table.scalar(type_fid, "<B")
        holder = table.table(fid, "a sparse index vector")
        if holder is None or kind not in _INDEX_TYPES:
            return None
        dtype = _INDEX_TYPES[kind]
        span = holder.span(0, "a sparse index vector", np.dtype(dtype).itemsize)
        if span is None:
            return np.zeros(0, np.int64)
        return np.frombuffer(holder.r.data, dtype, span[1], span[0]).astype(np.int64)

    return DimMeta(table.scalar(0, "<b") == 0, table.scalar(1, "<i"), vector(2, 3), vector(4, 5))


def _operator(table: Table, index: int, codes: list[str], n_tensors: int, r: Reader) -> Operator:
    code = table.scalar(0, "<I")
    if code >= len(codes):
        raise r.fail(f"operator {index} names operator code {code}, and the file has {len(codes)}")
    name = codes[code]
    if name in _CONTROL_FLOW:
        raise SpecError(f"{r.where}: operator {index} is {name}, control flow; zoo reads graphs without control flow "
                        "(one subgraph run once): unroll or remove it before converting")
    if name.startswith("CUSTOM:"):
        custom = name[len("CUSTOM:"):]
        if custom not in CUSTOM_SUPPORTED:
            raise SpecError(f"{r.where}: operator {index} is the custom operator {custom!r}, which zoo does not read "
                            f"(its custom operators: {', '.join(sorted(CUSTOM_SUPPORTED))}); convert the model "
                            "with builtin operators only")
        name = custom
    elif name not in SUPPORTED:
        raise SpecError(f"{r.where}: operator {index} is {name}, which zoo does not read. zoo reads these TFLite "
                        f"operators: {', '.join(sorted(SUPPORTED))}")
    inputs = table.ints(1, f"operator {index}'s inputs")
    outputs = table.ints(2, f"operator {index}'s outputs")
    for t in inputs + outputs:
        if not -1 <= t < n_tensors:
            raise r.fail(f"operator {index} ({name}) names tensor {t}, and there are {n_tensors}")
    custom_bytes = table.raw(5, f"operator {index}'s custom options") or b""
    return Operator(index, name, inputs, outputs, table.table(4, f"operator {index}'s options"), custom_bytes)
