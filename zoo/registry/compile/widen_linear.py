"""Pad a narrow linear layer's input with zero features on the Ethos-U85, where Vela runs it
faster that way (issue 59).

ExecuTorch's Arm backend lowers every ``aten.linear`` as a 1×1 CONV2D of a 1×1 IFM
(``DecomposeLinearPass``), and Vela 5.1.0's U85 backend runs such a convolution far below its
MACs when the input is 32 features wide or fewer: built alone (``benchmarks/linear_forms.py``,
int8, u85-256), 32 → 64 features cost 1,374 cycles where 64 → 64 cost 414. The same layer with
its input padded to 64 features (a TOSA PAD, which Vela runs as two memory copies, about 220
cycles) and its weight padded with zero columns costs 632. The rule below is what that
benchmark measured (docs/measured.md, "Widening a narrow linear input"): the U85 only (on the U55 every
padded layer cost more; on u65-256 at most a tenth less, for twice the weights), an input of 9 to
32 features padded to 64, and only where the output is wide enough, for the U85's size, that the
convolution's saving outweighs the pad's copies by a tenth of the layer's cycles.

:func:`widen_narrow_linears` rewrites the quantized graph (``convert_pt2e``'s), after
calibration, fine-tuning and weight transforms, so that none of them sees the zero columns: every
scale and zero point is the one calibration chose for the layer as written. The padded input is
quantized as its source is (the pad's zeros are that quantization's zero point, exactly 0, as the
Arm quantizer's own rule for ``aten.pad`` gives), the int8 weight gets zero columns under the same
per-channel scales, and a zero weight adds nothing to the int32 accumulator: the NPU computes the
same integers. (Padding the float graph before quantization would not be exact: the matrix kernel
adds 64 columns in another order than 32, and the calibrated output scale moved by a rounding.)
Only a linear layer of one vector (its input's leading dimensions multiply to 1, the form
measured) whose input and weight come straight from their dequantization is widened. ``PINNED``
ties the rule to the upstream pass it works around; tests/registry/test_upstream_pins.py fails
when it changes.
"""

from __future__ import annotations

import math
from typing import Any

from zoo.registry.compile.aten_graph import attribute, free_attribute, tensor_value

__all__ = ["MAX_NARROW", "MIN_NARROW", "PINNED", "WIDE", "widen_narrow_linears", "widened_width", "widens_linears"]

_WIDENED = "_zoo_widened_weight"

# sha256 of the upstream pass that lowers every linear layer as a 1×1 convolution, as ExecuTorch 1.5.1 ships it.
PINNED = {
    "executorch/backends/arm/_passes/decompose_linear_pass.py":
        "f9916adc7795fde46848e972e1bcb4b508d9e1bb81dd501b5870f5a4e01c28ec",
}

WIDE = 64
"""The width a narrow input is padded to: 64 → N costs Vela what 48 → N does (413 cycles to 64 outputs on u85-256)."""
MIN_NARROW, MAX_NARROW = 9, 32
"""The input widths that may be padded (8 → 32 costs 239 cycles on u85-256, 484 padded; 48 → 64 costs 413)."""
_LEAST_OUTPUTS: dict[int, tuple[int | None, int | None]] = {
    128: (64, 32), 256: (64, 32), 512: (None, 64), 1024: (None, 128), 2048: (None, 128),
}
"""Per U85 size (its MACs): the fewest outputs for which padding saved at least a tenth of the
cycles, for an input of 9 to 16 features and of 17 to 32 (None: at no width measured). Both forms
cost about a fixed part plus a part per output, the padded one less per output, so the saving
grows with the outputs."""


def widens_linears(family: str, macs: int | None) -> bool:
    """Whether a build for a target of ``family`` and ``macs`` (``Target.family``, ``Target.macs``)
    gets the rewrite: the U85 sizes where it paid (the U55 and U65 gain nothing or little)."""
    return family == "u85" and any(_LEAST_OUTPUTS.get(macs or 0, (None, None)))


def widened_width(features: int, outputs: int, macs: int) -> int | None:
    """The width a linear layer's ``features``-wide input is padded to for ``outputs`` outputs on a
    U85 of ``macs`` MACs, or None where padding does not pay."""
    if not MIN_NARROW <= features <= MAX_NARROW or macs not in _LEAST_OUTPUTS:
        return None
    least = _LEAST_OUTPUTS[macs][0 if features <= 16 else 1]
    return WIDE if least is not None and outputs >= least else None


def _called(node: Any, name: str) -> bool:
    return getattr(node, "op", None) == "call_function" and str(node.target) == f"quantized_decomposed.{name}.default"


def _widen(graph_module: Any, linear: Any, macs: int) -> bool:
    """Pad ``linear``'s input and int8 weight where the rule says so; whether it did."""
    import torch

    if linear.op != "call_function" or linear.target != torch.ops.aten.linear.default or linear.kwargs:
        return False
    source, weight = linear.args[0], linear.args[1]
    output = tensor_value(linear)
    if not _called(source, "dequantize_per_tensor") or not _called(weight, "dequantize_per_channel"):
        return False
    codes = attribute(graph_module, weight.args[0])
    if output is None or codes is None or codes.dim() != 2 or weight.args[3] != 0 or codes.is_floating_point():
        return False
    if not all(isinstance(d, int) for d in output.shape) or math.prod(output.shape[:-1]) != 1:
        return False
    outputs, features = codes.shape
    width = widened_width(features, outputs, macs)
    if width is None:
        return False
    padded = torch.zeros(outputs, width, dtype=codes.dtype)
    padded[:, :features] = codes
    name = free_attribute(graph_module, _WIDENED)
    setattr(graph_module, name, padded)  # a plain tensor attribute, as convert_pt2e keeps its int8 weights
    quantize = torch.ops.quantized_decomposed.quantize_per_tensor.default
    graph = graph_module.graph
    with graph.inserting_before(linear):
        wide = graph.call_function(torch.ops.aten.constant_pad_nd.default, (source, [0, width - features], 0.0))
        if "custom" in linear.meta:  # the Arm quantizer's mark that the node is quantized, which its partitioner reads
            wide.meta["custom"] = dict(linear.meta["custom"])
        # The padded input keeps its source's quantization, as the Arm quantizer annotates a pad.
        wide = graph.call_function(source.target, (graph.call_function(quantize, (wide, *source.args[1:])),
                                                   *source.args[1:]))
        codes_node = graph.create_node("get_attr", name, (), {})  # as convert_pt2e adds its own (no buffer)
        wide_weight = graph.call_function(weight.target, (codes_node, *weight.args[1:]))
    linear.args = (wide, wide_weight, *linear.args[2:])
    if not weight.users:
        old = weight.args[0]
        graph.erase_node(weight)
        if not old.users:
            graph.erase_node(old)
            if not any(n.op == "get_attr" and n.target == old.target for n in graph.nodes):
                delattr(graph_module, str(old.target))
    return True


def widen_narrow_linears(graph_module: Any, macs: int) -> int:
    """Pad the input of each linear layer of ``graph_module`` (a quantized ``torch.fx.GraphModule``
    from ``convert_pt2e``) that :func:`widened_width` picks for a U85 of ``macs`` MACs, and its int8
    weight with zero columns; return how many."""
    count = sum(_widen(graph_module, node, macs) for node in list(graph_module.graph.nodes))
    if count:
        graph_module.graph.lint()
        graph_module.recompile()
    return count
