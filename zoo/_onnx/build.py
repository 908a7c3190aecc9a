"""From an ``onnx.ModelProto`` to the planned module: nodes, constants and example inputs."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import onnx
import torch
from onnx import helper, numpy_helper

from zoo._errors import SpecError
from zoo._onnx.graph import Node, OnnxModule, plan
from zoo._onnx.ops import DTYPES
from zoo._onnx.table import TABLE

_DEFAULT_DOMAINS = ("", "ai.onnx")


def build(model: Any, shapes: Mapping[str, tuple[int, ...]], elem_types: Mapping[str, int], where: str) -> Any:
    graph = model.graph
    opset = next((int(o.version) for o in model.opset_import if o.domain in _DEFAULT_DOMAINS), None)
    if opset is None:
        raise SpecError(f"{where}: the model imports no version of the default ONNX operator set")
    nodes = []
    for index, proto in enumerate(graph.node):
        node = Node(op_type=proto.op_type, name=proto.name, index=index, outputs=tuple(proto.output),
                    attrs={a.name: _attribute(a) for a in proto.attribute}, opset=opset, where=where)
        if proto.domain not in _DEFAULT_DOMAINS or proto.op_type not in TABLE:
            op = proto.op_type if proto.domain in _DEFAULT_DOMAINS else f"{proto.domain}::{proto.op_type}"
            raise node.error(f"operator {op} is not supported. zoo reads these ONNX operators: "
                             f"{', '.join(sorted(TABLE))}")
        nodes.append(node)
    for name, elem in elem_types.items():
        if elem not in DTYPES:
            raise SpecError(f"{where}: input {name!r} has ONNX element type "
                            f"{onnx.TensorProto.DataType.Name(elem)}, which zoo does not read")
    constants = {t.name: np.asarray(numpy_helper.to_array(t)).copy() for t in graph.initializer}
    names = [n for n in shapes]
    module = OnnxModule(names, [o.name for o in graph.output])
    examples = [torch.zeros(shapes[n], dtype=DTYPES[elem_types[n]]) for n in names]
    plan(module, nodes, [list(p.input) for p in graph.node], constants, examples, TABLE)
    return module.eval()


def _attribute(attr: Any) -> Any:
    # A tensor attribute stays a TensorProto: Constant converts it with the rest of its data.
    if attr.type == onnx.AttributeProto.TENSOR:
        return attr.t
    if attr.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS):
        return attr  # no supported operator takes a subgraph; the op check refuses the node
    return helper.get_attribute_value(attr)

