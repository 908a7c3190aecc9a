"""The module an ONNX graph becomes: its weights, and its runtime nodes in topological order.

Reading plans the graph once on zero inputs of the fixed shapes. A node whose inputs are all
known at load time (constants, shapes, and the integer arithmetic on them) is folded into a
numpy value; every other node becomes a step that ``forward`` runs, with its constant inputs
resolved to parameters, buffers, Python numbers or integer arrays.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from torch import nn

from zoo._errors import SpecError

OpFn = Callable[..., Any]

# Folding these on float constants is exact (IEEE operations rounded once, or no arithmetic):
# transcendental functions are not folded, since their results differ between CPUs.
_EXACT_FOLD = frozenset({
    "Add", "Cast", "Clip", "Concat", "Constant", "Div", "Flatten", "Gather", "Identity", "Mul", "Relu",
    "Reshape", "Shape", "Slice", "Sqrt", "Squeeze", "Sub", "Transpose", "Unsqueeze",
})


@dataclass(frozen=True)
class OpDef:
    """How one ONNX operator maps to torch.

    ``fn(node, *inputs)`` computes the outputs; ``data`` are the input positions that may be
    runtime tensors (the others must be known at load time: shapes, axes, scales). Constant
    float inputs at ``weights`` become ``nn.Parameter``s, other constant data inputs buffers;
    with ``scalars`` a one-element constant becomes a Python number. ``prepare`` may rewrite
    constant inputs before they are stored (a MatMul stores its weight transposed)."""

    fn: OpFn
    data: tuple[int, ...] = (0,)
    weights: tuple[int, ...] = ()
    scalars: bool = False
    prepare: Callable[[Node, list[Any]], list[Any]] | None = None


@dataclass
class Node:
    """One ONNX node as the operator mappings see it."""

    op_type: str
    name: str
    index: int
    outputs: tuple[str, ...]
    attrs: dict[str, Any]
    opset: int
    where: str
    extra: dict[str, Any] = field(default_factory=dict)

    def label(self) -> str:
        return f"node {self.name!r}" if self.name else f"node #{self.index} (outputs {', '.join(self.outputs)})"

    def error(self, message: str) -> SpecError:
        return SpecError(f"{self.where}: {self.op_type} {self.label()}: {message}")

    def attr(self, name: str, default: Any = None) -> Any:
        return self.attrs.get(name, default)


@dataclass(frozen=True)
class _Ref:
    kind: str  # "env": a runtime value; "attr": a parameter or buffer; "const": a value baked in
    value: Any


@dataclass(frozen=True)
class _Step:
    node: Node
    fn: OpFn
    args: tuple[_Ref, ...]


def is_static(value: Any) -> bool:
    return isinstance(value, np.ndarray)


class OnnxModule(nn.Module):
    """An ONNX graph as a ``torch.nn.Module`` with fixed input shapes."""

    def __init__(self, input_names: Sequence[str], output_names: Sequence[str]) -> None:
        super().__init__()
        self.input_names = tuple(input_names)
        self.output_names = tuple(output_names)
        self._steps: list[_Step] = []
        self._static_outputs: dict[str, np.ndarray[Any, Any]] = {}
        self._attr_of: dict[tuple[str, str], str] = {}

    def forward(self, *inputs: torch.Tensor) -> Any:
        env: dict[str, Any] = dict(zip(self.input_names, inputs, strict=True))
        for step in self._steps:
            args = [env[r.value] if r.kind == "env" else getattr(self, r.value) if r.kind == "attr" else r.value
                    for r in step.args]
            _bind(env, step.node.outputs, step.fn(step.node, *args))
        outs = tuple(env[n] if n in env else torch.from_numpy(self._static_outputs[n].copy())
                     for n in self.output_names)
        return outs[0] if len(outs) == 1 else outs

    def _store(self, key: tuple[str, str], value: np.ndarray[Any, Any], parameter: bool) -> str:
        """Register a constant once under a Python name made from its ONNX name."""
        if key in self._attr_of:
            return self._attr_of[key]
        base = "c_" + re.sub(r"\W", "_", key[0] + (f"_{key[1]}" if key[1] else "")).strip("_")
        name, n = base, 1
        while hasattr(self, name):
            n += 1
            name = f"{base}_{n}"
        tensor = torch.from_numpy(np.array(value, order="C", copy=True))
        if parameter and tensor.is_floating_point():
            self.register_parameter(name, nn.Parameter(tensor, requires_grad=False))
        else:
            self.register_buffer(name, tensor)
        self._attr_of[key] = name
        return name


def _bind(env: dict[str, Any], names: Sequence[str], result: Any) -> None:
    values = result if isinstance(result, tuple) else (result,)
    for name, value in zip(names, values, strict=False):
        if name:
            env[name] = value


def _to_torch(value: Any) -> Any:
    return torch.from_numpy(np.array(value, order="C", copy=True)) if is_static(value) else value


def _to_numpy(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return value.detach().cpu().numpy().copy()
    if isinstance(value, tuple):
        return tuple(_to_numpy(v) for v in value)
    return np.asarray(value)


def plan(module: OnnxModule, nodes: Sequence[Node], node_inputs: Sequence[Sequence[str]],
         constants: Mapping[str, np.ndarray[Any, Any]], examples: Sequence[torch.Tensor],
         table: Mapping[str, OpDef]) -> OnnxModule:
    """Fold what the fixed shapes decide, and record the rest as ``module``'s steps."""
    env: dict[str, Any] = dict(constants)
    env.update(zip(module.input_names, examples, strict=True))
    with torch.no_grad():
        for node, names in zip(nodes, node_inputs, strict=True):
            op = table[node.op_type]
            missing = [n for n in names if n and n not in env]
            if missing:
                raise node.error(f"input {missing[0]!r} is produced by no earlier node, initializer or graph input")
            values = [env[n] if n else None for n in names]
            for i, v in enumerate(values):
                if v is not None and not is_static(v) and i not in op.data:
                    raise node.error(f"input {i} ({names[i]!r}) depends on the model's input; zoo needs it "
                                     "to be a constant (give fixed input shapes)")
            present = [v for v in values if v is not None]
            if node.op_type == "Shape" or (all(is_static(v) for v in present) and _foldable(node, present)):
                _bind(env, node.outputs, _to_numpy(op.fn(node, *[_to_torch(v) for v in values])))
                continue
            if op.prepare is not None:
                values = op.prepare(node, values)
            rank = max((v.ndim for v in values if isinstance(v, torch.Tensor)), default=0)
            args = tuple(_resolve(module, node, op, i, names[i] if i < len(names) else "", v, rank)
                         for i, v in enumerate(values))
            runtime = [_example(module, a, env) for a in args]
            _bind(env, node.outputs, op.fn(node, *runtime))
            module._steps.append(_Step(node, op.fn, args))
    for name in module.output_names:
        if name not in env:
            raise SpecError(f"graph output {name!r} is produced by no node")
        if is_static(env[name]):
            module._static_outputs[name] = env[name]
    return module


