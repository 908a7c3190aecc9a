"""The constants' comparison covers transposed convolutions (issue 58): tests/ops_plugin.py's ops-deconv3 (a 3x3
convolution, then a 3x3 ``ConvTranspose2d`` at stride 2 from 8 channels into 6) for u55-128 and u85-256, one
build of both (about 50 s once torch is loaded). Vela 5.1.0 writes the transposed convolution as one CONV over
the zero-upscaled IFM on the U55 (the kernel reversed in y and x) and as four stride-1 CONVs on the U85 (each
OFM phase's taps, reversed: 2x2, 2x1, 1x2 and 1x1); each is related to the TOSA graph's TRANSPOSE_CONV2D, and a
flipped weight byte in any of them is a constants difference naming it."""

from __future__ import annotations

import pytest

from tests.command_stream.reads import operations
from tests.tiny_builds import compile_verified
from zoo.registry.numerics.npu_program import NpuProgram
from zoo.registry.pte.vela_payload import VelaPayload, find_payloads

pytestmark = pytest.mark.compile

TARGETS = ["u55-128", "u85-256"]
FORMS = {"u55-128": ["its kernel reversed in y and x"],
         "u85-256": [f"its taps [{ky}::2, {kx}::2] reversed in y and x" for ky in (0, 1) for kx in (0, 1)]}
"""How each of the program's transposed-convolution CONVs, in stream order, was taken from the graph's kernel."""


@pytest.fixture(scope="module")
def levels(tmp_path_factory: pytest.TempPathFactory) -> dict[str, NpuProgram]:
    with pytest.MonkeyPatch.context() as mp:
        results = compile_verified(mp, tmp_path_factory.mktemp("deconv3"), "tests.ops_plugin", "ops-deconv3", TARGETS)
    out = {}
    for target, result in zip(TARGETS, results, strict=True):
        assert result.numerics is not None and result.numerics.npu is not None, target
        out[target] = result.numerics.npu
    return out


def _weight_streams(payload: VelaPayload, target: str) -> list[tuple[str, int, int]]:
    """Each CONV's name and its weight stream's (offset in weight_data, length), in stream order."""
    if target.startswith("u55"):
        return [(op.name, *op.streams["WEIGHT"]) for op in operations(payload)[0]]
    from zoo.registry.command_stream.u85 import commands

    regs: dict[str, int] = {}
    out = []
    for c in commands(payload.data["cmd_data"])[1]:
        if c.name.startswith("NPU_SET_"):
            regs[c.name] = c.payload if c.payload is not None else c.value
        elif c.name == "NPU_OP_CONV":
            assert regs["NPU_SET_WEIGHT_REGION"] == 0, "a tiny program reads its weights where Vela put them"
            out.append((f"CONV at byte {c.offset:#x}", regs["NPU_SET_WEIGHT_BASE"], regs["NPU_SET_WEIGHT_LENGTH"]))
    return out


@pytest.mark.parametrize("target", TARGETS)
def test_every_part_of_the_transposed_convolution_is_compared(levels: dict[str, NpuProgram], target: str) -> None:
    record = levels[target].record()
    assert record["outcome"] == "passed" and record["samples"] == 8, levels[target].detail()
    constants = record["constants"]
    assert (constants["operations"], constants["unrelated"], constants["difference"]) == (1 + len(FORMS[target]), [],
                                                                                          None), constants


@pytest.mark.parametrize("target", TARGETS)
def test_a_flipped_weight_byte_of_each_part_fails_naming_its_form(levels: dict[str, NpuProgram], target: str) -> None:
    level = levels[target]
    (processed,) = level.graphs
    (payload,) = find_payloads(processed)
    weights = processed.index(payload.data["weight_data"])
    parts = _weight_streams(payload, target)[1:]  # the first CONV is the plain 3x3 convolution
    assert len(parts) == len(FORMS[target]), parts
    for (name, start, length), form in zip(parts, FORMS[target], strict=True):
        difference = _flipped(level, processed, weights + start, length)
        assert difference is not None, f"{name}: a changed weight byte went unnoticed by the constants' comparison"
        assert difference.startswith(f"{name} (the TOSA graph's TRANSPOSE_CONV2D "), difference
        assert f"), {form}, output channel " in difference and " in the program, " in difference, difference


def _flipped(level: NpuProgram, processed: bytes, start: int, length: int) -> str | None:
    """The constants' difference once one byte of the stream at ``start`` is changed: the first byte from its middle
    whose change still decodes."""
    for at in range(start + length // 2, start + length):
        again = level.rerun({processed: processed[:at] + bytes([processed[at] ^ 0x10]) + processed[at + 1:]}, {})
        if again.error is None:
            difference: str | None = again.record()["constants"]["difference"]
            return difference
    raise AssertionError(f"no changed byte of the stream at {start:#x} decodes")
