"""mnist's u55-128 program through the interpreter: bit for bit the TOSA reference model's outputs
on its bundle's int8 digits (``bundles.py``), and a changed weight, scale record or register shows."""

from __future__ import annotations

import difflib
import os
import struct
from pathlib import Path

import pytest

from tests.command_stream.bundles import Bundled, bundled, changed, differing
from zoo import Artifact
from zoo.registry.command_stream import StreamError, disassemble, program_of, run

pytestmark = pytest.mark.compile

GOLDEN = Path(__file__).resolve().parent / "data" / "mnist_u55-128.dis"
RECORD = "ZOO_RECORD_DISASSEMBLY"


@pytest.fixture(scope="module")
def mnist(mnist_io_builds: dict[str, Artifact]) -> Bundled:
    return bundled(mnist_io_builds["mnist int8"])


def test_the_disassembly_is_the_recorded_one(mnist: Bundled) -> None:
    """A Vela upgrade that changes Regor's choices shows here as a readable diff.
    Record it again with ZOO_RECORD_DISASSEMBLY=1 after reading that diff."""
    text = disassemble(program_of(mnist.payload))
    if os.environ.get(RECORD):
        GOLDEN.write_text(text)
    diff = "".join(difflib.unified_diff(GOLDEN.read_text().splitlines(True), text.splitlines(True),
                                        str(GOLDEN), "this build", n=1))
    assert not diff, f"mnist's u55-128 command stream changed ({RECORD}=1 records it):\n{diff[:4000]}"


@pytest.mark.parametrize("build", ["mnist int8", "mnist int8 u55-64"])
def test_the_outputs_are_the_tosa_reference_models(mnist_io_builds: dict[str, Artifact], build: str) -> None:
    """u55-64 retargets the same TOSA graph: other block configurations, so other weight brick orders."""
    bundle = bundled(mnist_io_builds[build])
    for i, (given, expected) in enumerate(bundle.cases):
        (got,) = run(bundle.payload, [given])
        assert got == expected, f"{build}, case {i}: interpreter {list(got)}, TOSA reference {list(expected)}"


def test_the_u65_outputs_are_the_tosa_reference_models(mnist_u65: Artifact) -> None:
    """u65-256 is Dedicated_Sram: the scratch holds only the I/O and the activations live in the
    fast scratch (region 2), Vela's 384 KiB arena cache, which the platform provides."""
    bundle = bundled(mnist_u65)
    assert program_of(bundle.payload).config.product == 1
    for i, (given, expected) in enumerate(bundle.cases):
        (got,) = run(bundle.payload, [given], fast_scratch=384 * 1024)
        assert got == expected, f"case {i}: interpreter {list(got)}, TOSA reference {list(expected)}"
    with pytest.raises(StreamError, match=r"region 2, which holds 0x0 bytes \(the fast scratch"):
        run(bundle.payload, [bundle.cases[0][0]])


# weight_data opens with conv1's 16 scale records (160 bytes), then its 272-byte weight stream.
def _flip_weight_bit(data: bytearray) -> None:
    data[170] ^= 1


def _shift_of_channel_0(data: bytearray) -> None:
    data[9] += 1


def test_a_flipped_weight_bit_changes_the_outputs(mnist: Bundled) -> None:
    assert differing(mnist, changed(mnist.payload, "weight_data", _flip_weight_bit)) == 3


def test_a_weight_stream_that_no_longer_decodes_names_its_op(mnist: Bundled) -> None:
    def flip(data: bytearray) -> None:
        data[200] ^= 1

    with pytest.raises(StreamError, match=r"CONV at byte 0x148: the weight stream \(272 bytes\) does not decode"):
        run(changed(mnist.payload, "weight_data", flip), [mnist.cases[0][0]])


def test_a_changed_scale_record_changes_the_outputs(mnist: Bundled) -> None:
    assert differing(mnist, changed(mnist.payload, "weight_data", _shift_of_channel_0)) == 3


def test_a_changed_register_changes_the_outputs(mnist: Bundled) -> None:
    program = program_of(mnist.payload)
    last_zp = [c for c in program.commands if c.name == "NPU_SET_OFM_ZERO_POINT"][-1]
    assert last_zp.value == -2
    # The stream is cmd_data's tail, after the driver-action header; its last command is the one-word STOP.
    header = len(mnist.payload.data["cmd_data"]) - 4 * (program.commands[-1].offset // 4 + 1)

    def zero_point(data: bytearray) -> None:
        at = header + last_zp.offset
        (word,) = struct.unpack_from("<I", data, at)
        struct.pack_into("<I", data, at, (word & 0xFFFF) | (((last_zp.value + 1) & 0xFFFF) << 16))

    mutant = changed(mnist.payload, "cmd_data", zero_point)
    assert [c.value for c in program_of(mutant).commands if c.name == "NPU_SET_OFM_ZERO_POINT"][-1] == -1
    assert differing(mnist, mutant) == 3
