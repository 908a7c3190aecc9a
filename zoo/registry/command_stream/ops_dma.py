"""NPU_OP_DMA_START: a 1-D copy between external regions, done at once (the interpreter is sequential)."""

from __future__ import annotations

from zoo.registry.command_stream.errors import NotInterpreted
from zoo.registry.command_stream.memory import Memory
from zoo.registry.command_stream.regfile import Registers

__all__ = ["dma"]


def dma(regs: Registers, memory: Memory) -> None:
    ends = []
    for end in ("SRC", "DST"):
        value = regs[f"DMA0_{end}_REGION"]
        if value & (1 << 8):
            raise NotInterpreted(f"DMA {end} in SHRAM (region mode INTERNAL, a LUT)")
        if (value >> 9) & 3:
            raise NotInterpreted(f"DMA {end} stride mode {(value >> 9) & 3} (2-D/3-D)")
        if value & ~0x7:
            raise NotInterpreted(f"DMA {end} region register {value:#x}")
        ends.append(value & 7)
    length = regs.address("DMA0_LEN")
    data = memory.read(ends[0], regs.address("DMA0_SRC"), length, f"{regs.op} reading its source")
    memory.write(ends[1], regs.address("DMA0_DST"), data, f"{regs.op} writing its destination")
