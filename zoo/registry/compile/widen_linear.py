"""Pad a narrow linear layer's input with zero features on the Ethos-U85, where Vela runs it
faster that way (issue 59).

ExecuTorch's Arm backend lowers every ``aten.linear`` as a 1×1 CONV2D of a 1×1 IFM
(``DecomposeLinearPass``; T vectors are a batch of T, which Vela lays out as an H×W map), and Vela
5.1.0's U85 backend runs such a convolution far below its MACs when the input is 32 features wide
or fewer (it picks "kernel first" over "depth first" there, which wastes half of a 1×1 kernel's
MACs; the int8 TFLite flow's FULLY_CONNECTED is not a convolution and escapes it): built alone
(``benchmarks/linear_forms.py``, int8, u85-256), 32 → 64 features cost 1,374 cycles where
64 → 64 cost 414. The same layer with its input padded to 64 features (a TOSA PAD, which Vela
runs as a fill of the zeros and a copy of the input, about 110 cycles each; the copy goes where
the operator before the pad can write its output into the padded tensor, not after a RESHAPE
nor from the graph's input) and its weight padded with zero columns costs 632. The rule below is
what that benchmark measured (docs/measured.md, "Widening a narrow linear input"): the U85 only
(on the U55 every padded layer cost more; on u65-256 at most a tenth less, for twice the
weights), an input of 9 to 32 features padded to 64, and only where the output is wide enough,
for the U85's size, that the convolution's saving outweighs the pad's copies by a tenth of the
layer's cycles; for 2 to 4 vectors (pipeline 17) only 17 to 32 features and 64 outputs or more.

:func:`widen_narrow_linears` rewrites the quantized graph (``convert_pt2e``'s), after
calibration, fine-tuning and weight transforms, so that none of them sees the zero columns: every
scale and zero point is the one calibration chose for the layer as written. The padded input is
quantized as its source is (the pad's zeros are that quantization's zero point, exactly 0, as the
Arm quantizer's own rule for ``aten.pad`` gives), the int8 weight gets zero columns under the same
per-channel scales, and a zero weight adds nothing to the int32 accumulator: the NPU computes the
same integers. (Padding the float graph before quantization would not be exact: the matrix kernel
adds 64 columns in another order than 32, and the calibrated output scale moved by a rounding.)
Only a linear layer of at most four vectors (its input's leading dimensions multiply to 1 to 4,
the forms measured to pay) whose input and weight come straight from their dequantization is widened. ``PINNED``
ties the rule to the upstream pass it works around; tests/registry/test_upstream_pins.py fails
when it changes.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from zoo.registry.compile.aten_graph import attribute, free_attribute, tensor_value

__all__ = [
    "MAX_NARROW", "MAX_VECTORS", "MIN_NARROW", "PINNED", "WIDE", "pad_linear_input", "widen_narrow_linears",
    "widened_width", "widens_linears",
]

_WIDENED = "_zoo_widened_weight"

# sha256 of the upstream pass that lowers every linear layer as a 1×1 convolution, as ExecuTorch 1.5.1 ships it.
PINNED = {
    "executorch/backends/arm/_passes/decompose_linear_pass.py":
        "f9916adc7795fde46848e972e1bcb4b508d9e1bb81dd501b5870f5a4e01c28ec",
}

WIDE = 64
"""The width a narrow input is padded to: 64 → N costs Vela what 48 → N does (413 cycles to 64 outputs
on u85-256); 40 or 48 cost 2 to 9 % less than 64 (the pad is smaller), short of the tenth that would
change the rule."""
MIN_NARROW, MAX_NARROW = 9, 32
"""The input widths that may be padded. Vela 5.1.0 runs a 1×1 convolution of at most 32 input features
"kernel first" on the U85 and of 33 or more "depth first", the latter at up to twice the rate for a 1×1
kernel; so 8 → N padded to 16 or 32 costs twice what it did, and padded to 48 or 64 still more than
it did (8 → 128: 761 cycles on u85-256, 982 padded to 48)."""
_LEAST_OUTPUTS: dict[int, tuple[int | None, int | None]] = {
    128: (64, 32), 256: (64, 32), 512: (None, 64), 1024: (None, 128), 2048: (None, 128),
}
"""Per U85 size (its MACs): the fewest outputs for which padding one vector saved at least a tenth
of the cycles, for an input of 9 to 16 features and of 17 to 32 (None: at no width measured). Both
forms cost about a fixed part plus a part per output, the padded one less per output, so the saving
grows with the outputs."""
MAX_VECTORS = 4
"""The most vectors a padded input may hold. For 2 to 4 vectors (``[1, T, C]``), 17 to 32 features
and 64 outputs or more, padding saved 22 to 63 % on u85-128, -256 and -512; for 9 to 16 features, or
32 outputs, it did not, nor for 8 vectors and more on every size (the pad's copies grow with the
vectors, the convolution's cost far less)."""
_FEW_VECTORS_LEAST = {128: 64, 256: 64, 512: 64}
"""Per U85 size: the fewest outputs for an input of 2 to 4 vectors of 17 to 32 features."""


def widens_linears(family: str, macs: int | None) -> bool:
    """Whether a build for a target of ``family`` and ``macs`` (``Target.family``, ``Target.macs``)
    gets the rewrite: the U85 sizes where it paid (the U55 and U65 gain nothing or little)."""
    return family == "u85" and any(_LEAST_OUTPUTS.get(macs or 0, (None, None)))


def widened_width(features: int, outputs: int, macs: int, vectors: int = 1) -> int | None:
    """The width a linear layer's ``features``-wide input of ``vectors`` vectors is padded to for
    ``outputs`` outputs on a U85 of ``macs`` MACs, or None where padding does not pay."""
    if not MIN_NARROW <= features <= MAX_NARROW or macs not in _LEAST_OUTPUTS or not 1 <= vectors <= MAX_VECTORS:
        return None
    if vectors == 1:
        least = _LEAST_OUTPUTS[macs][0 if features <= 16 else 1]
    else:
        least = _FEW_VECTORS_LEAST.get(macs) if features > 16 else None
    return WIDE if least is not None and outputs >= least else None


def _called(node: Any, name: str) -> bool:
    return getattr(node, "op", None) == "call_function" and str(node.target) == f"quantized_decomposed.{name}.default"


def _widen(graph_module: Any, linear: Any, macs: int) -> bool:
    """Pad ``linear``'s input and int8 weight where the rule says so; whether it did."""
    return pad_linear_input(graph_module, linear, lambda f, o, v: widened_width(f, o, macs, v))


def pad_linear_input(graph_module: Any, linear: Any, width_for: Callable[[int, int, int], int | None]) -> bool:
    """Pad the input of ``linear`` (an ``aten.linear`` node of ``graph_module``, quantized) with zero
    features, and its int8 weight with zero columns, to ``width_for(features, outputs, vectors)``
    features (None: leave it); whether it did. ``vectors``: how many the input holds (its leading
    dimensions' product). ``benchmarks/linear_forms.py`` measures the same edit."""
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
    if not all(isinstance(d, int) for d in output.shape):
        return False
    outputs, features = codes.shape
    width = width_for(features, outputs, math.prod(output.shape[:-1]))
    if width is None or width <= features:
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
