"""``--verify``'s "NPU program" level on real builds: each delegate's Vela program on the command-stream
interpreter (a stand-in for the NPU) against the TOSA reference model, recorded in the manifest."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.command_stream.bundles import bundled
from tests.conftest import in_shared_cache
from zoo import Artifact
from zoo.cli.format import verification_lines
from zoo.registry.numerics.npu_program import NpuProgram, with_level
from zoo.registry.pte.vela_payload import find_payloads
from zoo.registry.verify.verification import Verification

pytestmark = pytest.mark.compile

STAND_IN = "NPU program (command-stream interpreter, a stand-in for the NPU)"


def _numerics(art: Artifact) -> dict[str, Any]:
    numerics: dict[str, Any] = (art.manifest.verification or {})["numerics"]
    return numerics


def _level(art: Artifact) -> dict[str, Any]:
    (check,) = [c for c in _numerics(art)["checks"] if c["name"] == "npu_program"]
    return check


@pytest.mark.parametrize("build", ["mnist int8", "mnist int8 u55-64"])
def test_mnist_records_the_npu_program_as_bit_exact(mnist_io_builds: dict[str, Artifact], build: str) -> None:
    """u55-64 is a retarget of the u55-128 lowering: its level runs its own program on the same calls."""
    art = mnist_io_builds[build]
    check, record = _level(art), _numerics(art)["npu_program"]
    assert check["passed"] and not check["skipped"]
    assert check["detail"] == (f"{STAND_IN}: bit-exact with the TOSA reference model on 8 samples "
                               "(the first 8 at most), 8 delegate calls; the 106,110 weights, biases and scales of "
                               f"its {record['constants']['operations']} convolutions equal the TOSA graph's constants")
    assert record["outcome"] == "passed" and record["samples"] == 8 and record["delegate_calls"] == 8
    # The graph's four convolutions, as Vela stripes them for each target (issue 58, item 3).
    assert record["constants"]["operations"] >= 4 and record["constants"]["difference"] is None


def _weight_byte_flipped(processed: bytes) -> bytes:
    """The payload with one byte of conv1's weight stream flipped (tests/command_stream/test_mnist.py's)."""
    (payload,) = find_payloads(processed)
    at = processed.index(payload.data["weight_data"]) + 170
    return processed[:at] + bytes([processed[at] ^ 1]) + processed[at + 1:]


def test_a_flipped_weight_byte_fails_the_level_and_the_verification(mnist_io_builds: dict[str, Artifact]) -> None:
    """The build's own bundle holds the delegate's int8 inputs and the TOSA reference model's outputs
    (the whole program with --io int8): the level runs them again on a payload with one weight byte changed."""
    from executorch.devtools.bundled_program.serialize import (
        deserialize_from_flatbuffer_to_bundled_program,
    )

    art = mnist_io_builds["mnist int8"]
    bundle = bundled(art)
    assert art.bundle is not None
    program = bytes(deserialize_from_flatbuffer_to_bundled_program(art.bundle.read_bytes()).program)
    (payload,) = find_payloads(program)
    processed = program[payload.offset:payload.offset + payload.length]
    level = NpuProgram()
    for i, (given, expected) in enumerate(bundle.cases):
        level.start_sample(i)
        level.delegate_call(processed, [np.frombuffer(given, np.int8)], [np.frombuffer(expected, np.int8)])
    assert level.check()["passed"] and level.calls == 3
    mutated = level.rerun({processed: _weight_byte_flipped(processed)}, {})
    record = with_level(_numerics(art), mutated)
    assert not record["passed"] and record["npu_program"]["outcome"] == "failed"
    diff = record["npu_program"]["first_difference"]
    assert (diff["sample"], diff["delegate_call"], diff["output"]) == (0, 0, 0) and diff["interpreter"] != diff["reference"]
    assert diff["written_by"] == "CONV at byte 0x814 writing its OFM"  # the last command of the stream (the .dis)
    v = Verification("mnist for u55-128", [], numerics=record)
    (problem,) = v.problems()
    assert problem.startswith(f"numerics npu_program: {STAND_IN}: differs from the TOSA reference model at sample 0, "
                              f"delegate call 0, output 0, element {diff['element']}: interpreter {diff['interpreter']}, "
                              f"TOSA reference model {diff['reference']}")


@pytest.fixture(scope="module")
def softmax(shared_cache: Path, boards_config: Path) -> dict[str, Artifact]:
    """softmax for u55-128 and u85-256, verified, as the session's ``built`` builds them (the same cache)."""
    from zoo import Zoo, ZooOptions

    with in_shared_cache(shared_cache):
        targets = ["u55-128", "u85-256"]
        arts = Zoo(ZooOptions(config_path=boards_config)).fetch_many(["softmax"], targets, verify=True)
        return dict(zip(targets, arts, strict=True))


