"""Hand-built command streams for the interpreter's unit tests: words, a cmd_data block, a payload."""

from __future__ import annotations

import struct

from zoo.registry.command_stream.regs import CMD0, CMD1
from zoo.registry.pte.vela_payload import TensorInfo, VelaPayload

OPCODE0 = {name: code for code, name in CMD0.items()}
OPCODE1 = {name: code for code, name in CMD1.items()}
U55_128 = 0x00001807  # config_r of mnist's u55-128 program: U55, 2**7 MACs, 24 KiB SHRAM


def cmd0(name: str, value: int = 0) -> list[int]:
    return [OPCODE0[name] | ((value & 0xFFFF) << 16)]


def cmd1(name: str, payload: int, param: int = 0) -> list[int]:
    return [OPCODE1[name] | 0x4000 | (param << 16), payload & 0xFFFFFFFF]


def cmd_data(words: list[int], config: int = U55_128) -> bytes:
    """COP1, CONFIG, NOPs to 16 bytes, COMMAND_STREAM, the words (Vela's driver-action layout)."""
    head = [int.from_bytes(b"COP1", "little"), 0x00100001, config, 0x10066001, 5, 5, 5]
    n = len(words)
    head.append(2 | ((n >> 16) & 0xFF) << 8 | (n & 0xFFFF) << 16)
    return struct.pack(f"<{len(head) + n}I", *head, *words)


def payload(words: list[int], *, weights: bytes = b"", scratch: int = 256, inputs: list[TensorInfo] | None = None,
            outputs: list[TensorInfo] | None = None, config: int = U55_128) -> VelaPayload:
    p = VelaPayload(offset=0, length=0, scratch_size=scratch, inputs=inputs or [], outputs=outputs or [])
    p.data = {"cmd_data": cmd_data(words, config), "weight_data": weights}
    p.blocks = list(p.data)
    return p
