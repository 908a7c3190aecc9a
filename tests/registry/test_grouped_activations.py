"""A ReLU after a grouped convolution is clamped on each group's convolution, where Vela fuses
it, and not after the concat upstream's DecomposeGroupedConvPass joins the groups with
(compile/activations.py, issue 45). The pin on that pass is in tests/registry/test_upstream_pins.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests import grouped_plugin
from tests.tiny_builds import compile_verified, tosa_operators


def _producers(graph: bytes) -> list[tuple[str, list[str]]]:
    """Each operator of ``graph`` but the constants: its name and, for each input, the operator
    producing it and the one producing that operator's first input ("RESCALE<CONV2D")."""
    made: dict[str, tuple[str, str]] = {}
    ops = []
    for name, op in tosa_operators(graph):
        inputs = [made.get(op.Inputs(j).decode(), ("input", "")) for j in range(op.InputsLength())]
        for j in range(op.OutputsLength()):
            made[op.Outputs(j).decode()] = (name, inputs[0][0] if inputs else "")
        if name not in ("CONST", "CONST_SHAPE"):
            ops.append((name, [f"{kind}<{source}" if source else kind for kind, source in inputs]))
    return ops


@pytest.mark.compile
def test_each_groups_convolution_keeps_the_clamp_and_the_build_verifies(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
) -> None:
    (result,) = compile_verified(monkeypatch, tmp_path, "tests.grouped_plugin", "grouped-tiny", ["u55-128"])
    ops = [op for graph in result.tosa_graphs for op in _producers(graph)]
    names = [name for name, _ in ops]
    clamps = [inputs[0] for name, inputs in ops if name == "CLAMP"]
    # The first convolution's ReLU, then one per group of the grouped convolution: each follows the
    # output RESCALE of a convolution. The 4 groups without a ReLU get none.
    assert clamps == ["RESCALE<CONV2D"] * (1 + grouped_plugin.GROUPS), " ".join(names)
    assert names.count("CONCAT") == 2 and names.count("CONV2D") == 1 + grouped_plugin.GROUPS + 4 + 1, names
    assert result.delegation["cpu_ops"] == 0, result.delegation
    assert result.numerics is not None and result.numerics.passed, result.numerics.record
