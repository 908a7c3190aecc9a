"""The register file: one for the whole run, since Vela writes a register only when its value changes."""

from __future__ import annotations

from zoo.registry.command_stream.errors import StreamError
from zoo.registry.command_stream.stream import Command

__all__ = ["Registers"]


class Registers:
    def __init__(self) -> None:
        self.values: dict[str, int] = {}
        self.params: dict[str, int] = {}
        """The 16-bit parameter of each cmd1 (a shift, or the upper address bits)."""
        self.op = ""
        """The operation now reading the registers, for messages."""

    def set(self, cmd: Command) -> None:
        name = cmd.name.removeprefix("NPU_SET_")
        if cmd.payload is None:
            self.values[name] = cmd.value
        else:
            self.values[name] = cmd.payload
            self.params[name] = cmd.param

    def __getitem__(self, name: str) -> int:
        try:
            return self.values[name]
        except KeyError:
            raise StreamError(f"{self.op} reads NPU_SET_{name}, which the command stream never set") from None

    def param(self, name: str) -> int:
        self[name]
        return self.params[name]

    def address(self, name: str) -> int:
        """A 32-bit address register; U55/U65 programs address less than 4 GiB, so the upper bits must be 0."""
        value = self[name]
        if self.params[name]:
            raise StreamError(f"{self.op}: NPU_SET_{name} carries upper address bits {self.params[name]:#x}; "
                              "an Ethos-U55/U65 region offset fits in 32 bits")
        return value
