"""benchmarks/u85_streams.py: the Ethos-U85 opcode tables and bit fields it decodes with, and its census of a stream."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.command_stream.programs import payload
from tests.command_stream.u85_script import u85
from zoo.registry.command_stream.errors import StreamError

ROOT = Path(__file__).resolve().parents[2]
HEADER = ROOT.parent / "shared" / "vendor" / "ethos-u-core-driver" / "src" / "ethosu85_interface.h"
U85_256 = 0x20000118  # config_r of mnist's u85-256 program: U85, 2**8 MACs, stream version 1
OP0 = {name: code for code, name in u85.CMD0.items()}
OP1 = {name: code for code, name in u85.CMD1.items()}


def c0(name: str, value: int = 0) -> list[int]:
    return [OP0[name] | ((value & 0xFFFF) << 16)]


def c1(name: str, payload_word: int, param: int = 0) -> list[int]:
    return [OP1[name] | 0x4000 | (param << 16), payload_word]


@pytest.mark.skipif(not HEADER.is_file(), reason=f"the register map is not at {HEADER}")
def test_the_tables_and_fields_are_the_u85_register_map() -> None:
    src = HEADER.read_text()
    for enum, table in (("cmd0_opcode", u85.CMD0), ("cmd1_opcode", u85.CMD1)):
        body = re.search(rf"enum class {enum} : uint16_t\n\{{\n(.*?)\}};", src, re.S)
        assert body is not None
        assert {int(v): n for n, v in re.findall(r"(\w+) = (\d+),", body.group(1))} == table
    for name, fields in u85.FIELDS.items():
        struct = re.search(rf"struct {name.lower()}_t\n\{{\n#ifdef __cplusplus\nprivate:\n#endif\n(.*?)#ifdef", src, re.S)
        assert struct is not None, name
        where, pos = {}, 0
        for field, width in re.findall(r"uint32_t (\w+):(\d+);", struct.group(1)):
            where[field] = (pos, int(width))
            pos += int(width)
        for f in fields:
            (header_name,) = [k for k in where if k in (f.name, f"{f.name}_mode") or k.endswith(f"_{f.name}")]
            assert where[header_name] == (f.lsb, f.width), (name, f.name)


def _stream() -> list[int]:
    chained_ifm = 1 | (2 << 14)  # signed, B8, NHWC, CHAINED (bits 30-31 of the word)
    ofm = 1 | (1 << 6) | (6 << 11)  # signed, NHCWB16, transposed CHW
    return (c0("NPU_SET_IFM_PRECISION", 1) + c0("NPU_SET_OFM_PRECISION", ofm)
            + c0("NPU_SET_ACC_FORMAT", 3 << 8) + c0("NPU_SET_WEIGHT_FORMAT", 1) + c0("NPU_SET_KERNEL_STRIDE", 1 << 2)
            + c0("NPU_SET_OFM_BLK_WIDTH_M1", 7) + c0("NPU_SET_OFM_BLK_HEIGHT_M1", 3) + c0("NPU_SET_OFM_BLK_DEPTH_M1", 15)
            + c1("NPU_SET_OFM_SCALE", 0x4000_0000, 31 | (1 << 13)) + c0("NPU_SET_WEIGHT_REGION", 0)
            + c1("NPU_SET_WEIGHT_BASE", 0) + c1("NPU_SET_WEIGHT_LENGTH", 16) + c0("NPU_OP_CONV")
            + c0("NPU_SET_IFM_PRECISION", chained_ifm) + c0("NPU_SET_IFM2_BROADCAST", 8)
            + c1("NPU_SET_IFM_SCALE", 1) + c1("NPU_SET_OP_SCALAR", 5) + c0("NPU_OP_ELEMENTWISE", 11)
            + c0("NPU_OP_STOP", 0xFFFF))


def test_a_u85_stream_is_counted_by_command_operation_and_field() -> None:
    c = u85.census(payload(_stream(), config=U85_256))
    assert c.config.describe() == ("Ethos-U85, 256 MACs/cycle, command stream version 1, 2 AXI SRAM port(s), "
                                   "1 AXI external port(s), 1 weight decoder(s)")
    assert c.operations == {"CONV": 1, "ELEMENTWISE DIV": 1, "STOP": 1}
    assert c.commands["NPU_SET_IFM_PRECISION"] == 2 and c.commands["NPU_SET_OP_SCALAR"] == 1
    assert c.fields[("WEIGHT_FORMAT.format", "FWD")] == 1 and c.fields[("ACC_FORMAT.microblock", "U2X2")] == 2
    assert c.fields[("OFM_PRECISION.transpose", "CHW")] == 2 and c.fields[("OFM_PRECISION.format", "NHCWB16")] == 2
    assert c.fields[("IFM_PRECISION.storage", "TILE2X2")] == 1 and c.fields[("IFM_PRECISION.storage", "CHAINED")] == 1
    assert c.fields[("OFM_SCALE.round_mode", "NATURAL")] == 2 and c.fields[("IFM2_BROADCAST.mode", "SCALAR")] == 1
    assert c.fields[("KERNEL_STRIDE.weight_order", "PART_KERNEL_FIRST")] == 1
    assert c.blocks == {"8x4x16": 2} and c.weight_streams == {1: 1}
    assert c.u55_reading == "unknown cmd0 opcode 302 at word 3 (byte 12) of the Ethos-U55 command stream"
    assert c.renamed == {"NPU_SET_IFM_SCALE <- NPU_SET_OPA_SCALE": 1}
    row = u85.summary([c, c])
    assert row["operations"] == "CONV 2, ELEMENTWISE DIV 2"
    assert row["commands the U55 lacks"] == "`IFM_SCALE` 2, `OP_SCALAR` 2, `WEIGHT_FORMAT` 2"
    assert row["chained OFM / IFM, IFM2 (storage `CHAINED`)"] == "0 / 2, 0"
    assert row["weight formats (`WEIGHT_FORMAT`)"] == "FWD 2; NONE 2"
    assert row["U55 decoder stops at"] == "unknown cmd0 opcode 302"


def test_the_weight_probe_hands_each_convolutions_stream_to_mlw_codec() -> None:
    from ethosu import mlw_codec

    weights = bytes(mlw_codec.encode(list(range(-8, 8))))
    words = _stream()
    at = words.index(OP1["NPU_SET_WEIGHT_LENGTH"] | 0x4000)
    words[at + 1] = len(weights)
    with u85.Decoder() as decoder:
        c = u85.census(payload(words, weights=weights, config=U85_256), decoder)
        broken = u85.census(payload(words, weights=bytes(len(weights)), config=U85_256), decoder)
    (probe,) = c.probes
    assert (probe.operation, probe.weight_format, probe.stream_bytes, probe.decoded_values) == (
        "CONV", "FWD/NONE", len(weights), 16)
    assert broken.probes[0].decoded_values is None and broken.probes[0].said


def test_a_stream_that_is_not_a_u85_one_is_refused() -> None:
    with pytest.raises(StreamError, match="not an Ethos-U85 command stream: Ethos-U55, 128 MACs/cycle"):
        u85.census(payload(c0("NPU_OP_STOP")))
    with pytest.raises(StreamError, match=r"unknown cmd0 opcode 4 at word 1 \(byte 4\) of the Ethos-U85"):
        u85.census(payload([*c0("NPU_OP_STOP"), 4], config=U85_256))


def test_the_script_reports_a_file_without_a_payload(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    empty = tmp_path / "empty.pte"
    empty.write_bytes(b"\0" * 64)
    assert u85.main([str(empty)]) == 1
    assert capsys.readouterr().err == (f"error: {empty} holds no Vela payload; give a .pte built for an Ethos-U85 "
                                       "target\n")