def _foldable(node: Node, values: Sequence[Any]) -> bool:
    if node.op_type in _EXACT_FOLD:
        return True
    return all(np.issubdtype(v.dtype, np.integer) or v.dtype == np.bool_ for v in values)


def _resolve(module: OnnxModule, node: Node, op: OpDef, i: int, name: str, value: Any, rank: int) -> _Ref:
    """How step input ``i`` reaches the operator in ``forward``."""
    if value is None:
        return _Ref("const", None)
    if not is_static(value):
        return _Ref("env", name)
    if i not in op.data:
        return _Ref("const", value)  # shapes, axes, scales: known at load time
    # A one-element constant that does not raise the rank by broadcasting is a plain number,
    # as in ``x * 0.5``; a larger constant is a buffer, so that export sees it as a get_attr.
    if op.scalars and value.size == 1 and np.issubdtype(value.dtype, np.floating) and value.ndim <= rank:
        return _Ref("const", float(value.reshape(-1)[0]))
    tag = node.extra.get(f"stored_as_{i}", "")
    return _Ref("attr", module._store((name, tag), value, parameter=i in op.weights))


def _example(module: OnnxModule, ref: _Ref, env: Mapping[str, Any]) -> Any:
    if ref.kind == "env":
        return env[ref.value]
    if ref.kind == "attr":
        return getattr(module, ref.value)
    return ref.value
