"""Decoding a command stream: the driver-action header, cmd0/cmd1 words, and what is refused."""

from __future__ import annotations

import pytest

from tests.command_stream.programs import cmd0, cmd1, cmd_data
from zoo.registry.command_stream import NotInterpreted, StreamError, disassemble, parse


def test_decodes_names_values_and_payloads() -> None:
    program = parse(cmd_data(cmd0("NPU_SET_IFM_ZERO_POINT", -128) + cmd1("NPU_SET_OFM_SCALE", 0x80000001, 31)
                             + cmd0("NPU_OP_STOP", 0xFFFF)))
    assert program.config.product == 0 and program.config.macs_per_cycle == 128 and program.config.shram_kib == 24
    zp, scale, stop = program.commands
    assert (zp.name, zp.value, zp.offset) == ("NPU_SET_IFM_ZERO_POINT", -128, 0)
    assert (scale.name, scale.payload, scale.param, scale.offset) == ("NPU_SET_OFM_SCALE", 0x80000001, 31, 4)
    assert (stop.name, stop.offset) == ("NPU_OP_STOP", 12)
    assert disassemble(program).splitlines() == [
        "; Ethos-U55, 128 MACs/cycle, 24 KiB SHRAM (config 0x00001807), 3 commands",
        "    0: NPU_SET_IFM_ZERO_POINT       -128",
        "    4: NPU_SET_OFM_SCALE            scale=0x80000001 shift=31",
        "    c: NPU_OP_STOP                  65535",
    ]


def test_an_unknown_opcode_names_its_word() -> None:
    with pytest.raises(StreamError, match=r"unknown cmd0 opcode 4 at word 2 \(byte 8\)"):
        parse(cmd_data(cmd0("NPU_SET_IFM_PAD_TOP", 1) + cmd0("NPU_SET_IFM_PAD_LEFT", 1) + [4]))
    with pytest.raises(StreamError, match=r"unknown cmd1 opcode 7 at word 0 \(byte 0\)"):
        parse(cmd_data([0x4007, 0]))


def test_a_u65_register_is_unknown_to_the_u55() -> None:
    words = cmd0("NPU_SET_PARALLEL_MODE", 1) + cmd0("NPU_OP_STOP")
    with pytest.raises(StreamError, match=r"unknown cmd0 opcode 291 at word 0 .* Ethos-U55"):
        parse(cmd_data(words))
    assert parse(cmd_data(words, config=0x10001808)).commands[0].name == "NPU_SET_PARALLEL_MODE"


def test_reserved_bits_and_cut_off_payloads_are_refused() -> None:
    with pytest.raises(StreamError, match=r"word 0 .* reserved bits"):
        parse(cmd_data([1 << 10]))
    with pytest.raises(StreamError, match="NPU_SET_DMA0_LEN at word 0 is cut off"):
        parse(cmd_data(cmd1("NPU_SET_DMA0_LEN", 16)[:1]))


def test_the_header_is_checked() -> None:
    with pytest.raises(StreamError, match="COP1"):
        parse(b"\0" * 16)
    with pytest.raises(NotInterpreted, match="not implemented: the Ethos-U85 command stream"):
        parse(cmd_data(cmd0("NPU_OP_STOP"), config=0x20000118))
    with pytest.raises(StreamError, match="claims 9 words"):
        data = cmd_data(cmd0("NPU_OP_STOP"))
        parse(data[:28] + (9 << 16 | 2).to_bytes(4, "little") + data[32:])
