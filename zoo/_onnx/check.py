"""What zoo refuses in an ONNX model before any of its tensors is converted.

A tensor whose data is kept outside the model file: onnx would read it relative to the
working folder (or the file's), so bytes that the model's identity (the sha256 of the file
and its sidecar) does not cover would reach the build. Only fields are read here, so the
walk is cheap on big models.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from zoo._errors import SpecError

_EXTERNAL = 1  # onnx.TensorProto.EXTERNAL
_INSIDE = ("zoo reads only what is inside the model file, so that its sha256 covers every byte that is built; "
           "save the model with its weights inside: "
           "onnx.save(onnx.load(path), new_path, save_as_external_data=False)")


def check_model(model: Any, where: str) -> None:
    """Raise SpecError for a tensor with external data anywhere in ``model`` (graphs, subgraphs,
    functions)."""
    for tensor, owner in _tensors(model):
        if tensor.data_location == _EXTERNAL or len(tensor.external_data):
            location = next((e.value for e in tensor.external_data if e.key == "location"), "?")
            raise SpecError(f"{where}: {owner} keeps its data in an external file ({location!r}); {_INSIDE}")


def _tensors(model: Any) -> Iterator[tuple[Any, str]]:
    yield from _graph_tensors(model.graph, "")
    for info in model.training_info:
        for graph in (info.initialization, info.algorithm):
            yield from _graph_tensors(graph, f" (in training graph {graph.name!r})")
    for function in model.functions:
        for index, node in enumerate(function.node):
            yield from _node_tensors(node, index, f" (in function {function.domain}::{function.name})")


def _graph_tensors(graph: Any, scope: str) -> Iterator[tuple[Any, str]]:
    for tensor in graph.initializer:
        yield tensor, f"initializer {tensor.name!r}{scope}"
    for sparse in graph.sparse_initializer:
        yield sparse.values, f"sparse initializer {sparse.values.name!r}{scope}"
        yield sparse.indices, f"sparse initializer {sparse.values.name!r}'s indices{scope}"
    for index, node in enumerate(graph.node):
        yield from _node_tensors(node, index, scope)


def _node_tensors(node: Any, index: int, scope: str) -> Iterator[tuple[Any, str]]:
    for attr in node.attribute:
        owner = f"{_label(node, index)}{scope}: attribute {attr.name!r}"
        tensors = [*([attr.t] if attr.HasField("t") else []), *attr.tensors]
        sparse = [*([attr.sparse_tensor] if attr.HasField("sparse_tensor") else []), *attr.sparse_tensors]
        yield from ((t, owner) for t in tensors)
        yield from ((t, owner) for s in sparse for t in (s.values, s.indices))
        for graph in _subgraphs(attr):
            yield from _graph_tensors(graph, f" (in subgraph {attr.name} of {_label(node, index)}{scope})")


def _subgraphs(attr: Any) -> list[Any]:
    return [*([attr.g] if attr.HasField("g") else []), *attr.graphs]


def _label(node: Any, index: int) -> str:
    # As zoo._onnx.graph.Node.label says it, so that every refusal names a node the same way.
    named = f"node {node.name!r}" if node.name else f"node #{index} (outputs {', '.join(node.output)})"
    return f"{node.op_type} {named}"

