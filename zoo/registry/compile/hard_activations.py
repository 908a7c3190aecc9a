"""Write hard-swish, hard-sigmoid and SiLU spelled out in arithmetic as the aten operator
each is, which ExecuTorch lowers to one TOSA TABLE (issue 45).

Exported graphs often carry these activations as their formulas: PaddleOCR's ONNX files
write hard-swish as ``x * clip(x + 3, 0, 6) / 6`` and hard-sigmoid as
``clip(0.2 x + 0.5, 0, 1)``, and hand-written PyTorch has ``x * F.relu6(x + 3) / 6`` and
``x * torch.sigmoid(x)``. Lowered as written, each is three or four elementwise NPU
operators over the whole feature map; the TFLite converter makes one HARD_SWISH or
LOGISTIC of them. ppocr-cls cost 1.118× the TFLite flow's cycles on u55-128, with 108
elementwise operators making 67 % of them.

:func:`fuse_hard_activations` rewrites, before quantization:

- ``x * clamp(x + 3, 0, 6) / 6`` (any order of the product and the division by 6) as
  ``hardswish(x)``;
- ``clamp(a x + b, 0, 1)``, where ``a x + b`` is a chain of scalar multiplications and
  additions, as ``hardsigmoid(6a x + 6b - 3)``: exactly the same function, one operator
  fewer, and the scale and shift fold into a convolution before it (``conv_fold``);
- ``clamp(x + 3, 0, 6) / 6`` as ``hardsigmoid(x)``;
- ``x * sigmoid(x)`` as ``silu(x)``.

Only floating tensors are rewritten, and only where the intermediate values have no other
use, so the graph computes the same function; ``graph_edit`` applies a rewrite only where the
activation's shape and dtype stay those of what it replaces.
"""

from __future__ import annotations

from typing import Any

from zoo.registry.compile.aten_graph import is_op, scalar_affine, single_user, tensor_value
from zoo.registry.compile.graph_edit import Edit, Replacement, rewrite_graph

__all__ = ["fuse_hard_activations"]

_TOLERANCE = 1e-6


def _near(value: float | None, expected: float) -> bool:
    return value is not None and abs(value - expected) <= _TOLERANCE * max(1.0, abs(expected))


def _bounds(node: Any) -> tuple[float | None, float | None]:
    """A clamp's, hardtanh's or relu6's lower and upper bounds (hardtanh's defaults are -1 and 1)."""
    import torch

    if node.target is torch.ops.aten.relu6.default:
        return 0.0, 6.0
    hardtanh = node.target is torch.ops.aten.hardtanh.default
    low = node.args[1] if len(node.args) > 1 else node.kwargs.get("min_val" if hardtanh else "min", -1.0 if hardtanh else None)
    high = node.args[2] if len(node.args) > 2 else node.kwargs.get("max_val" if hardtanh else "max", 1.0 if hardtanh else None)
    return (None if low is None else float(low)), (None if high is None else float(high))


def _sixth(graph_module: Any, node: Any, source: Any) -> bool:
    """``node`` divides ``source`` by 6 (or multiplies it by 1/6)."""
    step = scalar_affine(graph_module, node)
    return step is not None and step[0] is source and step[2] == 0.0 and _near(step[1], 1 / 6)


def _other_factor(node: Any, factor: Any) -> Any:
    """The operand ``node`` (a product of two tensors) multiplies ``factor`` by, or None."""
    if not is_op(node, "mul") or len(node.args) != 2:
        return None
    a, b = node.args
    return b if a is factor else a if b is factor else None


def _replace(edit: Edit, old: Any, target: Any, args: tuple[Any, ...], dead: list[Any]) -> Replacement:
    return Replacement(((old, edit.call(target, args, before=old, like=old)),), tuple(dead))


def _scaled(edit: Edit, before: Any, source: Any, scale: float, shift: float) -> Any:
    """``source * scale + shift`` as new nodes before ``before``; ``source`` when the step is the identity."""
    import torch

    aten = torch.ops.aten
    result = source
    for target, value, identity in ((aten.mul.Tensor, scale, 1.0), (aten.add.Tensor, shift, 0.0)):
        if not _near(value, identity):
            result = edit.call(target, (result, value), before=before, like=before)
    return result


def _hard_swish_or_sigmoid(edit: Edit, clamp: Any) -> Replacement | None:
    """``clamp(x + 3, 0, 6)``'s hard-swish or hard-sigmoid, or None."""
    import torch

    aten = torch.ops.aten
    graph_module = edit.graph_module
    plus = clamp.args[0]
    step = scalar_affine(graph_module, plus) if is_op(plus, "add") else None
    if step is None or step[1] != 1.0 or not _near(step[2], 3.0) or single_user(plus) is not clamp:
        return None
    x = step[0]
    user = single_user(clamp)
    if user is None:
        return None
    if _other_factor(user, clamp) is x:
        last = single_user(user)
        if last is not None and _sixth(graph_module, last, user):
            return _replace(edit, last, aten.hardswish.default, (x,), [user, clamp, plus])
        return None
    if _sixth(graph_module, user, clamp):
        product = single_user(user)
        if product is not None and _other_factor(product, user) is x:
            return _replace(edit, product, aten.hardswish.default, (x,), [user, clamp, plus])
        return _replace(edit, user, aten.hardsigmoid.default, (x,), [clamp, plus])
    return None


def _unit_clamp(edit: Edit, clamp: Any) -> Replacement | None:
    """``clamp(a x + b, 0, 1)`` as ``hardsigmoid(6a x + 6b - 3)``, or None."""
    import torch

    graph_module = edit.graph_module
    chain: list[Any] = []
    scale, shift = 1.0, 0.0
    node = clamp.args[0]
    while (step := scalar_affine(graph_module, node)) is not None and (single_user(node) is (chain[-1] if chain else clamp)):
        chain.append(node)
        source, s, t = step  # the clamp's input is scale * node + shift, and node = s * source + t
        scale, shift = scale * s, scale * t + shift
        node = source
    if not chain:
        return None
    x = node
    new_scale, new_shift = 6 * scale, 6 * shift - 3
    emitted = (not _near(new_scale, 1.0)) + (not _near(new_shift, 0.0)) + 1
    if emitted > len(chain) + 1:
        return None
    z = _scaled(edit, clamp, x, new_scale, new_shift)
    return _replace(edit, clamp, torch.ops.aten.hardsigmoid.default, (z,), chain)


def _silu(edit: Edit, sigmoid: Any) -> Replacement | None:
    import torch

    x = sigmoid.args[0]
    product = single_user(sigmoid)
    if product is None or _other_factor(product, sigmoid) is not x:
        return None
    return _replace(edit, product, torch.ops.aten.silu.default, (x,), [sigmoid])


def _rewrite(edit: Edit, node: Any) -> Replacement | None:
    value = tensor_value(node)
    if value is None or not value.is_floating_point():
        return None
    if is_op(node, "clamp"):
        low, high = _bounds(node)
        if low == 0.0 and high == 6.0:
            return _hard_swish_or_sigmoid(edit, node)
        if low == 0.0 and high == 1.0:
            return _unit_clamp(edit, node)
    return _silu(edit, node) if is_op(node, "sigmoid") else None


def fuse_hard_activations(graph_module: Any) -> int:
    """Rewrite the activations above in ``graph_module`` (a ``torch.fx.GraphModule`` from
    torch.export); return how many were rewritten."""
    return rewrite_graph(graph_module, _rewrite)
