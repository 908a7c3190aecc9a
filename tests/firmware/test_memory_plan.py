"""The planned buffers zoo records (manifest ``memory``, header ``*_PLANNED_*``) against what
ExecuTorch's own program deserializer reads from the same .pte: the execution plan's
``non_const_buffer_sizes`` without entry 0 (reserved; ``MethodMeta`` numbers the rest from 0)."""

from __future__ import annotations

from pathlib import Path

import pytest

from zoo import Artifact, Zoo
from zoo.registry.firmware.c_header import DEFINE

pytestmark = pytest.mark.compile


def _executorch_planned(pte: Path) -> list[int]:
    from executorch.exir._serialize._program import deserialize_pte_binary

    program = deserialize_pte_binary(pte.read_bytes()).program
    (forward,) = [p for p in program.execution_plan if p.name == "forward"]
    return [int(s) for s in forward.non_const_buffer_sizes[1:]]


def _assert_recorded(art: Artifact, planned: list[int]) -> None:
    memory = art.manifest.memory or {}
    assert memory["planned_buffers"] == planned and memory["planned_bytes"] == sum(planned)
    macros = dict(DEFINE.findall(art.header.read_text()))
    assert macros["MODEL_PTE_PLANNED_BUFFERS"] == str(len(planned))
    assert [macros[f"MODEL_PTE_PLANNED_BUFFER{i}_BYTES"] for i in range(len(planned))] == [str(s) for s in planned]
    assert macros["MODEL_PTE_PLANNED_BYTES"] == str(sum(planned))


def test_mnist_planned_buffers_are_executorchs(mnist_io_builds: dict[str, Artifact], shared_cache: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ZOO_CACHE_DIR", str(shared_cache))
    float_build = Zoo().fetch("mnist", "u55-128", verify=True)  # the ``built`` fixture's key
    found = {name: _executorch_planned(art.pte) for name, art in
             (("int8", mnist_io_builds["mnist int8"]), ("float", float_build))}
    # One buffer each: int8 I/O plans 800 B of activations; float I/O adds the float input and output.
    assert {k: sum(v) for k, v in found.items()} == {"int8": 800, "float": 3920}, found
    _assert_recorded(mnist_io_builds["mnist int8"], found["int8"])
    _assert_recorded(float_build, found["float"])


def test_mv2_planned_buffers_are_executorchs(built: dict[tuple[str, str], Artifact]) -> None:
    art = built[("mv2", "u55-128")]
    planned = _executorch_planned(art.pte)
    assert sum(planned) == 752_640, planned  # issue 23's figure, read by hand for mv2 float I/O
    _assert_recorded(art, planned)
