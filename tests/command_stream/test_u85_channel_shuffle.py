"""tests/ops_plugin.py's ops-chanshuffle on u85-256, one build (about 25 s of CPU once torch is loaded): two of
shufflenet-v2's stride-1 units (48 channels, half of them through 1x1, 3x3 depthwise and 1x1 convolutions, the halves
concatenated and shuffled) on a 16x16 map.

Vela 5.1.0 fuses the NCHW transpose after the second unit's last 1x1 CONV (24 channels into 24) into its OFM
(``OFM_PRECISION`` transpose CHW), writing one half of the concatenation: an OFM slice of 24 of the transposed tensor's
48 rows. For such a slice Regor's ``ProposeWeightBuffering`` encodes the weights for the transposed slice's depth (the
map's width, 16) instead of the 24 channels before transposition, and its register generator issues the op twice
(``GenerateOpGroup`` folds one fused sub-op, the transpose, into the first issue; the clamp after it issues the op
again). The stream holds 16 channels' weights and scale records where the op computes 24, so the level fails
(docs/upstream.md, "A transposed convolution into a concatenation encodes the wrong number of channels")."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import in_shared_cache
from zoo.registry.command_stream.u85 import commands
from zoo.registry.command_stream.u85.regs import bits
from zoo.registry.pte.vela_payload import find_payloads

pytestmark = pytest.mark.compile

CHW = 6


def test_a_convolution_transposed_into_a_concatenation_holds_the_wrong_number_of_channels(
        shared_cache: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    from zoo import VerificationError, Zoo

    with in_shared_cache(shared_cache, tmp_path_factory.mktemp("ops-chanshuffle")), pytest.MonkeyPatch.context() as mp:
        mp.setenv("ZOO_PLUGINS", "tests.ops_plugin")
        with pytest.raises(VerificationError) as failed:
            Zoo().fetch("ops-chanshuffle", "u85-256", verify=True)
        art = Zoo().fetch("ops-chanshuffle", "u85-256", verify=False)
    assert ("CONV at byte 0x8d0: weight stream 0 decodes to 2560 values, the op's shape, blocks and micro-block "
            "take 3840") in str(failed.value)
    (payload,) = find_payloads(art.pte.read_bytes())
    _, program = commands(payload.data["cmd_data"])
    regs: dict[str, int] = {}
    issues = []
    for c in program:
        if c.name.startswith("NPU_SET_"):
            regs[c.name[8:]] = c.payload if c.payload is not None else c.param
        elif c.name == "NPU_OP_CONV" and bits("ofm.transpose", regs["OFM_PRECISION"]) == CHW:
            issues.append((c.offset, dict(regs)))
    assert [offset for offset, _ in issues] == [0x8d0, 0x8d4]  # the same op twice, no register written between
    first, second = (r for _, r in issues)
    assert first == second
    assert first["OFM_DEPTH_M1"] + 1 == 24 and first["OFM_WIDTH_M1"] + 1 == 16
    assert first["SCALE_LENGTH"] == 16 * 10  # 16 records of 10 bytes: the transposed depth's, not 24 channels'
