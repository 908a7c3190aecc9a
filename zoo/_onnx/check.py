"""What zoo refuses in an ONNX model before any of its tensors is converted.

A tensor whose data is kept outside the model file: onnx would read it relative to the
working folder (or the file's), so bytes that the model's identity (the sha256 of the file
and its sidecar) does not cover would reach the build. And a name assigned twice, which
onnx.checker refuses (its SSA rule) and which the reader would resolve by letting the last
one win. Only names and fields are read here, so the walk is cheap on big models.
"""

from __future__ import annotations

from collections import ChainMap
from collections.abc import Iterator, MutableMapping
from typing import Any

from zoo._errors import SpecError

_EXTERNAL = 1  # onnx.TensorProto.EXTERNAL
_INSIDE = ("zoo reads only what is inside the model file, so that its sha256 covers every byte that is built; "
           "save the model with its weights inside: "
           "onnx.save(onnx.load(path), new_path, save_as_external_data=False)")


def check_model(model: Any, where: str) -> None:
    """Raise SpecError for a tensor with external data anywhere in ``model`` (graphs, subgraphs,
    functions), or for a name that a graph defines twice."""
    for tensor, owner in _tensors(model):
        if tensor.data_location == _EXTERNAL or len(tensor.external_data):
            location = next((e.value for e in tensor.external_data if e.key == "location"), "?")
            raise SpecError(f"{where}: {owner} keeps its data in an external file ({location!r}); {_INSIDE}")
    _check_names(model.graph, ChainMap(), where, "")


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


def _check_names(graph: Any, outer: ChainMap[str, str], where: str, scope: str) -> None:
    """onnx.checker's rule: a graph's inputs and its initializers are each named once (an
    initializer may share a graph input's name), and no node output reuses a name defined
    before it in this graph or a graph around it."""
    defined = outer.new_child()
    _define_once(defined.maps[0], ((v.name, "a graph input") for v in graph.input), where, scope)
    initializers: dict[str, str] = {}
    names = [t.name for t in graph.initializer] + [s.values.name for s in graph.sparse_initializer]
    _define_once(initializers, ((n, "an initializer") for n in names), where, scope)
    defined.maps[0].update(initializers)
    for index, node in enumerate(graph.node):
        label = _label(node, index)
        for attr in node.attribute:
            for sub in _subgraphs(attr):
                _check_names(sub, defined, where, f" (in subgraph {attr.name} of {label}{scope})")
        for output in node.output:
            if output and output in defined:
                raise SpecError(f"{where}: {label}{scope} writes {output!r}, which {defined[output]} already "
                                "defines; an ONNX graph assigns each name once (onnx.checker refuses this too): "
                                "rename one of them")
            if output:
                defined[output] = f"the output of {label}"


def _define_once(names: MutableMapping[str, str], items: Iterator[tuple[str, str]], where: str, scope: str) -> None:
    for name, what in items:
        if name in names:
            raise SpecError(f"{where}: {what} {name!r}{scope} is defined twice; an ONNX graph names each input and "
                            "initializer once (onnx.checker refuses this too): rename or remove one of them")
        names[name] = what
