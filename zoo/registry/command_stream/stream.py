"""A Vela ``cmd_data`` block as commands: the driver-action header, then cmd0/cmd1 words.

``cmd_data`` opens with the fourcc ``COP1``, a CONFIG action (the accelerator's ``config_r``
and ``id_r``: product, MACs per cycle, SHRAM size), NOPs, then a COMMAND_STREAM action
whose length (in words) precedes the commands (Vela's ``driver_actions.py``, the core
driver's ``ethosu_driver.c``). Each command is one little-endian word: opcode in bits 0-9,
bits 10-13 zero, bit 14 set when a 32-bit payload word follows (cmd1), the 16-bit
parameter in bits 16-31.
"""

from __future__ import annotations

import struct
from collections.abc import Collection, Mapping
from dataclasses import dataclass

from zoo.registry.command_stream.errors import NotInterpreted, StreamError
from zoo.registry.command_stream.regs import CMD0, CMD1, SIGNED, U55_ONLY, U65_ONLY

__all__ = ["PRODUCTS", "Command", "Config", "Program", "decode", "decode_words", "disassemble", "parse", "split"]

_FOURCC = int.from_bytes(b"COP1", "little")
_CONFIG, _CMD_STREAM, _NOP = 1, 2, 5
PRODUCTS = {0: "Ethos-U55", 1: "Ethos-U65", 2: "Ethos-U85"}
_BIT_FIELDS = ("PRECISION", "KERNEL_STRIDE", "ACTIVATION", "REGION", "BROADCAST", "ACC_FORMAT", "UPSCALE", "PARALLEL_MODE")
_SIZES = ("LENGTH", "LEN", "STRIDE_X", "STRIDE_Y", "STRIDE_C", "SIZE0", "SIZE1", "SKIP0", "SKIP1")


@dataclass(frozen=True)
class Config:
    """The accelerator the stream was compiled for (``config_r``)."""

    raw: int
    id_r: int

    @property
    def product(self) -> int:
        return self.raw >> 28

    @property
    def macs_per_cycle(self) -> int:
        return 1 << (self.raw & 0xF)

    @property
    def shram_kib(self) -> int:
        """The SHRAM of every core together (Regor's ``ConfigRegister``: the cores times one core's)."""
        return (self.raw >> 8) & 0xFF

    @property
    def cores(self) -> int:
        """2 on the U65-512 (two cores of 256 MACs, each with its own SHRAM), else 1."""
        return 2 if self.product == 1 and self.macs_per_cycle == 512 else 1

    def describe(self) -> str:
        name = PRODUCTS.get(self.product, f"product {self.product}")
        return f"{name}, {self.macs_per_cycle} MACs/cycle, {self.shram_kib} KiB SHRAM"


@dataclass(frozen=True)
class Command:
    offset: int
    """Byte offset in the command stream (after the driver-action header)."""
    opcode: int
    name: str
    param: int
    """The 16-bit parameter as stored."""
    payload: int | None = None
    """The second word of a cmd1."""

    @property
    def value(self) -> int:
        """The parameter as the register holds it: two's complement for zero points and clamps."""
        if self.name in SIGNED and self.param & 0x8000:
            return self.param - 0x10000
        return self.param

    def text(self) -> str:
        """``offset: NAME value``: bit fields in hex, counts and sizes in decimal, scales with their shift."""
        head = f"{self.offset:5x}: {self.name:28}"
        if self.payload is None:
            shown = f"{self.param:#06x}" if self.name.endswith(_BIT_FIELDS) else f"{self.value}"
            return f"{head} {shown}"
        if self.name.endswith("_SCALE"):
            return f"{head} scale={self.payload:#010x} shift={self.param & 0x3F}"
        shown = f"{self.payload}" if self.name.endswith(_SIZES) else f"{self.payload:#010x}"
        return f"{head} {shown}" + (f" param={self.param:#06x}" if self.param else "")


@dataclass(frozen=True)
class Program:
    config: Config
    commands: list[Command]


