"""The NPU-program level on an Ethos-U85 build: mnist for u85-256 with int8 I/O, verified, with its bundle
(one build, about a minute). Its Vela program runs on the U85 interpreter bit-exact with the TOSA reference
model, and every weight, bias and scale its convolutions read equals the TOSA graph's constants; one weight
byte or one register value changed fails the level; a byte nobody reads changes nothing."""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.command_stream.bundles import bundled
from tests.command_stream.levels import recording_levels
from tests.conftest import in_shared_cache
from zoo import Artifact
from zoo.registry.numerics.npu_program import NpuProgram
from zoo.registry.pte.vela_payload import find_payloads

pytestmark = pytest.mark.compile

STAND_IN = "NPU program (command-stream interpreter, a stand-in for the NPU)"
CONV2_WEIGHTS = 0x300  # WEIGHT_BASE of the program's second CONV (FWD, raw: a 32-byte header, then one byte a weight)
FC2_SCALES = 0x1A9C0  # SCALE_BASE of the last CONV: 10 channels' records, padded to 16 (160 bytes)


@pytest.fixture(scope="module")
def built_u85(shared_cache: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Artifact, NpuProgram]:
    """The build, and the level its check ran (which holds the TOSA graph Vela compiled)."""
    from zoo import Zoo

    with in_shared_cache(shared_cache, tmp_path_factory.mktemp("mnist-u85")), recording_levels() as levels:
        art = Zoo().fetch("mnist", "u85-256", verify=True, io="int8", bundle=True)
    assert len(levels) == 1, "the build was a cache hit: no check ran in this process"
    return art, levels[0]


@pytest.fixture(scope="module")
def mnist_u85(built_u85: tuple[Artifact, NpuProgram]) -> Artifact:
    return built_u85[0]


def _level(art: Artifact) -> tuple[dict[str, Any], dict[str, Any]]:
    numerics = (art.manifest.verification or {})["numerics"]
    (check,) = [c for c in numerics["checks"] if c["name"] == "npu_program"]
    return check, numerics["npu_program"]


def test_mnist_on_u85_256_is_bit_exact(mnist_u85: Artifact) -> None:
    check, record = _level(mnist_u85)
    assert check["passed"] and not check["skipped"]
    assert check["detail"] == (f"{STAND_IN}: bit-exact with the TOSA reference model on 8 samples "
                               "(the first 8 at most), 8 delegate calls; the 106,110 weights, biases and scales of "
                               "its 4 convolutions equal the TOSA graph's constants")
    assert record["outcome"] == "passed" and record["samples"] == 8
    assert record["constants"] == {"operations": 4, "values": 106_110, "unrelated": [], "difference": None}


def _checked(art: Artifact) -> tuple[NpuProgram, bytes, bytes]:
    """The level over the bundle's cases (the delegate's int8 inputs, the TOSA reference model's outputs),
    the payload's processed bytes and its weight data."""
    bundle = bundled(art)
    (payload,) = find_payloads(art.pte.read_bytes())
    processed = art.pte.read_bytes()[payload.offset:payload.offset + payload.length]
    level = NpuProgram()
    for i, (given, expected) in enumerate(bundle.cases):
        level.start_sample(i)
        level.delegate_call(processed, [np.frombuffer(given, np.int8)], [np.frombuffer(expected, np.int8)])
    assert level.check()["passed"] and not level.skipped and level.calls == 3
    return level, processed, payload.data["weight_data"]


def _changed(processed: bytes, block: bytes, at: int, value: bytes) -> bytes:
    start = processed.index(block) + at
    return processed[:start] + value + processed[start + len(value):]


def test_a_flipped_weight_byte_fails_the_level(mnist_u85: Artifact) -> None:
    level, processed, weights = _checked(mnist_u85)
    at = CONV2_WEIGHTS + 32 + 5
    mutated = level.rerun({processed: _changed(processed, weights, at, bytes([weights[at] ^ 0x40]))}, {})
    record = mutated.record()
    assert record["outcome"] == "failed" and record["first_difference"] is not None, record
    assert record["first_difference"]["written_by"] == "CONV at byte 0x420 writing its OFM"  # the stream's last op


def test_a_changed_register_fails_the_level(mnist_u85: Artifact) -> None:
    """The last CONV's NPU_SET_OFM_ZERO_POINT (-2, the output's zero point) set to -1."""
    level, processed, _ = _checked(mnist_u85)
    (payload,) = find_payloads(mnist_u85.pte.read_bytes())
    cmd_data = payload.data["cmd_data"]
    word = struct.pack("<I", 280 | 0xFFFE << 16)
    assert cmd_data.count(word) == 1
    mutated = level.rerun({processed: _changed(processed, cmd_data, cmd_data.index(word),
                                                struct.pack("<I", 280 | 0xFFFF << 16))}, {})
    diff = mutated.record()["first_difference"]
    assert mutated.record()["outcome"] == "failed" and diff["interpreter"] == diff["reference"] + 1


def test_a_byte_nobody_reads_changes_nothing(mnist_u85: Artifact) -> None:
    """A padding record of the last CONV's scale stream (channel 12 of 10)."""
    level, processed, weights = _checked(mnist_u85)
    at = FC2_SCALES + 12 * 10
    assert weights[at] == 0
    mutated = level.rerun({processed: _changed(processed, weights, at, b"\x55")}, {})
    assert mutated.record()["outcome"] == "passed" and mutated.calls == 3


def test_a_flipped_weight_byte_is_a_constants_difference_naming_the_operation(
        built_u85: tuple[Artifact, NpuProgram]) -> None:
    """The same byte as above, now found by the constants' comparison (the rerun keeps the TOSA graph)."""
    from zoo.registry.command_stream.u85 import constants

    _, level = built_u85
    (processed,) = level.graphs
    (payload,) = find_payloads(processed)
    weights = payload.data["weight_data"]
    second = constants(payload)[1]
    assert second.weights.shape == (32, 3, 3, 16)
    at = CONV2_WEIGHTS + 32 + 5
    mutated = level.rerun({processed: _changed(processed, weights, at, bytes([weights[at] ^ 0x40]))}, {})
    difference = mutated.record()["constants"]["difference"]
    assert mutated.record()["outcome"] == "failed" and not mutated.check()["passed"]
    assert difference.startswith(f"{second.op} (the TOSA graph's CONV2D "), difference
    assert " in the program, " in difference and "a constant differs from the TOSA graph's" in mutated.detail()
