"""tests/vector_plugin.py's vector-tiny-seq (16 -> 32 -> 64 -> 8 features, ReLU between, over 4 vectors) on
u55-128 with int8 I/O, one build (about 25 s once torch is loaded). Vela 5.1.0 (Regor) runs each of its batched
1x1 CONV2Ds on a 2x2 map of the 4 vectors, but writes the two followed by a ReLU with a 4x1 OFM (the fused CLAMP's
shape): their IFM is read as 2 rows of 1 with 2 rows of padding, so vector 1's outputs come from vector 2's inputs
and vectors 2 and 3 from padding (docs/upstream.md, "A batched linear layer whose ReLU reshapes its output").

The NPU-program level must fail at element 8 (vector 1's first output); the same program with those two OFMs
written as 2x2 (and the first IFM's width and padding to match) gives the bundle's TOSA reference outputs exactly,
so the interpreter computes what the registers say and the defect is in the registers."""

from __future__ import annotations

import copy
import struct
from pathlib import Path

import pytest

from tests.command_stream.bundles import Bundled, bundled
from tests.conftest import in_shared_cache
from zoo.registry.command_stream import program_of, run
from zoo.registry.command_stream.stream import split
from zoo.registry.pte.vela_payload import VelaPayload

pytestmark = pytest.mark.compile

# (byte offset, register, as Vela 5.1.0 writes it, as a 2x2 OFM needs it): the first CONV's IFM (4 vectors
# of 16 at strides 32/16: a 2x2 map) and OFM (32 features), the second CONV's OFM (64 features, same 2x2 map).
REGISTERS = [
    (0x2C, "NPU_SET_IFM_WIDTH0_M1", 0, 1), (0x60, "NPU_SET_IFM_PAD_BOTTOM", 2, 0),
    (0x8C, "NPU_SET_OFM_HEIGHT_M1", 3, 1), (0x90, "NPU_SET_OFM_WIDTH_M1", 0, 1),
    (0x94, "NPU_SET_OFM_HEIGHT0_M1", 3, 1), (0x98, "NPU_SET_OFM_HEIGHT1_M1", 3, 1),
    (0x9C, "NPU_SET_OFM_WIDTH0_M1", 0, 1), (0xA4, "NPU_SET_OFM_STRIDE_Y", 32, 64),
    (0x150, "NPU_SET_OFM_STRIDE_Y", 64, 128),
]


@pytest.fixture(scope="module")
def seq(shared_cache: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Bundled, str]:
    from zoo import VerificationError, Zoo

    with in_shared_cache(shared_cache, tmp_path_factory.mktemp("vector-tiny-seq")), pytest.MonkeyPatch.context() as mp:
        mp.setenv("ZOO_PLUGINS", "tests.vector_plugin")
        with pytest.raises(VerificationError) as failed:
            Zoo().fetch("vector-tiny-seq", "u55-128", verify=True, io="int8", bundle=True)
        art = Zoo().fetch("vector-tiny-seq", "u55-128", verify=False, io="int8", bundle=True)
    return bundled(art, (64, 32)), str(failed.value)


def _written(payload: VelaPayload, values: dict[int, int]) -> VelaPayload:
    """``payload`` with the command at each byte offset of ``values`` setting that value instead."""
    data = payload.data["cmd_data"]
    words = list(struct.unpack(f"<{len(data) // 4}I", data))
    _, stream = split(data)
    start = next(i for i in range(len(words)) if tuple(words[i:i + len(stream)]) == stream)
    by_offset = {c.offset: c for c in program_of(payload).commands}
    for offset, value in values.items():
        i = start + offset // 4
        if by_offset[offset].payload is None:
            words[i] = (words[i] & 0xFFFF) | (value << 16)
        else:
            words[i + 1] = value
    changed = copy.copy(payload)
    changed.data = {**payload.data, "cmd_data": struct.pack(f"<{len(words)}I", *words)}
    return changed


def test_the_level_fails_at_the_second_vector(seq: tuple[Bundled, str]) -> None:
    _, failed = seq
    assert "element 8: interpreter 26, TOSA reference model 36" in failed, failed
    assert "Vela's program does not compute what its TOSA graph does" in failed


def test_the_relu_layers_write_a_4x1_ofm_from_a_2x2_ifm(seq: tuple[Bundled, str]) -> None:
    bundle, _ = seq
    by_offset = {c.offset: c for c in program_of(bundle.payload).commands}
    written = [(off, by_offset[off].name, by_offset[off].value if by_offset[off].payload is None else by_offset[off].payload)
               for off, _, _, _ in REGISTERS]
    assert written == [(off, name, vela) for off, name, vela, _ in REGISTERS]
    ifm_stride = {c.name: c.payload for c in program_of(bundle.payload).commands[:40] if c.name.startswith("NPU_SET_IFM_STRIDE")}
    assert ifm_stride["NPU_SET_IFM_STRIDE_Y"] == 2 * (ifm_stride["NPU_SET_IFM_STRIDE_X"] or 0) == 32


def test_vela_program_keeps_vector_0_only(seq: tuple[Bundled, str]) -> None:
    bundle, _ = seq
    for given, expected in bundle.cases:
        (got,) = run(bundle.payload, [given])
        rows = [got[i:i + 8] == expected[i:i + 8] for i in range(0, 32, 8)]
        assert rows[0] and not any(rows[1:]), rows


def test_with_a_2x2_ofm_the_program_gives_the_reference_outputs(seq: tuple[Bundled, str]) -> None:
    bundle, _ = seq
    fixed = _written(bundle.payload, {off: want for off, _, _, want in REGISTERS})
    for i, (given, expected) in enumerate(bundle.cases):
        (got,) = run(fixed, [given])
        assert got == expected, f"case {i}: interpreter {list(got)}, TOSA reference {list(expected)}"
