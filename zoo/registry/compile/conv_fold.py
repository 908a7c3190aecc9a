"""Fold a constant scale or shift into the convolution next to it, as the TFLite converter
does (issue 45).

ONNX files exported from other frameworks keep affine steps as operators of their own:
PaddleOCR's PP-LCNetV3 scales and shifts most convolutions' outputs and inputs by learned
scalars, and its detector's transposed convolutions add their bias as a separate ``Add``,
so upstream's conv-BatchNorm fold does not reach the BatchNorm after them. Lowered as
written, each step is an elementwise NPU operator over a whole feature map, and the
un-fused BatchNorm becomes four of them reading full-size constants from flash: ppocr-det
cost 3.4× the TFLite flow's cycles on u55-128.

:func:`fold_into_convolutions` rewrites, before quantization:

- ``conv(x) * c``, ``conv(x) / c``, ``conv(x) + c`` and ``conv(x) - c``, with ``c`` a
  constant that is a scalar or one value per output channel and the convolution's output
  used by nothing else, into the convolution's weight and bias (1-D and 2-D convolutions,
  transposed ones too);
- ``conv(s * x + t)``, with scalars ``s`` and ``t``, into the weight and bias of every
  convolution that reads the step, when each has no padding (with padding the border would
  see ``t`` where it saw zeros).

Each fold is exact in real arithmetic; the quantizer then sees one convolution where there
were two or three operators, so there is one rounding fewer. ExecuTorch's quantizer folds only
the first case's multiply after a 2-D convolution (``FoldScalarMulIntoConvPass``, in place);
zoo folds every case before it runs, into new parameters, so the exported model is not changed.
Each fold makes a new convolution, which ``graph_edit`` puts in only where its output has the
shape and dtype of what it replaces.
"""

from __future__ import annotations

from typing import Any

from zoo.registry.compile.aten_graph import (
    attribute,
    constant,
    constant_step,
    scalar_affine,
    single_user,
    tensor_value,
)
from zoo.registry.compile.graph_edit import Edit, Replacement, rewrite_graph

__all__ = ["fold_into_convolutions"]

_WEIGHT, _BIAS, _PADDING, _GROUPS = 1, 2, 4, 6  # the same positions in all four convolutions' schemas


def _convolutions() -> dict[Any, bool]:
    """Each aten convolution zoo folds into, and whether it is transposed."""
    import torch

    aten = torch.ops.aten
    return {aten.conv1d.default: False, aten.conv2d.default: False,
            aten.conv_transpose1d.default: True, aten.conv_transpose2d.input: True}


def _argument(node: Any, index: int, name: str, default: Any) -> Any:
    return node.args[index] if len(node.args) > index else node.kwargs.get(name, default)


def _parameters(graph_module: Any, conv: Any) -> tuple[Any, Any] | None:
    """A convolution's weight and bias (zeros when it has none) as tensors, or None unless both are constants."""
    import torch

    if getattr(conv, "op", None) != "call_function" or conv.target not in _convolutions() or conv.kwargs:
        return None
    weight = constant(graph_module, conv.args[_WEIGHT])
    bias_arg = _argument(conv, _BIAS, "bias", None)
    output = tensor_value(conv)
    if weight is None or output is None or not output.is_floating_point():
        return None
    bias = torch.zeros(output.shape[1]) if bias_arg is None else constant(graph_module, bias_arg)
    return None if bias is None else (weight, bias)


def _per_channel(value: Any, output: Any) -> Any:
    """``value`` as one number per channel of ``output`` (N, C, ...), or None when it varies along another dimension."""
    if value.dim() > output.dim():
        return None
    shape = (1,) * (output.dim() - value.dim()) + tuple(value.shape)
    channels = output.shape[1]
    if any(size != 1 for axis, size in enumerate(shape) if axis != 1) or shape[1] not in (1, channels):
        return None
    return value.reshape(-1).expand(channels).clone()


