"""What zoo's rewrites of an exported aten graph share: reading a constant operand and adding
a constant (issue 45). ``graph_edit`` applies the rewrites.

The graph is a ``torch.fx.GraphModule`` from ``torch.export(...).module()``: weights and
tensor constants are ``get_attr`` nodes, a Python number stays an argument.
"""

from __future__ import annotations

from functools import cache
from typing import Any

__all__ = [
    "add_constant", "attribute", "constant", "constant_step", "free_attribute", "is_op", "scalar_affine",
    "single_user", "tensor_value",
]


@cache
def _ops() -> dict[str, tuple[Any, ...]]:
    import torch

    aten = torch.ops.aten
    return {
        "add": (aten.add.Tensor, aten.add.Scalar),
        "sub": (aten.sub.Tensor, aten.sub.Scalar),
        "mul": (aten.mul.Tensor, aten.mul.Scalar),
        "div": (aten.div.Tensor, aten.div.Scalar),
        "clamp": (aten.clamp.default, aten.hardtanh.default, aten.relu6.default),
        "sigmoid": (aten.sigmoid.default,),
    }


def is_op(node: Any, kind: str) -> bool:
    """``node`` calls one of the aten operators of ``kind`` (add, sub, mul, div, clamp, sigmoid)."""
    return getattr(node, "op", None) == "call_function" and node.target in _ops()[kind]


def constant_step(graph_module: Any, node: Any) -> tuple[Any, str, Any] | None:
    """``node`` as ``(source, "mul" or "add", c)``, ``source * c`` or ``source + c`` with ``c`` a
    constant tensor (a subtraction adds ``-c``, a division by non-zeros multiplies by ``1 / c``), or None.

    Only where ``node``'s value has ``source``'s shape and dtype: a constant with more dimensions
    than ``source``, even of one element, broadcasts the result to them, and a constant can
    promote the dtype; a step that does either is not a scale or a shift of ``source`` (issue 55)."""
    if node.kwargs.get("alpha", 1) != 1 or len(node.args) != 2:
        return None
    a, b = node.args
    for kind in ("mul", "add"):
        if is_op(node, kind):
            for source, other in ((a, b), (b, a)):
                if _same_as(node, source) and (value := constant(graph_module, other)) is not None:
                    return source, kind, value
            return None
    value = constant(graph_module, b) if _same_as(node, a) else None
    if value is None:
        return None
    if is_op(node, "sub"):
        return a, "add", -value
    if is_op(node, "div") and bool((value != 0).all()):
        return a, "mul", 1.0 / value
    return None


def _same_as(node: Any, source: Any) -> bool:
    """``source`` is a tensor node, and ``node``'s value has its shape and dtype."""
    result, value = tensor_value(node), tensor_value(source)
    return result is not None and value is not None and result.dtype == value.dtype and result.shape == value.shape


def scalar_affine(graph_module: Any, node: Any) -> tuple[Any, float, float] | None:
    """``node`` as ``source * scale + shift`` with scalar constants, or None."""
    step = constant_step(graph_module, node)
    if step is None or step[2].numel() != 1:
        return None
    source, kind, value = step
    number = float(value.reshape(()))
    return (source, number, 0.0) if kind == "mul" else (source, 1.0, number)


def tensor_value(node: Any) -> Any:
    """The example value torch.export recorded for ``node`` (a ``torch.Tensor``), or None."""
    import torch

    value = node.meta.get("val") if isinstance(node, torch.fx.Node) else None
    return value if isinstance(value, torch.Tensor) else None


def attribute(graph_module: Any, arg: Any) -> Any:
    """The tensor a ``get_attr`` node reads (a parameter keeps its ``requires_grad``), else None."""
    import torch

    if not isinstance(arg, torch.fx.Node) or arg.op != "get_attr":
        return None
    value = graph_module
    for part in str(arg.target).split("."):
        value = getattr(value, part, None)
    return value if isinstance(value, torch.Tensor) else None


def constant(graph_module: Any, arg: Any) -> Any:
    """``arg`` as a float32 tensor when it is a number or a ``get_attr`` of a floating tensor, else None."""
    import torch

    if isinstance(arg, bool):
        return None
    if isinstance(arg, int | float):
        return torch.tensor(float(arg))
    value = attribute(graph_module, arg)
    return value.detach().float() if value is not None and value.is_floating_point() else None


def single_user(node: Any) -> Any:
    """The one node that uses ``node``, or None when it has none or several."""
    users = list(node.users)
    return users[0] if len(users) == 1 else None


def free_attribute(graph_module: Any, stem: str) -> str:
    """The first ``<stem>_<n>`` that ``graph_module`` has no attribute of."""
    index = 0
    while hasattr(graph_module, f"{stem}_{index}"):
        index += 1
    return f"{stem}_{index}"


def add_constant(graph_module: Any, before: Any, stem: str, value: Any, *, trainable: bool = False) -> Any:
    """A ``get_attr`` node, inserted before ``before``, of ``value`` stored as a new parameter
    of ``graph_module`` (the quantizer treats it as a weight, as it does the one it replaces;
    ``trainable`` keeps it one that quantization-aware training updates)."""
    import torch

    name = free_attribute(graph_module, stem)
    graph_module.register_parameter(name, torch.nn.Parameter(value.detach().clone(), requires_grad=trainable))
    with graph_module.graph.inserting_before(before):
        node = graph_module.graph.get_attr(name)
    like = tensor_value(before)
    if like is not None and hasattr(like, "fake_mode"):
        node.meta["val"] = like.fake_mode.from_tensor(getattr(graph_module, name), static_shapes=True)
    return node
