"""tests/ops_plugin.py's ops-stridepad and ops-stridepad1 on u85-256, one build each (about 15 s once torch is loaded).
Vela 5.1.0 (Regor's ``DecomposeForStrides``) writes a convolution at a stride the NPU lacks as one 1x1 CONV per kernel
position, each keeping its accumulator for the next (``ACC_FORMAT`` output DISABLE, then input KEEP).

ops-stridepad (8 channels into 8, 5x5 at stride 5, padding 2): 25 parts, the left and top padding written as
``IFM_PAD_LEFT``/``TOP`` 1 with the IFM base moved one stride on; the NPU-program level is bit-exact, the interpreter's
kept accumulator with it. ops-stridepad1 (one channel into 8, as wav2letter's first convolution: TOSA's SLICE of the
input to 14 columns, then a DEPTHWISE_CONV2D 1x6 at stride 5, padding 2 on the left): 6 parts, none padded, the IFM
base at each kernel position's column as if there were no padding, so every output reads its window two columns
late, and the level fails (docs/upstream.md, "A strided convolution that loses its left padding")."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.conftest import in_shared_cache
from zoo.registry.command_stream.u85 import commands
from zoo.registry.pte.vela_payload import find_payloads

pytestmark = pytest.mark.compile


def _parts(art: Any) -> list[dict[str, int]]:
    """Each CONV that keeps or adds to an accumulator: its IFM base and left padding, and its ACC_FORMAT."""
    (payload,) = find_payloads(art.pte.read_bytes())
    _, program = commands(payload.data["cmd_data"])
    regs: dict[str, int] = {}
    found = []
    for c in program:
        if c.name.startswith("NPU_SET_"):
            regs[c.name] = c.payload if c.payload is not None else c.value
        elif c.name == "NPU_OP_CONV" and regs["NPU_SET_ACC_FORMAT"] & 0x70:
            found.append({"base": regs["NPU_SET_IFM_BASE0"], "pad": regs["NPU_SET_IFM_PAD_LEFT"], "acc": regs["NPU_SET_ACC_FORMAT"]})
    return found


def test_a_strided_convolution_split_into_kept_parts_is_bit_exact(shared_cache: Path,
                                                                  tmp_path_factory: pytest.TempPathFactory) -> None:
    from zoo import Zoo

    with in_shared_cache(shared_cache, tmp_path_factory.mktemp("ops-stridepad")), pytest.MonkeyPatch.context() as mp:
        mp.setenv("ZOO_PLUGINS", "tests.ops_plugin")
        art = Zoo().fetch("ops-stridepad", "u85-256", verify=True)
    level = (art.manifest.verification or {})["numerics"]["npu_program"]
    assert level["outcome"] == "passed", level
    parts = _parts(art)
    assert len(parts) == 25 and parts[0]["acc"] == 0x240 and parts[-1]["acc"] == 0x210
    assert {p["acc"] for p in parts[1:-1]} == {0x250}
    assert any(p["pad"] for p in parts)  # the left padding kept, as one stride of padding


def test_a_strided_convolution_from_one_channel_loses_its_left_padding(shared_cache: Path,
                                                                       tmp_path_factory: pytest.TempPathFactory) -> None:
    from zoo import VerificationError, Zoo

    with in_shared_cache(shared_cache, tmp_path_factory.mktemp("ops-stridepad1")), pytest.MonkeyPatch.context() as mp:
        mp.setenv("ZOO_PLUGINS", "tests.ops_plugin")
        with pytest.raises(VerificationError) as failed:
            Zoo().fetch("ops-stridepad1", "u85-256", verify=True)
        art = Zoo().fetch("ops-stridepad1", "u85-256", verify=False)
    assert "element 0: interpreter 36, TOSA reference model 25" in str(failed.value)
    assert "Vela's program does not compute what its TOSA graph does" in str(failed.value)
    parts = _parts(art)
    assert len(parts) == 6 and not any(p["pad"] for p in parts)
    assert [p["base"] - parts[0]["base"] for p in parts] == [8 * k for k in range(6)]  # column k, not k - 2
