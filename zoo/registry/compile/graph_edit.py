"""Apply a rewrite of an exported aten graph only where each replaced node keeps its shape and
dtype (issue 55).

A rewrite (``spatial_mean``, ``hard_activations``, ``conv_fold``) is a function that looks at
one node and, where its pattern matches, builds the replacement through an :class:`Edit` and
says which nodes the new ones replace (a :class:`Replacement`). :func:`rewrite_graph` applies it
node by node until nothing matches. The edit gives every node it adds the value its operator
computes on its arguments' example values (``meta['val']``, the fake tensors torch.export
recorded), so a replacement's value is what the graph would compute, not what the pattern
meant. A replacement whose shape or dtype differs from the node it replaces, or whose operator
refuses its arguments, is taken out again (its nodes and constants) and the graph is left as it
was: each pattern's rules say where it applies, and this holds whatever they miss. The fifth
review's case: ``clamp(x * k + 0.5, 0, 1)`` with a one-element ``k`` of shape (1, 1, 1, 1, 1)
gives a 5-D tensor for a 4-D ``x``, and its hard-sigmoid gave back a 4-D one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from zoo.registry.compile.aten_graph import add_constant, tensor_value

__all__ = ["Edit", "Replacement", "rewrite_graph", "same_value"]


@dataclass(frozen=True)
class Replacement:
    """What one rewrite replaces: every use of each ``old`` becomes a use of its ``new``, then the
    old nodes and ``dead`` (the nodes only they read) are erased."""

    pairs: tuple[tuple[Any, Any], ...]
    dead: tuple[Any, ...] = ()


class Edit:
    """The nodes and constants one rewrite adds to ``graph_module``, so they can be taken out again."""

    def __init__(self, graph_module: Any) -> None:
        self.graph_module = graph_module
        self.added: list[Any] = []

    def call(self, target: Any, args: tuple[Any, ...], *, before: Any, like: Any) -> Any:
        """A ``call_function`` node of ``target`` on ``args``, inserted before ``before``, with the
        meta of ``like`` (its module stack keeps module-name overrides working) and the value
        ``target`` gives on the arguments' example values (None when it refuses them)."""
        from torch.fx.passes.shape_prop import _extract_tensor_metadata

        graph = self.graph_module.graph
        with graph.inserting_before(before):
            node = graph.call_function(target, args)
        self.added.append(node)
        value = _evaluated(target, args)
        node.meta = dict(like.meta)
        node.meta["val"] = value
        node.meta.pop("tensor_meta", None)
        if value is not None and "tensor_meta" in like.meta:
            node.meta["tensor_meta"] = _extract_tensor_metadata(value)
        return node

    def constant(self, before: Any, stem: str, value: Any, *, trainable: bool = False) -> Any:
        """``aten_graph.add_constant``, taken out again with the rest if the rewrite is refused."""
        node = add_constant(self.graph_module, before, stem, value, trainable=trainable)
        self.added.append(node)
        return node

    def discard(self) -> None:
        """Erase what this edit added (the last first: a node may read an earlier one) and its constants."""
        graph = self.graph_module.graph
        for node in reversed(self.added):
            graph.erase_node(node)
            if node.op == "get_attr":
                delattr(self.graph_module, str(node.target))
        self.added.clear()


def _evaluated(target: Any, args: tuple[Any, ...]) -> Any:
    """``target`` run on the example values of ``args``' nodes; None when one has none or the operator refuses them."""
    import torch

    values = torch.fx.node.map_arg(args, lambda n: n.meta.get("val"))
    try:
        value = target(*values)
    except (RuntimeError, TypeError, ValueError, IndexError, AttributeError):
        return None
    return value if isinstance(value, torch.Tensor) else None


def same_value(old: Any, new: Any) -> bool:
    """Both nodes' example values are tensors of the same shape and dtype."""
    a, b = tensor_value(old), tensor_value(new)
    return a is not None and b is not None and a.dtype == b.dtype and tuple(a.shape) == tuple(b.shape)


def _commit(graph: Any, found: Replacement) -> None:
    for old, new in found.pairs:
        old.replace_all_uses_with(new)
    pending = [old for old, _ in found.pairs] + [n for n in found.dead if n not in {old for old, _ in found.pairs}]
    while free := [n for n in pending if not n.users]:
        for node in free:
            graph.erase_node(node)
            pending.remove(node)


def rewrite_graph(graph_module: Any, find: Callable[[Edit, Any], Replacement | None]) -> int:
    """Apply ``find``, node by node in graph order, to ``graph_module`` (a ``torch.fx.GraphModule``
    from torch.export) until it matches nowhere; return how many replacements were made.
    ``find(edit, node)`` builds its new nodes through ``edit`` and returns what they replace, or
    None; a replacement that changes a replaced node's shape or dtype is not made."""
    graph = graph_module.graph
    count = 0
    changed = True
    while changed:
        changed = False
        for node in list(graph.nodes):  # a refused edit erases only the nodes it added
            edit = Edit(graph_module)
            found = find(edit, node)
            if found is not None and found.pairs and all(same_value(old, new) for old, new in found.pairs):
                _commit(graph, found)
                count += 1
                changed = True
                break
            edit.discard()
    if count:
        graph.lint()
        graph_module.recompile()
    return count