def test_softmax_on_u55_is_bit_exact(softmax: dict[str, Artifact]) -> None:
    """Regor's int8 softmax: scalar and broadcast ELEMENTWISE, 32-bit operands, two LUTs in the SHRAM; and one
    CONV of Regor's own, which no convolution of the TOSA graph has (issue 58, item 3: counted, left to the samples)."""
    art = softmax["u55-128"]
    check, record = _level(art), _numerics(art)["npu_program"]
    assert check["passed"] and not check["skipped"]
    assert check["detail"] == (f"{STAND_IN}: bit-exact with the TOSA reference model on 8 samples "
                               "(the first 8 at most), 8 delegate calls; 1 convolution not related to a convolution "
                               "of the TOSA graph, checked by the samples alone")
    assert record["constants"]["operations"] == 0 and len(record["constants"]["unrelated"]) == 1
    assert record["outcome"] == "passed" and record["samples"] == 8


def test_softmax_on_u85_is_bit_exact(softmax: dict[str, Artifact]) -> None:
    """The U85 interpreter (command_stream/u85) on Regor's softmax: two LUTs DMA'd into the LUT memory, a
    REDUCE_SUM chained as 32 bits into a SUB of a 32-bit scalar."""
    art = softmax["u85-256"]
    check, record = _level(art), _numerics(art)["npu_program"]
    assert check["passed"] and not check["skipped"] and _numerics(art)["passed"]
    assert record["outcome"] == "passed" and record["samples"] == 8
    lines = verification_lines(Verification("softmax for u85-256", [], numerics=_numerics(art)))
    assert any(line.startswith("  ok    npu_program") for line in lines), lines


def test_the_u85_census_reads_softmaxs_u85_program(softmax: dict[str, Artifact]) -> None:
    """benchmarks/u85_streams.py on a real U85 program: softmax's column of docs/verification.md's table."""
    from tests.command_stream.u85_script import u85

    (payload,) = find_payloads(softmax["u85-256"].pte.read_bytes())
    census = u85.census(payload)
    row = u85.summary([census])
    assert census.config.describe().startswith("Ethos-U85, 256 MACs/cycle, command stream version 1")
    assert row["commands"] == "184"
    assert row["operations"] == "DMA_START 2, ELEMENTWISE MUL 1, ELEMENTWISE SUB 2, POOL MAX 1, POOL REDUCE_SUM 1"
    assert row["commands the U55 lacks"] == "`IFM2_SCALE` 3, `IFM_BROADCAST` 1, `IFM_SCALE` 3, `OP_SCALAR` 1"
    assert row["chained OFM / IFM, IFM2 (storage `CHAINED`)"] == "1 / 1, 0"
    assert row["LUT activations"] == "LUT_NONE 3, LUT_S8_S8 2"
    assert census.fields[("DMA0_DST_REGION.region_mode", "INTERNAL")] == 2
    assert census.u55_reading == "unknown cmd0 opcode 264 at word 124 (byte 496) of the Ethos-U55 command stream"


def test_a_dedicated_sram_build_runs_with_the_arena_cache_its_vela_flags_gave(mnist_u65: Artifact) -> None:
    """u65-256 is Dedicated_Sram: its activations live in the fast scratch, Vela's 384 KiB arena cache.
    Run without it, the program reaches past an empty region 2 and the level would fail."""
    check, record = _level(mnist_u65), _numerics(mnist_u65)["npu_program"]
    assert mnist_u65.manifest.target_options.memory_mode == "Dedicated_Sram_384KB"
    assert check["passed"] and not check["skipped"] and record["samples"] == 8
