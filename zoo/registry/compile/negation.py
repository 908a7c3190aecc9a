"""Write every floating ``neg`` of an exported aten graph as a multiplication by -1 before
quantization, so that its int8 lowering rescales (issue 56).

ExecuTorch 1.5.1's default Arm quantizer (the composable ``_TOSAQuantizerV2``) leaves
``aten.neg`` out of the operators whose output shares its input's quantization
(``SharedQspecQuantizer.SHARED_QSPEC_OPS_DEFAULT``; only the legacy annotator's list has it),
so a ``neg`` gets an observer of its own on its output, while its input keeps the grid of
the tensor it reads. The two differ as soon as that grid is shared with something wider (a
concatenation, an addition's other input...). The TOSA lowering (``op_tosa_neg.py``) emits a
NEGATE with the two zero points and no RESCALE, so the program computes ``-x`` times the ratio
of the scales: a model with ``-x`` gives wrong int8 outputs, silently.

A multiplication by the number -1 is annotated as any multiplication (an output observer of
its own) and lowered as a TOSA MUL between RESCALEs, which computes what the fake-quantized
model does; after a convolution that nothing else reads, ``conv_fold`` folds it into the
weights, and no operator is left at all. In float it is the same function. Only floating
tensors are rewritten (an integer ``neg`` is not quantized).

A ``neg`` that reaches the lowering anyway (one an upstream pass makes) is held by
:func:`refuse_unscaled_negations`: a pass after ``FoldAndAnnotateQParamsPass`` refuses a quantized
``neg`` whose input and output scales differ, rather than let the NEGATE drop the rescale.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from functools import cache
from typing import Any

from zoo.registry.compile.aten_graph import tensor_value
from zoo.registry.compile.graph_edit import Edit, Replacement, rewrite_graph

__all__ = ["PINNED", "negations_as_products", "refuse_unscaled_negations"]

# sha256 of the upstream files that leave neg's output with its own observer and lower it
# without a rescale, as ExecuTorch 1.5.1 ships them; tests/registry/test_upstream_pins.py checks them.
PINNED = {
    "executorch/backends/arm/quantizer/arm_quantizer_utils.py":
        "3ed6043c9389ba60fe589054b240575f4cba751c3c0b47b23b1bc85b284c1458",
    "executorch/backends/arm/operators/op_tosa_neg.py":
        "d041d2aa8e6f88b627c55d15ceb5d24c38baf632b21644740693f145a9c75480",
}


def _replaced(edit: Edit, node: Any) -> Replacement | None:
    import torch

    if node.op != "call_function" or node.target is not torch.ops.aten.neg.default:
        return None
    value = tensor_value(node)
    if value is None or not value.dtype.is_floating_point:
        return None
    product = edit.call(torch.ops.aten.mul.Tensor, (node.args[0], -1.0), before=node, like=node)
    return Replacement(((node, product),))


def negations_as_products(graph_module: Any) -> int:
    """Replace each floating ``neg(x)`` of ``graph_module`` (a ``torch.fx.GraphModule`` from
    torch.export) by ``mul(x, -1.0)``; return how many."""
    return rewrite_graph(graph_module, _replaced)


def _scale(params: Any) -> Any:
    return None if params is None else params.scale


@cache
def _guard_class() -> type:
    import torch
    from executorch.backends.arm._passes import ArmPass
    from executorch.exir.dialects._ops import ops as exir_ops
    from executorch.exir.pass_base import PassResult

    neg = exir_ops.edge.aten.neg.default

    class RefuseUnscaledNegationPass(ArmPass):  # type: ignore[misc]
        """Refuse a quantized ``neg`` whose output scale is not its input's: the NEGATE it
        becomes keeps the input's codes, so its output would be off by the ratio."""

        _passes_required_after: frozenset[type] = frozenset()

        def call(self, graph_module: torch.fx.GraphModule) -> PassResult:
            for node in graph_module.graph.nodes:
                if node.op != "call_function" or node.target != neg:
                    continue
                given = _scale(node.meta.get("input_qparams", {}).get(0))
                made = _scale(node.meta.get("output_qparams", {}).get(0))
                if given is not None and made is not None and given != made:
                    raise ValueError(
                        f"the quantized neg {node.name!r} reads scale {given} and writes scale {made}, and "
                        "ExecuTorch 1.5.1 lowers it to a NEGATE without a rescale, which would scale its "
                        f"output by {given / made:.3g} (docs/upstream.md, an int8 neg lowered without its "
                        "rescale): write -x as x * -1 in the model"
                    )
            return PassResult(graph_module, False)

    return RefuseUnscaledNegationPass


@contextlib.contextmanager
def refuse_unscaled_negations() -> Iterator[None]:
    """Run :class:`RefuseUnscaledNegationPass` after ``FoldAndAnnotateQParamsPass`` in every TOSA
    pipeline built meanwhile (a process-global registry: hold lower.py's lock)."""
    from executorch.backends.arm._passes import arm_pass_manager
    from executorch.backends.arm._passes.fold_qdq_with_annotated_qparams_pass import (
        FoldAndAnnotateQParamsPass,
    )

    guard: Any = _guard_class()()
    arm_pass_manager.register_pass_insertions_after(FoldAndAnnotateQParamsPass, [guard])
    try:
        yield
    finally:
        insertions = arm_pass_manager._registered_pass_insertions.get(FoldAndAnnotateQParamsPass)
        if insertions is not None:
            insertions.after_passes[:] = [p for p in insertions.after_passes if p is not guard]
            if not insertions.before_passes and not insertions.after_passes:
                del arm_pass_manager._registered_pass_insertions[FoldAndAnnotateQParamsPass]
