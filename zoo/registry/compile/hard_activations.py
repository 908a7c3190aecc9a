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
use, so the graph computes the same function.
"""

from __future__ import annotations

from typing import Any

from zoo.registry.compile.aten_graph import derived, is_op, scalar_affine, single_user, tensor_value

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


def _replace(graph_module: Any, old: Any, target: Any, args: tuple[Any, ...], dead: list[Any]) -> None:
    graph = graph_module.graph
    with graph.inserting_before(old):
        new = graph.call_function(target, args)
    derived(new, old, target(*[tensor_value(a) if hasattr(a, "meta") else a for a in args]))
    old.replace_all_uses_with(new)
    for node in [old, *dead]:
        graph.erase_node(node)


def _scaled(graph_module: Any, before: Any, source: Any, scale: float, shift: float) -> Any:
    """``source * scale + shift`` as new nodes before ``before``; ``source`` when the step is the identity."""
    import torch

    aten = torch.ops.aten
    graph = graph_module.graph
    result = source
    for target, value, identity in ((aten.mul.Tensor, scale, 1.0), (aten.add.Tensor, shift, 0.0)):
        if _near(value, identity):
            continue
        with graph.inserting_before(before):
            node = graph.call_function(target, (result, value))
        derived(node, before, target(tensor_value(result), value))
        result = node
    return result


def _hard_swish_or_sigmoid(graph_module: Any, clamp: Any) -> bool:
    """Rewrite ``clamp(x + 3, 0, 6)``'s hard-swish or hard-sigmoid; True when done."""
    import torch

    aten = torch.ops.aten
    plus = clamp.args[0]
    step = scalar_affine(graph_module, plus) if is_op(plus, "add") else None
    if step is None or step[1] != 1.0 or not _near(step[2], 3.0) or single_user(plus) is not clamp:
        return False
    x = step[0]
    user = single_user(clamp)
    if user is None:
        return False
    if _other_factor(user, clamp) is x:
        last = single_user(user)
        if last is not None and _sixth(graph_module, last, user):
            _replace(graph_module, last, aten.hardswish.default, (x,), [user, clamp, plus])
            return True
        return False
    if _sixth(graph_module, user, clamp):
        product = single_user(user)
        if product is not None and _other_factor(product, user) is x:
            _replace(graph_module, product, aten.hardswish.default, (x,), [user, clamp, plus])
        else:
            _replace(graph_module, user, aten.hardsigmoid.default, (x,), [clamp, plus])
        return True
    return False


def _unit_clamp(graph_module: Any, clamp: Any) -> bool:
    """Rewrite ``clamp(a x + b, 0, 1)`` as ``hardsigmoid(6a x + 6b - 3)``; True when done."""
    import torch

    chain: list[Any] = []
    scale, shift = 1.0, 0.0
    node = clamp.args[0]
    while (step := scalar_affine(graph_module, node)) is not None and (single_user(node) is (chain[-1] if chain else clamp)):
        chain.append(node)
        source, s, t = step  # the clamp's input is scale * node + shift, and node = s * source + t
        scale, shift = scale * s, scale * t + shift
        node = source
    if not chain:
        return False
    x = node
    new_scale, new_shift = 6 * scale, 6 * shift - 3
    emitted = (not _near(new_scale, 1.0)) + (not _near(new_shift, 0.0)) + 1
    if emitted > len(chain) + 1:
        return False
    z = _scaled(graph_module, clamp, x, new_scale, new_shift)
    _replace(graph_module, clamp, torch.ops.aten.hardsigmoid.default, (z,), chain)
    return True


def _silu(graph_module: Any, sigmoid: Any) -> bool:
    import torch

    x = sigmoid.args[0]
    product = single_user(sigmoid)
    if product is None or _other_factor(product, sigmoid) is not x:
        return False
    _replace(graph_module, product, torch.ops.aten.silu.default, (x,), [sigmoid])
    return True


def _rewrite(graph_module: Any, node: Any) -> bool:
    value = tensor_value(node)
    if value is None or not value.is_floating_point():
        return False
    if is_op(node, "clamp"):
        low, high = _bounds(node)
        if low == 0.0 and high == 6.0:
            return _hard_swish_or_sigmoid(graph_module, node)
        if low == 0.0 and high == 1.0:
            return _unit_clamp(graph_module, node)
    return is_op(node, "sigmoid") and _silu(graph_module, node)


def fuse_hard_activations(graph_module: Any) -> int:
    """Rewrite the activations above in ``graph_module`` (a ``torch.fx.GraphModule`` from
    torch.export); return how many were rewritten."""
    count = 0
    while any(_rewrite(graph_module, node) for node in graph_module.graph.nodes):  # a rewrite erases nodes: look again
        count += 1
    if count:
        graph_module.graph.lint()
        graph_module.recompile()
    return count
