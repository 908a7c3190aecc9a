"""Compile the float model for the ``portable`` target: lowered without a
partitioner, every operator runs on the host CPU."""

from __future__ import annotations

from typing import Any

from zoo._spec import Sample
from zoo.registry.compile.blame import _lowering_errors, _stage
from zoo.registry.compile.delegation import _delegation
from zoo.registry.compile.export import _export
from zoo.registry.compile.result import CompileResult
from zoo.registry.compile.serialize import _canonical, _program_bytes, operator_table
from zoo.registry.events import Progress


def _compile_portable(model: Any, example: Sample, where: str, report: Progress) -> CompileResult:
    from executorch.exir import to_edge_transform_and_lower

    report("export", None, None)
    with _stage(where, "export"):
        exported = _export(model, example)
    report("lower", None, None)
    with _lowering_errors(where):
        edge = to_edge_transform_and_lower(exported)
        delegation = _delegation(edge)  # to_executorch rewrites the graph in place
        program = edge.to_executorch()
    report("serialize", None, None)
    with _stage(where, "serialize"):
        pte = _canonical(_program_bytes(program))
        cpu_operators = operator_table(pte)
    return CompileResult(
        pte=pte,
        tosa_graphs=[],
        vela=None,
        delegation=delegation,
        cpu_operators=cpu_operators,
        calibration={"samples": 0, "sha256": None},
        warnings=[],
    )