def _output_scaled(weight: Any, scale: Any, transposed: bool, groups: int) -> Any:
    """``weight`` with each output channel's kernel multiplied by that channel's ``scale``."""
    spatial = (1,) * (weight.dim() - 2)
    if not transposed:  # (out, in / groups, *kernel)
        return weight * scale.reshape(-1, 1, *spatial)
    # transposed: (in, out / groups, *kernel), output channel o = group * (out / groups) + j
    per_group = weight.shape[1]
    grouped = weight.reshape(groups, weight.shape[0] // groups, per_group, *weight.shape[2:])
    return (grouped * scale.reshape(groups, 1, per_group, *spatial)).reshape(weight.shape)


def _folded(edit: Edit, conv: Any, source: Any, weight: Any, bias: Any) -> Any:
    """A new convolution like ``conv``, of ``source``, with the new ``weight`` and ``bias``."""
    trainable = bool(getattr(attribute(edit.graph_module, conv.args[_WEIGHT]), "requires_grad", False))  # QAT trains them
    args = list(conv.args) + [None] * max(0, _BIAS + 1 - len(conv.args))
    args[0] = source
    args[_WEIGHT] = edit.constant(conv, "_zoo_folded_weight", weight, trainable=trainable)
    args[_BIAS] = edit.constant(conv, "_zoo_folded_bias", bias, trainable=trainable)
    return edit.call(conv.target, tuple(args), before=conv, like=conv)


def _into_producer(edit: Edit, node: Any) -> Replacement | None:
    """Fold ``node`` (a constant step after a convolution that nothing else reads) into it."""
    graph_module = edit.graph_module
    step = constant_step(graph_module, node)
    if step is None:
        return None
    conv, kind, value = step
    parameters = _parameters(graph_module, conv)
    if parameters is None or single_user(conv) is not node:
        return None
    vector = _per_channel(value, tensor_value(conv))
    if vector is None:
        return None
    weight, bias = parameters
    if kind == "mul":
        groups = int(_argument(conv, _GROUPS, "groups", 1))
        weight = _output_scaled(weight, vector, _convolutions()[conv.target], groups)
        bias = bias * vector
    else:
        bias = bias + vector
    return Replacement(((node, _folded(edit, conv, conv.args[0], weight, bias)),), (conv,))


def _unpadded(conv: Any) -> bool:
    """A convolution (not transposed) with no padding: its every output reads only real inputs."""
    padding = _argument(conv, _PADDING, "padding", 0)
    return not _convolutions().get(conv.target, True) and all(int(p) == 0 for p in (padding if isinstance(padding, list | tuple) else [padding]))


def _into_consumers(edit: Edit, node: Any) -> Replacement | None:
    """Fold the scalar steps ending in ``node`` into every convolution that reads it, when none pads."""
    graph_module = edit.graph_module
    readers = list(node.users)
    if not readers or scalar_affine(graph_module, node) is None:
        return None
    folds = []
    for conv in readers:
        found = _parameters(graph_module, conv)
        if found is None or not _unpadded(conv) or conv.args[0] is not node:
            return None
        folds.append((conv, *found))
    chain: list[Any] = []
    scale, shift, source = 1.0, 0.0, node
    while (step := scalar_affine(graph_module, source)) is not None and (not chain or single_user(source) is chain[-1]):
        chain.append(source)
        source, s, t = step  # the readers see scale * source + shift, and source = s * earlier + t
        scale, shift = scale * s, scale * t + shift
    pairs = []
    for conv, weight, bias in folds:
        bias = bias + shift * weight.sum(dim=tuple(range(1, weight.dim())))
        pairs.append((conv, _folded(edit, conv, source, weight * scale, bias)))
    return Replacement(tuple(pairs), tuple(chain))


def _attributes(graph_module: Any) -> set[str]:
    return {str(node.target) for node in graph_module.graph.nodes if node.op == "get_attr"}


def _drop_unused(graph_module: Any, read_before: set[str]) -> None:
    """Delete the constants that were read before the folds, or made by one, and no node reads now
    (the replaced weights): an exported program would otherwise carry them."""
    graph = graph_module.graph
    for node in list(graph.nodes):
        if node.op == "get_attr" and not node.users:
            graph.erase_node(node)
    folded = {name for name, _ in graph_module.named_parameters(recurse=False) if name.startswith("_zoo_folded_")}
    for name in sorted((read_before | folded) - _attributes(graph_module)):
        owner, _, leaf = name.rpartition(".")
        delattr(graph_module.get_submodule(owner) if owner else graph_module, leaf)


def fold_into_convolutions(graph_module: Any) -> int:
    """Fold the steps above in ``graph_module`` (a ``torch.fx.GraphModule`` from torch.export);
    return how many folds were made (a fold into consumers takes a whole chain of steps)."""
    read_before = _attributes(graph_module)
    count = rewrite_graph(graph_module, _into_producer)
    count += rewrite_graph(graph_module, _into_consumers)
    if count:
        _drop_unused(graph_module, read_before)
        graph_module.graph.lint()
        graph_module.recompile()
    return count