def _words(data: bytes) -> tuple[int, ...]:
    if len(data) % 4:
        raise StreamError(f"cmd_data is {len(data)} bytes, not a whole number of 32-bit words")
    return struct.unpack(f"<{len(data) // 4}I", data)


def parse(cmd_data: bytes) -> Program:
    """The driver-action header and the decoded command stream of a ``cmd_data`` block."""
    config, words = split(cmd_data)
    return Program(config, decode(words, config.product))


def split(cmd_data: bytes) -> tuple[Config, tuple[int, ...]]:
    """The accelerator a ``cmd_data`` block was compiled for, and its command stream's words, not yet decoded
    (what ``benchmarks/u85_streams.py`` reads an Ethos-U85 stream from)."""
    words = _words(cmd_data)
    if not words or words[0] != _FOURCC:
        raise StreamError("cmd_data does not open with the COP1 driver-action fourcc; is this a Vela command stream?")
    config: Config | None = None
    i = 1
    while i < len(words):
        tag = words[i]
        action = tag & 0xFF
        if action == _CONFIG:
            if i + 2 >= len(words):
                raise StreamError(f"the CONFIG driver action at word {i} is cut off")
            config = Config(words[i + 1], words[i + 2])
            i += 3
        elif action == _NOP:
            i += 1
        elif action == _CMD_STREAM:
            length = (tag >> 16) | (((tag >> 8) & 0xFF) << 16)
            if i + 1 + length > len(words):
                raise StreamError(f"the command stream claims {length} words, cmd_data holds {len(words) - i - 1} after its header")
            if config is None:
                raise StreamError("the command stream comes before any CONFIG driver action: the accelerator is unknown")
            return config, words[i + 1:i + 1 + length]
        else:
            raise StreamError(f"unknown driver action {action} at word {i} of cmd_data")
    raise StreamError("cmd_data has no COMMAND_STREAM driver action")


def decode(words: tuple[int, ...] | list[int], product: int = 0) -> list[Command]:
    """The commands of a U55 (product 0) or U65 (product 1) stream, in order."""
    if product not in (0, 1):
        raise NotInterpreted(f"the {PRODUCTS.get(product, f'product {product}')} command stream "
                          "(only Ethos-U55 and U65 are interpreted)")
    other = U65_ONLY if product == 0 else U55_ONLY
    return decode_words(words, CMD0, CMD1, PRODUCTS[product], excluded=other)


def decode_words(words: tuple[int, ...] | list[int], cmd0: Mapping[int, str], cmd1: Mapping[int, str], accelerator: str,
                 excluded: Collection[str] = ()) -> list[Command]:
    """The commands of a stream of ``accelerator`` (named in errors) whose opcodes are ``cmd0`` and ``cmd1``
    (less the names in ``excluded``): opcode in bits 0-9, bit 14 for a payload word, the parameter in
    bits 16-31, the layout every Ethos-U keeps (``benchmarks/u85_streams.py`` reads the U85's with it)."""
    out = []
    i = 0
    while i < len(words):
        word = words[i]
        opcode, control, param = word & 0x3FF, (word >> 14) & 3, word >> 16
        if (word >> 10) & 0xF or control > 1:
            raise StreamError(f"word {i} ({word:#010x}) of the {accelerator} command stream is not a command: "
                              "reserved bits are set")
        name = (cmd1 if control else cmd0).get(opcode)
        if name is None or name in excluded:
            raise StreamError(f"unknown cmd{control} opcode {opcode} at word {i} (byte {4 * i}) of the "
                              f"{accelerator} command stream")
        if control:
            if i + 1 >= len(words):
                raise StreamError(f"{name} at word {i} is cut off before its payload word")
            out.append(Command(4 * i, opcode, name, param, words[i + 1]))
            i += 2
        else:
            out.append(Command(4 * i, opcode, name, param))
            i += 1
    return out


def disassemble(program: Program) -> str:
    """One line per command, after a line naming the accelerator."""
    lines = [f"; {program.config.describe()} (config {program.config.raw:#010x}), {len(program.commands)} commands"]
    lines += [c.text() for c in program.commands]
    return "\n".join(lines) + "\n"
