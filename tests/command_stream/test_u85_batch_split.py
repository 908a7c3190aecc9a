"""tests/ops_plugin.py's ops-batchmul on u85-256, one build (about 15 s once torch is loaded): Vela 5.1.0 splits a
scalar MUL over a batch of 4 into 4 ELEMENTWISE operations that change only their OFM base, so patches 1 to 3 read
patch 0's IFM (docs/upstream.md, "A batch split that never moves its IFM"; MobileViT-XS's attention on u85-256).
The NPU-program level must fail at the second patch's first element (element 8192 of the 4 x 2 x 64 x 64 scores);
run with the IFM base moved one patch a repetition, the same program equals the reference model (measured, docs)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import in_shared_cache
from zoo.registry.command_stream.stream import Command
from zoo.registry.command_stream.u85 import commands
from zoo.registry.pte.vela_payload import find_payloads

pytestmark = pytest.mark.compile


def _repeats(program: list[Command]) -> list[int]:
    """The index of each operation that repeats the one before it with only NPU_SET_OFM_BASE0 written between."""
    found, since, previous = [], set[str](), None
    for i, c in enumerate(program):
        if c.name.startswith("NPU_SET_"):
            since.add(c.name)
        elif c.name.startswith("NPU_OP_") and c.name not in ("NPU_OP_DMA_WAIT", "NPU_OP_KERNEL_WAIT", "NPU_OP_STOP"):
            if previous is not None and c.name == previous and since - {"NPU_SET_BLOCKDEP"} == {"NPU_SET_OFM_BASE0"}:
                found.append(i)
            previous, since = c.name, set()
    return found


def test_a_batch_split_mul_reads_one_patch_four_times(shared_cache: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    from zoo import VerificationError, Zoo

    with in_shared_cache(shared_cache, tmp_path_factory.mktemp("ops-batchmul")), pytest.MonkeyPatch.context() as mp:
        mp.setenv("ZOO_PLUGINS", "tests.ops_plugin")
        with pytest.raises(VerificationError) as failed:
            Zoo().fetch("ops-batchmul", "u85-256", verify=True)
        art = Zoo().fetch("ops-batchmul", "u85-256", verify=False)
    assert "element 8192: interpreter -3, TOSA reference model -39" in str(failed.value)
    assert "Vela's program does not compute what its TOSA graph does" in str(failed.value)

    (payload,) = find_payloads(art.pte.read_bytes())
    _, program = commands(payload.data["cmd_data"])
    repeats = _repeats(program)
    assert [program[i].name for i in repeats] == ["NPU_OP_ELEMENTWISE"] * 3
    # Between them the IFM base stays where the first one's is: one patch (2 heads x 64 tokens x 30) apart would be right.
    last = {c.name: c for c in program[:repeats[0]] if c.name.startswith("NPU_SET_")}
    assert (last["NPU_SET_IFM_HEIGHT0_M1"].param + 1) * (last["NPU_SET_IFM_STRIDE_Y"].payload or 0) == 2 * 64 * 30
    assert not any(c.name == "NPU_SET_IFM_BASE0" for c in program[repeats[0] - 1:repeats[-1]])
