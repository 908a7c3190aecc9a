"""The NPU-program level compares every weight, bias and scale of Vela's program with the TOSA graph's
constants (issue 58, item 3), so that a changed value the NPU reads fails it whichever samples run; and it
runs on the U65-512's dual-core programs (item 2). One tiny build (tests/grouped_plugin.py's grouped-tiny:
a convolution, grouped convolutions, a pool and a linear layer) for u55-128 and its u65-512 retarget."""

from __future__ import annotations

from typing import Any

import pytest

from tests.command_stream.reads import operations
from tests.tiny_builds import compile_verified
from zoo.registry.numerics.npu_program import NpuProgram
from zoo.registry.pte.vela_payload import find_payloads

pytestmark = pytest.mark.compile

TARGETS = ["u55-128", "u65-512"]


@pytest.fixture(scope="module")
def levels(tmp_path_factory: pytest.TempPathFactory) -> dict[str, NpuProgram]:
    with pytest.MonkeyPatch.context() as mp:
        results = compile_verified(mp, tmp_path_factory.mktemp("grouped"), "tests.grouped_plugin", "grouped-tiny",
                                   TARGETS)
    out = {}
    for target, result in zip(TARGETS, results, strict=True):
        assert result.numerics is not None and result.numerics.npu is not None, target
        out[target] = result.numerics.npu
    return out


def _processed(level: NpuProgram) -> bytes:
    (processed,) = {p for _, p, _, _ in level.kept}
    return processed


def _again(level: NpuProgram, at: int, bits: int = 1) -> NpuProgram:
    """The level on the same calls with byte ``at`` of the payload's processed bytes changed."""
    processed = _processed(level)
    mutated = processed[:at] + bytes([processed[at] ^ bits]) + processed[at + 1:]
    return level.rerun({processed: mutated}, {mutated: level.fast_scratch.get(processed, 0)})


def _stream_byte(processed: bytes, op: Any, stream: str, k: int) -> int:
    """The offset in ``processed`` of byte ``k`` of ``op``'s ``stream`` (in the payload's weight_data)."""
    (payload,) = find_payloads(processed)
    start, length = op.streams[stream]
    assert 0 <= k < length
    return processed.index(payload.data["weight_data"]) + start + k


def _linear(processed: bytes) -> Any:
    """The linear layer's operation: the last convolution, 16 channels in, 5 out."""
    (payload,) = find_payloads(processed)
    ops, _ = operations(payload)
    assert ops[-1].registers["OFM_DEPTH_M1"] == 4 and ops[-1].registers["IFM_DEPTH_M1"] == 15, ops[-1]
    return ops[-1]


@pytest.mark.parametrize("target", TARGETS)
def test_the_level_passes_and_compares_every_convolutions_constants(levels: dict[str, NpuProgram], target: str) -> None:
    """u65-512 is a dual-core program: each core's weight and scale streams hold every other OFM channel."""
    level = levels[target]
    record = level.record()
    assert record["outcome"] == "passed" and record["delegate_calls"] > 0, level.detail()
    assert record["constants"]["difference"] is None and not record["constants"]["unrelated"], record["constants"]
    # 8 convolutions in the graph (one, 2 + 4 groups, the linear layer): each at least one operation of the program.
    assert record["constants"]["operations"] >= 8, record["constants"]
    assert "equal the TOSA graph's constants" in level.detail()


@pytest.mark.parametrize("target", TARGETS)
def test_one_flipped_weight_byte_of_the_linear_layer_fails_naming_the_operation(
        levels: dict[str, NpuProgram], target: str) -> None:
    level = levels[target]
    processed = _processed(level)
    op = _linear(processed)
    failed = None
    for k in range(op.streams["WEIGHT"][1] // 2, op.streams["WEIGHT"][1]):  # a byte whose change still decodes
        again = _again(level, _stream_byte(processed, op, "WEIGHT", k))
        if again.error is None:
            failed = again
            break
    assert failed is not None
    record = failed.record()
    assert record["outcome"] == "failed" and not failed.check()["passed"]
    assert record["constants"]["difference"].startswith(f"{op.name} (the TOSA graph's CONV2D "), record["constants"]
    assert "weight [0, 0, " in failed.detail() and "in the program" in failed.detail(), failed.detail()
    assert "a constant differs from the TOSA graph's" in failed.detail()


def test_a_changed_bias_fails_naming_it(levels: dict[str, NpuProgram]) -> None:
    level = levels["u55-128"]
    processed = _processed(level)
    op = _linear(processed)
    again = _again(level, _stream_byte(processed, op, "SCALE", 0))
    assert not again.check()["passed"]
    assert again.record()["constants"]["difference"].endswith(" in the graph"), again.detail()
    assert f"{op.name} (the TOSA graph's CONV2D" in again.detail() and ": the bias is " in again.detail()


def test_a_changed_register_value_fails(levels: dict[str, NpuProgram]) -> None:
    """The linear layer's OFM zero point, moved by one: its scales and weights are intact, the samples differ."""
    level = levels["u55-128"]
    processed = _processed(level)
    (payload,) = find_payloads(processed)
    cmd_data = processed.index(payload.data["cmd_data"])
    from zoo.registry.command_stream import program_of

    last = [c for c in program_of(payload).commands if c.name == "NPU_SET_OFM_ZERO_POINT"][-1]
    header = len(payload.data["cmd_data"]) - 4 * len(_words(payload.data["cmd_data"]))
    at = cmd_data + header + last.offset + 2  # the parameter's low byte
    again = _again(level, at)
    assert not again.check()["passed"] and again.difference is not None, again.detail()


def _words(cmd_data: bytes) -> tuple[int, ...]:
    from zoo.registry.command_stream.stream import split

    return split(cmd_data)[1]


@pytest.mark.parametrize("target", TARGETS)
def test_a_byte_nobody_reads_changes_nothing(levels: dict[str, NpuProgram], target: str) -> None:
    """The padding after the payload's 4-byte scratch_size block: no parser, DMA or operation reads it."""
    level = levels[target]
    processed = _processed(level)
    at = processed.index(b"scratch_size") + 32 + 4
    again = _again(level, at, 0xFF)
    assert again.record()["outcome"] == "passed", again.detail()
    assert again.record()["constants"] == level.record()["constants"]
