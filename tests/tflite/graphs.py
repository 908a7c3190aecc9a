"""Small ``.tflite`` files for the reader's tests, written with the TFLite schema's own Python
object API (``ai_edge_litert.schema_py_generated``) and flatbuffers' Builder, and the TFLite
interpreter's outputs on them: the tests' oracle, never zoo's dependency."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest

schema = pytest.importorskip("ai_edge_litert.schema_py_generated")
flatbuffers = pytest.importorskip("flatbuffers")

OP = schema.BuiltinOperator
OPT = schema.BuiltinOptions
TYPES = {np.dtype("float32"): 0, np.dtype("float16"): 1, np.dtype("int32"): 2, np.dtype("uint8"): 3,
         np.dtype("int8"): 9, np.dtype("int64"): 4}


@dataclass
class Graph:
    """A one-subgraph model under construction: tensors, buffers, operators."""

    tensors: list[Any] = field(default_factory=list)
    buffers: list[Any] = field(default_factory=lambda: [schema.BufferT()])
    operators: list[Any] = field(default_factory=list)
    codes: list[tuple[int, str]] = field(default_factory=list)
    inputs: list[int] = field(default_factory=list)
    outputs: list[int] = field(default_factory=list)
    subgraphs: int = 1

    def tensor(self, shape: list[int] | tuple[int, ...], dtype: str = "float32", data: np.ndarray | None = None,
               quant: tuple[list[float], list[int], int] | None = None, sparsity: Any = None,
               raw: bytes | None = None) -> int:
        t = schema.TensorT()
        t.shape = list(shape)
        t.type = TYPES[np.dtype(dtype)]
        t.name = f"t{len(self.tensors)}"
        if data is not None or raw is not None:
            b = schema.BufferT()
            b.data = list(raw if raw is not None else np.ascontiguousarray(data, dtype).tobytes())
            self.buffers.append(b)
            t.buffer = len(self.buffers) - 1
        if quant is not None:
            q = schema.QuantizationParametersT()
            q.scale, q.zeroPoint, q.quantizedDimension = quant
            t.quantization = q
        t.sparsity = sparsity
        self.tensors.append(t)
        return len(self.tensors) - 1

    def const(self, value: Any, dtype: str = "float32") -> int:
        a = np.asarray(value, dtype)
        return self.tensor(a.shape, dtype, a)

    def input(self, shape: list[int], dtype: str = "float32", quant: Any = None) -> int:
        i = self.tensor(shape, dtype, quant=quant)
        self.inputs.append(i)
        return i

    def op(self, code: int | str, inputs: list[int], out_shapes: list[list[int]], options: Any = None,
           options_type: int = 0, custom: bytes | None = None, out_dtype: str = "float32",
           out_quant: Any = None) -> list[int]:
        key = (OP.CUSTOM, code) if isinstance(code, str) else (code, "")
        if key not in self.codes:
            self.codes.append(key)
        outs = [self.tensor(s, out_dtype, quant=out_quant) for s in out_shapes]
        o = schema.OperatorT()
        o.opcodeIndex = self.codes.index(key)
        o.inputs, o.outputs = list(inputs), outs
        o.builtinOptionsType, o.builtinOptions = options_type, options
        if custom is not None:
            o.customOptions = list(custom)
        self.operators.append(o)
        return outs

    def to_bytes(self) -> bytes:
        m = schema.ModelT()
        m.version = 3
        codes = []
        for code, name in self.codes:
            c = schema.OperatorCodeT()
            c.builtinCode, c.deprecatedBuiltinCode, c.version = code, min(code, 127), 1
            if name:
                c.customCode = name
            codes.append(c)
        m.operatorCodes = codes
        sg = schema.SubGraphT()
        sg.tensors, sg.operators, sg.inputs, sg.outputs = self.tensors, self.operators, self.inputs, self.outputs
        m.subgraphs = [sg] * self.subgraphs
        m.buffers = self.buffers
        b = flatbuffers.Builder(1024)
        b.Finish(m.Pack(b), file_identifier=b"TFL3")
        return bytes(b.Output())


def options(name: str, **fields: Any) -> tuple[Any, int]:
    """``(SomethingOptionsT with fields, its union type)``."""
    o = getattr(schema, f"{name}T")()
    for k, v in fields.items():
        setattr(o, k, v)
    return o, getattr(OPT, name)


def interpret(data: bytes, inputs: list[np.ndarray]) -> list[np.ndarray]:
    """TFLite's own outputs (its reference kernels, XNNPACK where a file needs it)."""
    from ai_edge_litert.interpreter import Interpreter, OpResolverType

    try:
        it = Interpreter(model_content=data, experimental_op_resolver_type=OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES)
        it.allocate_tensors()
    except RuntimeError:  # a custom operator only the XNNPACK delegate implements
        it = Interpreter(model_content=data)
        it.allocate_tensors()
    for d, x in zip(it.get_input_details(), inputs, strict=True):
        it.set_tensor(d["index"], x)
    it.invoke()
    return [it.get_tensor(d["index"]).copy() for d in it.get_output_details()]


def small_net() -> Graph:
    """A 16×16 RGB classifier's shape: convolution, depthwise convolution, residual add, mean,
    fully connected; SAME padding with stride 2 (asymmetric)."""
    rng = np.random.default_rng(7)

    def w(*shape: int) -> np.ndarray:
        return (rng.standard_normal(shape) * 0.3).astype(np.float32)

    g = Graph()
    x = g.input([1, 16, 16, 3])
    (a,) = g.op(OP.CONV_2D, [x, g.const(w(8, 3, 3, 3)), g.const(w(8))], [[1, 8, 8, 8]],
                *options("Conv2DOptions", padding=0, strideW=2, strideH=2, fusedActivationFunction=3))
    (b,) = g.op(OP.DEPTHWISE_CONV_2D, [a, g.const(w(1, 3, 3, 8)), g.const(w(8))], [[1, 8, 8, 8]],
                *options("DepthwiseConv2DOptions", padding=0, strideW=1, strideH=1, depthMultiplier=1))
    (c,) = g.op(OP.ADD, [a, b], [[1, 8, 8, 8]], *options("AddOptions", fusedActivationFunction=1))
    (d,) = g.op(OP.MEAN, [c, g.const([1, 2], "int32")], [[1, 8]], *options("ReducerOptions", keepDims=False))
    g.outputs = g.op(OP.FULLY_CONNECTED, [d, g.const(w(4, 8)), g.const(w(4))], [[1, 4]],
                     *options("FullyConnectedOptions"))
    return g
