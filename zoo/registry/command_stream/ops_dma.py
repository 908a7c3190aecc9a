"""NPU_OP_DMA_START: a 1-D copy, done at once (the interpreter is sequential).

An end in region mode EXTERNAL (bit 8 clear) is an offset into the region its bits 0-2 name;
in mode INTERNAL it is an offset into the SHRAM, whatever the region bits say (Vela writes
``(1 << 8) | 3`` for a LUT's destination, ``BASE_PTR_INDEX_MEM2MEM``).
"""

from __future__ import annotations

from zoo.registry.command_stream.errors import NotInterpreted
from zoo.registry.command_stream.memory import SHRAM, Memory
from zoo.registry.command_stream.regfile import Registers

__all__ = ["dma"]

INTERNAL = 1 << 8


def dma(regs: Registers, memory: Memory) -> None:
    ends = []
    for end in ("SRC", "DST"):
        value = regs[f"DMA0_{end}_REGION"]
        if (value >> 9) & 3:
            raise NotInterpreted(f"DMA {end} stride mode {(value >> 9) & 3} (2-D/3-D)")
        if value & ~(0x7 | INTERNAL):
            raise NotInterpreted(f"DMA {end} region register {value:#x}")
        if value & INTERNAL and end == "SRC":
            raise NotInterpreted("DMA from the SHRAM (source region mode INTERNAL)")
        ends.append(SHRAM if value & INTERNAL else value & 7)
    length = regs.address("DMA0_LEN")
    data = memory.read(ends[0], regs.address("DMA0_SRC"), length, f"{regs.op} reading its source")
    memory.write(ends[1], regs.address("DMA0_DST"), data, f"{regs.op} writing its destination")
