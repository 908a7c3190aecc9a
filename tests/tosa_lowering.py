"""A fake-quantized graph lowered to one TOSA INT graph (activations kept as zoo keeps them) and run on
the TOSA reference model: what the stack tests that compare a lowering with its fake-quantized model share."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def lowered_to_tosa(fake_quant: Any, example: tuple[Any, ...]) -> tuple[bytes, Callable[[Any], list[Any]]]:
    """The one TOSA graph ``fake_quant`` lowers to, and a function giving its flat outputs for an input,
    computed by the TOSA reference model."""
    import torch
    from executorch.backends.arm.tosa.compile_spec import TosaCompileSpec
    from executorch.backends.arm.tosa.partitioner import TOSAPartitioner
    from executorch.exir import to_edge_transform_and_lower

    from zoo.registry.compile.activations import keep_activations
    from zoo.registry.numerics import reference
    from zoo.registry.numerics.data import flat_outputs

    with keep_activations():
        edge = to_edge_transform_and_lower(torch.export.export(fake_quant, example),
                                           partitioner=[TOSAPartitioner(TosaCompileSpec("TOSA-1.0+INT"))])
    program = edge.exported_program()
    graphs = [bytes(m.processed_bytes) for _, m in program.graph_module.named_children() if hasattr(m, "processed_bytes")]
    assert len(graphs) == 1
    run = reference._Reference({graphs[0]: graphs[0]})
    module = program.module()

    def outputs(x: Any) -> list[Any]:
        with reference._dispatch(run):
            return list(flat_outputs(module(x)))

    return graphs[0], outputs
