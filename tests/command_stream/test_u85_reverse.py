"""tests/ops_plugin.py's ops-flip on u85-256, one build (about 15 s once torch is loaded): ``torch.flip`` along the
channels, H and W of two convolutions' outputs, added. Vela 5.1.0 writes each flip as a 1x1 POOL SUM copy whose OFM
is reversed (``OFM_PRECISION`` bits 9-10): the graph is NCHW, so the channels are the map's H (reverse 1, in
NHCWB16), the image's H the map's W (reverse 2, in NHCWB16) and its W the map's C (reverse 3, in NHWC). The interpreter mirrors the operation's OFM along that axis, and the NPU-program
level is bit-exact against the TOSA reference model; the C model computes the same bytes
(tests/firmware/test_npu_model_u85.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import in_shared_cache
from zoo.registry.command_stream.u85 import commands
from zoo.registry.command_stream.u85.regs import bits
from zoo.registry.pte.vela_payload import find_payloads

pytestmark = pytest.mark.compile


def test_torch_flip_is_an_ofm_reversal_bit_exact_against_the_tosa_reference(
        shared_cache: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    from zoo import Zoo

    with in_shared_cache(shared_cache, tmp_path_factory.mktemp("ops-flip")), pytest.MonkeyPatch.context() as mp:
        mp.setenv("ZOO_PLUGINS", "tests.ops_plugin")
        art = Zoo().fetch("ops-flip", "u85-256", verify=True)
    level = (art.manifest.verification or {})["numerics"]["npu_program"]
    assert level["outcome"] == "passed", level
    (payload,) = find_payloads(art.pte.read_bytes())
    precision, reversed_ops = 0, []
    for cmd in commands(payload.data["cmd_data"])[1]:
        if cmd.name == "NPU_SET_OFM_PRECISION":
            precision = cmd.value
        elif cmd.name.startswith("NPU_OP_") and bits("ofm.reverse", precision):
            reversed_ops.append((cmd.name, cmd.param, bits("ofm.reverse", precision), bits("ofm.format", precision)))
    # SUM copies: H and W in NHCWB16, C in NHWC
    assert reversed_ops == [("NPU_OP_POOL", 3, 1, 1), ("NPU_OP_POOL", 3, 2, 1), ("NPU_OP_POOL", 3, 3, 0)]
