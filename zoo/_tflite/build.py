"""From a parsed ``.tflite`` to a ``torch.nn.Module``: constants, steps, and the layout rule.

The layout rule: at the module's boundary every tensor has TFLite's shape (NHWC images);
inside, every rank-4 tensor is held channels-first (NCHW), as torch's convolutions, pools and
resizes take it, so a chain of layers exports with no transposes between them. Each operator's
mapping (``ops.py``, ``ops_nn.py``) takes and gives rank-4 tensors in that order and maps its
axes, paddings and broadcast operands to it.

Building plans the graph once on zero inputs: an operator whose inputs are all constants
(DEQUANTIZE of float16 weights, DENSIFY) is folded into a constant, and every other operator's
output shape is checked against the file's declaration, so a mismatch names the operator.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from torch import nn
from torch._subclasses.fake_tensor import FakeTensorMode

from zoo._errors import SpecError
from zoo._tflite.schema import Model, Operator, Tensor
from zoo._tflite.weights import constant

TO_NCHW = (0, 3, 1, 2)
TO_NHWC = (0, 2, 3, 1)
AXIS4 = (0, 2, 3, 1)  # a TFLite axis of a rank-4 tensor -> its axis in the internal layout


def internal_axis(axis: int, rank: int) -> int:
    axis = axis + rank if axis < 0 else axis
    return AXIS4[axis] if rank == 4 else axis


def to_internal(x: Any) -> Any:
    return x.permute(*TO_NCHW) if x.dim() == 4 else x


def to_tflite(x: Any) -> Any:
    return x.permute(*TO_NHWC) if x.dim() == 4 else x


def np_internal(a: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    return a.transpose(TO_NCHW) if a.ndim == 4 else a


class Fn(nn.Module):
    """A parameter-free step: ``fn(*inputs)``."""

    def __init__(self, fn: Callable[..., Any], name: str) -> None:
        super().__init__()
        self.fn = fn
        self.op_name = name

    def forward(self, *xs: Any) -> Any:
        return self.fn(*xs)


class Ctx:
    """What an operator's mapping reads: tensors, their constant values, the operator's options."""

    def __init__(self, model: Model) -> None:
        self.model = model
        self.where = model.where
        self.consts: dict[int, np.ndarray[Any, Any]] = {}

    def tensor(self, i: int) -> Tensor:
        return self.model.tensors[i]

    def shape(self, i: int) -> tuple[int, ...]:
        return self.model.tensors[i].shape

    def const(self, i: int) -> np.ndarray[Any, Any] | None:
        if i < 0:
            return None
        if i not in self.consts:
            value = constant(self.model, self.model.tensors[i])
            if value is None:
                return None
            self.consts[i] = value
        return self.consts[i]

    def need(self, op: Operator, position: int, what: str) -> np.ndarray[Any, Any]:
        value = self.const(op.inputs[position]) if position < len(op.inputs) else None
        if value is None:
            raise op.error(f"its {what} (input {position}) is computed at run time; zoo reads it only as a "
                           "constant in the file", self.where)
        return value

    def opt(self, op: Operator, fid: int, fmt: str = "<i", default: int = 0) -> int:
        return default if op.options is None else op.options.scalar(fid, fmt, default)

    def opt_real(self, op: Operator, fid: int, default: float) -> float:
        return default if op.options is None else float(op.options.number(fid, "<f", default))


Factory = Callable[[Ctx, Operator], tuple[nn.Module, list[int]]]


class TfliteModule(nn.Module):
    """A TFLite graph as a ``torch.nn.Module``: TFLite's input and output shapes, float math."""

    def __init__(self, inputs: tuple[int, ...], outputs: tuple[int, ...]) -> None:
        super().__init__()
        self.input_ids = inputs
        self.output_ids = outputs
        self.steps = nn.ModuleList()
        self.wiring: list[tuple[list[int], tuple[int, ...]]] = []

    def forward(self, *inputs: torch.Tensor) -> Any:
        env: dict[int, Any] = {i: to_internal(x) for i, x in zip(self.input_ids, inputs, strict=True)}
        for step, (ins, outs) in zip(self.steps, self.wiring, strict=True):
            result = step(*[env[i] if i in env else getattr(self, f"const_{i}") for i in ins])
            env.update(zip(outs, result if isinstance(result, tuple) else (result,), strict=True))
        results = tuple(to_tflite(env[i] if i in env else getattr(self, f"const_{i}")) for i in self.output_ids)
        return results[0] if len(results) == 1 else results


def build(model: Model, table: dict[str, Factory]) -> TfliteModule:
    ctx = Ctx(model)
    for i in model.inputs:
        t = model.tensors[i]
        if t.type != 0 and not (t.type in (3, 9) and t.quantized):
            raise SpecError(f"{model.where}: input {t.name!r} is {t.type_name}; zoo reads float32 inputs, and int8 or "
                            "uint8 ones with quantization parameters (read as their real values)")
    module = TfliteModule(model.inputs, model.outputs)
    # Shapes are planned on fake tensors (no arithmetic, as torch.export plans them); folds compute.
    fake = FakeTensorMode(allow_non_fake_inputs=True)
    with fake:
        env: dict[int, Any] = {i: to_internal(torch.zeros(model.tensors[i].shape)) for i in model.inputs}
    with torch.no_grad():
        for op in model.operators:
            step, runtime = table[op.name](ctx, op)
            outputs = tuple(o for o in op.outputs if o >= 0)
            if all(i not in env for i in runtime):  # every input is a constant: fold
                args = [torch.from_numpy(np_internal(_const_of(ctx, op, i)).copy()) for i in runtime]
                result = step(*args)
                for o, value in zip(outputs, result if isinstance(result, tuple) else (result,), strict=True):
                    _check_shape(ctx, op, o, value)
                    ctx.consts[o] = to_tflite(value).numpy()
                continue
            for i in runtime:
                if i not in env and not hasattr(module, f"const_{i}"):
                    value = torch.from_numpy(np_internal(_const_of(ctx, op, i)).copy())
                    module.register_buffer(f"const_{i}", value)
            with fake:
                result = step(*[env[i] if i in env else getattr(module, f"const_{i}") for i in runtime])
            for o, value in zip(outputs, result if isinstance(result, tuple) else (result,), strict=True):
                _check_shape(ctx, op, o, value)
                env[o] = value
            module.steps.append(step)
            module.wiring.append((runtime, outputs))
    for i in model.outputs:
        if i not in env:
            value = torch.from_numpy(np_internal(_const_of(ctx, None, i)).copy())
            if not hasattr(module, f"const_{i}"):
                module.register_buffer(f"const_{i}", value)
    return module.eval()


def _const_of(ctx: Ctx, op: Operator | None, i: int) -> np.ndarray[Any, Any]:
    value = ctx.const(i)
    if value is None:
        what = f"operator {op.index} ({op.name})" if op else "the graph's outputs"
        raise SpecError(f"{ctx.where}: {what} reads tensor {i} ({ctx.tensor(i).name!r}), which no operator "
                        "computes and the file holds no data for")
    return value


def _check_shape(ctx: Ctx, op: Operator, o: int, value: Any) -> None:
    declared = ctx.shape(o)
    got = tuple(to_tflite(value).shape)
    if got != declared:
        raise op.error(f"computes shape {list(got)} for tensor {o} ({ctx.tensor(o).name!r}), which the file "
                       f"declares {list(declared)}", ctx.where)
