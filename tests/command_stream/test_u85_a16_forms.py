"""The a16w8 forms every MediaPipe build on the U85 stopped at (issue 58), in tests/ops_plugin.py's ops-a16-forms at
a16w8 on u85-256, one build (about 40 s once torch is loaded): a 1x1 convolution whose 48-bit result two RESCALEs read
(Regor folds neither into it: a 64-bit OFM, the accumulator unscaled, and two null pools that load it from a 64-bit
IFM2 into the 48-bit accumulator and rescale it, into 16 and 32 bits), ``nn.PReLU`` (an ELEMENTWISE MUL of two 16-bit
maps into a 16-bit one, then a 16-bit ADD) and a product of two activations (a 1x1 SUM widening 16 bits into 32, then a
32-bit MUL). The NPU-program level is bit-exact with the TOSA reference model, every weight and scale equal to the
graph's; a changed weight byte of the convolution into 64 bits, a changed PReLU slope and a changed scale of a null
pool each fail it."""

from __future__ import annotations

import pytest

from tests.command_stream.levels import (
    changed_bit,
    in_flash,
    ops_level,
    processed_program,
    program_ops,
)
from zoo.registry.command_stream.u85.regs import bits
from zoo.registry.numerics.npu_program import NpuProgram

pytestmark = pytest.mark.compile

B16, B32, B64 = 1, 2, 3
ACC_IFM2 = 2


@pytest.fixture(scope="module")
def level(tmp_path_factory: pytest.TempPathFactory) -> NpuProgram:
    """The level the build's check ran (it holds the calls and the TOSA graph, for reruns), in a cache of its own."""
    return ops_level(tmp_path_factory, "ops-a16-forms", "u85-256", "a16w8")


def _b64_conv(ops: list[tuple[str, int, dict[str, int]]]) -> tuple[str, dict[str, int]]:
    (found,) = [(name, r) for name, _, r in ops if name.startswith("CONV") and bits("ofm.precision", r["OFM_PRECISION"]) == B64]
    return found


def _null_pools(ops: list[tuple[str, int, dict[str, int]]]) -> list[tuple[str, dict[str, int]]]:
    return [(name, r) for name, param, r in ops if name.startswith("POOL") and bits("pool.mode", param) == 4]


def _mul16(ops: list[tuple[str, int, dict[str, int]]]) -> tuple[str, dict[str, int]]:
    (found,) = [(name, r) for name, param, r in ops if name.startswith("ELEMENTWISE") and param == 0
                and {bits("ifm.precision", r["IFM_PRECISION"]), bits("ifm.precision", r["IFM2_PRECISION"]),
                     bits("ofm.precision", r["OFM_PRECISION"])} == {B16}]
    return found


def test_the_a16w8_forms_are_bit_exact_and_their_constants_equal_the_graphs(level: NpuProgram) -> None:
    record = level.record()
    assert record["outcome"] == "passed" and record["samples"] == 8, level.detail()
    # four convolutions (3x3 a and b, the two 1x1): 2 * (3*3*3*8) + 2 * 8*8 weights, and 4 * 8 channels' biases,
    # scales and shifts
    assert record["constants"] == {"operations": 4, "values": 656, "unrelated": [], "difference": None}
    ops = program_ops(processed_program(level))
    _, conv = _b64_conv(ops)
    assert bits("ifm.precision", conv["IFM_PRECISION"]) == B16 and bits("acc.format", conv["ACC_FORMAT"]) == 1
    pools = _null_pools(ops)
    assert len(pools) == 2
    assert sorted(bits("ofm.precision", r["OFM_PRECISION"]) for _, r in pools) == [B16, B32]
    for _, r in pools:  # each loads the 64-bit map into the 48-bit accumulator
        assert bits("ifm.precision", r["IFM2_PRECISION"]) == B64
        assert (bits("acc.input", r["ACC_FORMAT"]), bits("acc.format", r["ACC_FORMAT"])) == (ACC_IFM2, 1)
    _mul16(ops)


def test_a_changed_weight_byte_of_the_convolution_into_64_bits_fails_the_level(level: NpuProgram) -> None:
    name, regs = _b64_conv(program_ops(processed_program(level)))
    start = in_flash(level, regs["WEIGHT_REGION"], regs["WEIGHT_BASE"])
    failed = changed_bit(level, range(start + regs["WEIGHT_LENGTH"] // 2, start + regs["WEIGHT_LENGTH"]))
    assert failed.record()["outcome"] == "failed" and not failed.check()["passed"]
    difference = failed.record()["constants"]["difference"]
    assert difference.startswith(f"{name} (the TOSA graph's CONV2D "), difference


def test_a_changed_prelu_slope_fails_the_16_bit_mul(level: NpuProgram) -> None:
    """The slopes are the MUL's IFM2, a constant map in flash: a changed one is caught by the samples alone."""
    _, regs = _mul16(program_ops(processed_program(level)))
    start = in_flash(level, regs["IFM2_REGION"], regs["IFM2_BASE0"])
    failed = changed_bit(level, range(start + 1, start + 2))  # the high byte of the first slope
    record = failed.record()
    assert record["outcome"] == "failed" and record["constants"]["difference"] is None, failed.detail()
    assert record["first_difference"] is not None


@pytest.mark.parametrize("bits_out", [B16, B32])
def test_a_changed_scale_of_a_null_pool_from_64_bits_fails_the_level(level: NpuProgram, bits_out: int) -> None:
    """The null pools' scale records (a 48-bit bias and a 15-bit scale each) are the RESCALEs': the samples check them."""
    (name, regs), = [p for p in _null_pools(program_ops(processed_program(level))) if bits("ofm.precision", p[1]["OFM_PRECISION"]) == bits_out]
    assert not bits("ofm.scale_mode", regs["OFM_PRECISION"]), f"{name} has a global scale"
    start = in_flash(level, regs["SCALE_REGION"], regs["SCALE_BASE"])
    failed = changed_bit(level, range(start + 7, start + 8))  # the high byte of channel 0's 15-bit scale
    record = failed.record()
    assert record["outcome"] == "failed" and record["first_difference"] is not None, failed.detail()
