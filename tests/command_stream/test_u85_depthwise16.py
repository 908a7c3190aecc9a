"""A DEPTHWISE from a 16-bit IFM on the U85 (issue 58): tests/ops_plugin.py's ops-depthwise at a16w8 on u85-256,
one build (about 35 s once torch is loaded): a convolution, then 3x3 and 5x5 stride-2 depthwise convolutions of 8
channels, palm-detection's kernels. Vela 5.1.0 writes both with ``ACC_FORMAT`` I48 and SWD weights whose sub-kernels
Regor pads, from a 16-bit IFM, by 2 more positions of zeros at the end and after every tenth position
(``_dwPaddingCount``), on the U85-256 too, where 8-bit IFMs get none. The NPU-program level is bit-exact with the TOSA
reference model, every weight and scale equal to the graph's; one weight byte of the 5x5 changed fails it."""

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


@pytest.fixture(scope="module")
def level(tmp_path_factory: pytest.TempPathFactory) -> NpuProgram:
    """The level the build's check ran (it holds the calls and the TOSA graph, for reruns), in a cache of its own:
    tests/firmware/test_npu_model_u85.py fetches the same build from the run's cache, where it may come first."""
    return ops_level(tmp_path_factory, "ops-depthwise", "u85-256", "a16w8")


def _depthwise(processed: bytes) -> list[tuple[str, dict[str, int]]]:
    return [(name, regs) for name, _, regs in program_ops(processed) if name.startswith("DEPTHWISE")]


def test_a_16_bit_depthwise_is_bit_exact_and_its_padded_weights_equal_the_graphs(level: NpuProgram) -> None:
    record = level.record()
    assert record["outcome"] == "passed" and record["samples"] == 8, level.detail()
    # the convolution and both depthwise ones: 3*3*3*8 + 9*8 + 25*8 weights, 3 * 8 biases and 3 * 8 scales
    assert record["constants"] == {"operations": 3, "values": 560, "unrelated": [], "difference": None}
    ops = _depthwise(processed_program(level))
    assert [(r["KERNEL_HEIGHT_M1"] + 1, r["KERNEL_WIDTH_M1"] + 1) for _, r in ops] == [(3, 3), (5, 5)]
    for _, regs in ops:
        assert bits("ifm.precision", regs["IFM_PRECISION"]) == 1  # 16-bit
        assert bits("acc.format", regs["ACC_FORMAT"]) == 1  # I48


def test_a_changed_weight_byte_of_the_16_bit_depthwise_fails_the_level(level: NpuProgram) -> None:
    """A byte of the 5x5's SWD stream, which the program reads from flash (weight region 0)."""
    (name, regs), = [op for op in _depthwise(processed_program(level)) if op[1]["KERNEL_HEIGHT_M1"] == 4]
    start = in_flash(level, regs["WEIGHT_REGION"], regs["WEIGHT_BASE"])
    failed = changed_bit(level, range(start + regs["WEIGHT_LENGTH"] // 2, start + regs["WEIGHT_LENGTH"]))
    assert failed.record()["outcome"] == "failed" and not failed.check()["passed"]
    difference = failed.record()["constants"]["difference"]
    assert difference.startswith(f"{name} (the TOSA graph's DEPTHWISE_CONV2D "), difference
