"""softmax's u55-128 program (Regor's int8 softmax: a MAX pool, int8-to-int32 casts by ADD of a scalar,
32-bit MUL and SUB with broadcast IFM2, two LUTs DMA'd into the SHRAM, a CONV through one of them and a
broadcast MUL) against its bundle's TOSA reference outputs; a changed LUT byte or operand order shows."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.command_stream.bundles import Bundled, bundled, changed, differing
from tests.conftest import in_shared_cache
from zoo import Artifact
from zoo.registry.command_stream import program_of, run

pytestmark = pytest.mark.compile

EXP_LUT = 0x30
"""Where the first LUT (exp) sits in the weight data: the source of the stream's first DMA."""


@pytest.fixture(scope="module")
def softmax(shared_cache: Path, tmp_path_factory: pytest.TempPathFactory) -> Bundled:
    """One build for the session's cache (int8 I/O, so the delegate's bytes are the bundle's; about 30 s)."""
    from zoo import Zoo

    with in_shared_cache(shared_cache, tmp_path_factory.mktemp("softmax-build")):
        art: Artifact = Zoo().fetch("softmax", "u55-128", verify=True, io="int8", bundle=True)
    return bundled(art, (4, 4))


def test_the_outputs_are_the_tosa_reference_models(softmax: Bundled) -> None:
    program = program_of(softmax.payload)
    lut_dmas = [c for c in program.commands if c.name == "NPU_SET_DMA0_DST_REGION" and c.value == (1 << 8) | 3]
    assert len(lut_dmas) == 1, "the two LUT DMAs share one destination-region write"
    first_src = next(c for c in program.commands if c.name == "NPU_SET_DMA0_SRC")
    assert first_src.payload == EXP_LUT
    for i, (given, expected) in enumerate(softmax.cases):
        (got,) = run(softmax.payload, [given])
        assert got == expected, f"case {i}: interpreter {list(got)}, TOSA reference {list(expected)}"


def test_a_changed_lut_entry_changes_the_outputs(softmax: Bundled) -> None:
    """exp's last entry is exp(0), which every row's largest element looks up."""

    def flip(data: bytearray) -> None:
        data[EXP_LUT + 255] ^= 1

    assert differing(softmax, changed(softmax.payload, "weight_data", flip)) == 3


@pytest.mark.parametrize(("mode", "change"), [(2, 1 << 6), (0, 1 << 2)], ids=["SUB reversed", "MUL unbroadcast"])
def test_a_changed_ifm2_broadcast_changes_the_outputs(softmax: Bundled, mode: int, change: int) -> None:
    """The int32 SUB of each row's maximum with the operand-order bit set (max - x), and the last MUL
    (by each row's reciprocal) without its channel broadcast."""
    program = program_of(softmax.payload)
    header = len(softmax.payload.data["cmd_data"]) - (program.commands[-1].offset + 4)
    op = max(i for i, c in enumerate(program.commands) if c.name == "NPU_OP_ELEMENTWISE" and c.param == mode)
    broadcast = next(c for c in reversed(program.commands[:op]) if c.name == "NPU_SET_IFM2_BROADCAST")

    def flip(data: bytearray) -> None:
        data[header + broadcast.offset + 2] ^= change  # the low byte of the 16-bit parameter

    assert differing(softmax, changed(softmax.payload, "cmd_data", flip)) == 3


def test_a_changed_shift_of_the_32_bit_rescale_changes_the_outputs(softmax: Bundled) -> None:
    """The int32-to-int8 RESCALE before exp's LUT: a 32-bit MUL whose OFM_SCALE shift is 49."""
    program = program_of(softmax.payload)
    header = len(softmax.payload.data["cmd_data"]) - (program.commands[-1].offset + 4)
    (scale,) = [c for c in program.commands if c.name == "NPU_SET_OFM_SCALE" and c.param & 0x3F == 49]

    def one_less(data: bytearray) -> None:
        data[header + scale.offset + 2] -= 1  # the shift, in the parameter's low 6 bits

    assert differing(softmax, changed(softmax.payload, "cmd_data", one_less)) == 3
