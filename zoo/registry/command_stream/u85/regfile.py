"""The U85's register file: the U55's, with the U85's signed registers and 40-bit addresses."""

from __future__ import annotations

from zoo.registry.command_stream.errors import StreamError
from zoo.registry.command_stream.regfile import Registers
from zoo.registry.command_stream.stream import Command
from zoo.registry.command_stream.u85.regs import SIGNED

__all__ = ["U85Registers"]


class U85Registers(Registers):
    def set(self, cmd: Command) -> None:
        name = cmd.name.removeprefix("NPU_SET_")
        if cmd.payload is None:
            self.values[name] = cmd.param - 0x10000 if cmd.name in SIGNED and cmd.param & 0x8000 else cmd.param
        else:
            self.values[name] = cmd.payload
            self.params[name] = cmd.param

    def address(self, name: str) -> int:
        """A 40-bit address or length register: its payload and, in the parameter's low 8 bits, bits 32-39."""
        value = self[name]
        high = self.params[name]
        if high & ~0xFF:
            raise StreamError(f"{self.op}: NPU_SET_{name} has reserved parameter bits set ({high:#x})")
        return value | (high << 32)
