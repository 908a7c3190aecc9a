"""Keep a ReLU or ReLU6 after a convolution or a linear layer as a TOSA CLAMP, so
Vela fuses it into the operator as the int8 TFLite flow does (issue 45).

ExecuTorch's Arm pass ``FuseQuantizedActivationPass`` removes such an activation
when the quantized output range already clips: the graph becomes conv → rescale
with no clamp. The numbers are the same (the rescale's saturation at the output
zero point is the ReLU), but Vela 5.1.0's U55 cost model charges an operator
without a fused activation about twice the output cycles (1.0 instead of 0.5 per
element): MobileNetV2 on u55-128 cost 1.272× the TFLite flow's cycles.

The pass is hard-wired in ``ArmPassManager._tosa_pipeline``, and its pipeline
config cannot skip it. So zoo registers, for the duration of a lowering, its own
pass to run just before it (ExecuTorch's ``register_pass_insertions_before``):
:class:`KeepQuantizedActivationPass` puts a quantize/dequantize pair with the
activation's own output parameters between the operator and the activation.
The operator then ends in its own quantized output (what a ReLU that is not
fused has), upstream's pass no longer sees a convolution or linear as the
activation's input and leaves it, and ``ConvertToClampPass`` and
``QuantizeClampArgumentsPass`` lower it to a CLAMP whose bounds are the
quantized 0 (the zero point) and the quantized 6 or the type's maximum: the
operator's rescale → CLAMP, which Vela fuses. The pair takes the activation's
scale and zero point, so the rescale's output keeps them and the CLAMP rescales
nothing. Only activations upstream would have removed get the pair, so a CLAMP
appears exactly where the exported graph had a ReLU or ReLU6.

A grouped convolution that is not depthwise has no TOSA operator: upstream's
``DecomposeGroupedConvPass``, late in the pipeline, splits it into one convolution
per group and a concat, and the CLAMP would follow the concat as an operator of
its own (RegNet's every block: 2.4 to 5.2 % more U55 cycles than with no clamp at
all). :class:`ClampEachGroupPass` runs right after that split and clamps each
group's convolution instead, as the TFLite flow fuses a ReLU into each.

The TOSA graphs come out of the lowering, so a retarget (which runs Vela on the
stored graphs) keeps the clamps too. ``PINNED`` ties the choice to the source of
the upstream pass and of the pipeline that calls it; tests/registry/test_upstream_pins.py
fails when either changes (``upstream_pin``; docs/upstream.md says what to re-check).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from functools import cache
from typing import Any

# sha256 of the upstream files this module relies on, as ExecuTorch 1.5.1 ships them.
PINNED = {
    "executorch/backends/arm/_passes/fuse_quantized_activation_pass.py":
        "3fa27561032ef260425307afa0d43cd90fe6948e7131b98ab027f06b913e6866",
    "executorch/backends/arm/_passes/arm_pass_manager.py":
        "ec3839b05d78ec72a2493105b1a1f794fe03cf451386ff32eb2681a608e23ed1",
    "executorch/backends/arm/_passes/decompose_grouped_conv_pass.py":
        "9910ce1a359088c2f70b3dde685248917ae4f90eeacef48bfbbbb4752ccf3836",
}


@cache
def _pass_class() -> type:
    import torch
    from executorch.backends.arm._passes import ArmPass
    from executorch.backends.arm._passes.fold_qdq_with_annotated_qparams_pass import (
        FoldAndAnnotateQParamsPass,
    )
    from executorch.backends.arm._passes.fuse_quantized_activation_pass import (
        FuseQuantizedActivationPass,
    )
    from executorch.backends.arm.constants import DEQUANT_PER_TENSOR_OP, QUANT_PER_TENSOR_OP
    from executorch.exir.pass_base import PassResult

    class KeepQuantizedActivationPass(ArmPass):  # type: ignore[misc]
        """Quantize a convolution's or linear's output with the parameters of the ReLU
        or ReLU6 after it, where ``FuseQuantizedActivationPass`` would remove that
        activation, so that it stays and becomes a CLAMP."""

        _passes_required_after = frozenset({FuseQuantizedActivationPass, FoldAndAnnotateQParamsPass})

        def call(self, graph_module: torch.fx.GraphModule) -> PassResult:
            graph = graph_module.graph
            modified = False
            for node in list(graph.nodes):
                if node.op != "call_function":
                    continue
                if not FuseQuantizedActivationPass._is_fuseable_quantized_activation(node):
                    continue
                source = node.args[0]
                if not FuseQuantizedActivationPass._is_fuseable_input(source):
                    continue
                quant = next(iter(node.users))
                params = tuple(quant.args[1:])  # scale, zero point, qmin, qmax, dtype
                with graph.inserting_after(source):
                    q = graph.create_node("call_function", QUANT_PER_TENSOR_OP, (source, *params))
                q.meta = dict(source.meta)
                q.meta["val"] = source.meta["val"].to(params[-1])
                with graph.inserting_after(q):
                    dq = graph.create_node("call_function", DEQUANT_PER_TENSOR_OP, (q, *params))
                dq.meta = dict(source.meta)
                node.replace_input_with(source, dq)
                modified = True
            if modified:
                graph.lint()
                graph_module.recompile()
                graph_module = super().call(graph_module).graph_module
            return PassResult(graph_module, modified)

    return KeepQuantizedActivationPass


@cache
def _group_pass_class() -> type:
    import torch
    from executorch.backends.arm._passes import ArmPass
    from executorch.exir.dialects._ops import ops as exir_ops
    from executorch.exir.pass_base import PassResult

    conv, cat, clamp = (exir_ops.edge.aten.convolution.default, exir_ops.edge.aten.cat.default,
                        exir_ops.edge.aten.clamp.default)

    class ClampEachGroupPass(ArmPass):  # type: ignore[misc]
        """Move the CLAMP after a grouped convolution that ``DecomposeGroupedConvPass`` split
        into slice → convolution → concat onto each group's convolution, where Vela fuses it:
        after the concat it is an elementwise operator of its own. Exact, since a clamp acts
        element by element and every group's output has the concat's quantization."""

        _passes_required_after: frozenset[type] = frozenset()

        def call(self, graph_module: torch.fx.GraphModule) -> PassResult:
            graph = graph_module.graph
            modified = False
            for node in list(graph.nodes):
                if node.op != "call_function" or node.target != clamp:
                    continue
                joined = node.args[0]
                if getattr(joined, "target", None) != cat or len(joined.users) != 1 or joined.args[1] != 1:
                    continue
                groups = joined.args[0]
                quant = node.meta.get("input_qparams", {}).get(0)
                if quant is None or quant != node.meta.get("output_qparams", {}).get(0) or not all(
                    g.target == conv and len(g.users) == 1 and g.meta.get("output_qparams", {}).get(0) == quant
                    for g in groups
                ):
                    continue
                clamped = []
                for group in groups:
                    with graph.inserting_after(group):
                        each = graph.create_node("call_function", clamp, (group, *node.args[1:]), dict(node.kwargs))
                    each.meta = dict(node.meta)
                    each.meta["val"] = group.meta["val"]
                    clamped.append(each)
                joined.args = (clamped, *joined.args[1:])
                node.replace_all_uses_with(joined)
                graph.erase_node(node)
                modified = True
            if modified:
                graph.lint()
                graph_module.recompile()
                graph_module = super().call(graph_module).graph_module
            return PassResult(graph_module, modified)

    return ClampEachGroupPass


@contextlib.contextmanager
def keep_activations() -> Iterator[None]:
    """Run :class:`KeepQuantizedActivationPass` before ``FuseQuantizedActivationPass``, and
    :class:`ClampEachGroupPass` after ``DecomposeGroupedConvPass``, in every TOSA pipeline
    built meanwhile (a process-global registry: hold lower.py's lock)."""
    from executorch.backends.arm._passes import arm_pass_manager
    from executorch.backends.arm._passes.decompose_grouped_conv_pass import DecomposeGroupedConvPass
    from executorch.backends.arm._passes.fuse_quantized_activation_pass import (
        FuseQuantizedActivationPass,
    )

    keep: Any = _pass_class()()
    each: Any = _group_pass_class()()
    arm_pass_manager.register_pass_insertions_before(FuseQuantizedActivationPass, [keep])
    arm_pass_manager.register_pass_insertions_after(DecomposeGroupedConvPass, [each])
    try:
        yield
    finally:
        for target, inserted in ((FuseQuantizedActivationPass, keep), (DecomposeGroupedConvPass, each)):
            insertions = arm_pass_manager._registered_pass_insertions.get(target)
            if insertions is None:
                continue
            insertions.before_passes[:] = [p for p in insertions.before_passes if p is not inserted]
            insertions.after_passes[:] = [p for p in insertions.after_passes if p is not inserted]
            if not insertions.before_passes and not insertions.after_passes:
                del arm_pass_manager._registered_pass_insertions[target]
