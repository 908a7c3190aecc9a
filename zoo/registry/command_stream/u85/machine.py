"""Run a decoded Ethos-U85 command stream: register writes, then each operation in order, with the
chaining buffers between operations, the accumulator a convolution keeps for the next, and the LUT memory
the DMAs fill.

``NPU_OP_DMA_START`` copies ``DMA0_LEN`` bytes; a destination in region mode INTERNAL (bit 8) is the
2 KiB LUT memory (Regor's ``lutram``), whatever its region bits say. 2-D and 3-D strides and indexed
(gather and scatter) DMAs are not modelled.
"""

from __future__ import annotations

from zoo.registry.command_stream.decoder import Decoder
from zoo.registry.command_stream.errors import NotInterpreted, StreamError
from zoo.registry.command_stream.memory import SHRAM, Memory
from zoo.registry.command_stream.ops_conv import OpConstants
from zoo.registry.command_stream.stream import Command
from zoo.registry.command_stream.u85.maps import Chains
from zoo.registry.command_stream.u85.ops_block import Accelerator, Kept, conv, conv_constants, pool
from zoo.registry.command_stream.u85.ops_elementwise import elementwise
from zoo.registry.command_stream.u85.ops_matmul import matmul
from zoo.registry.command_stream.u85.ops_resize import resize
from zoo.registry.command_stream.u85.regfile import U85Registers
from zoo.registry.command_stream.u85.regs import bits

__all__ = ["execute"]

_NO_EFFECT = {"NPU_OP_DMA_WAIT", "NPU_OP_KERNEL_WAIT", "NPU_OP_PMU_MASK"}


def _dma(regs: U85Registers, memory: Memory) -> None:
    ends = []
    for end in ("SRC", "DST"):
        value = regs[f"DMA0_{end}_REGION"]
        if bits("dma.stride_mode", value) or bits("dma.idx_mode", value):
            raise NotInterpreted(f"{regs.op} with DMA0_{end}_REGION {value:#x} (2-D or 3-D strides, or an index)")
        if value & ~0xF07:
            raise StreamError(f"{regs.op}: NPU_SET_DMA0_{end}_REGION {value:#x} has reserved bits set")
        internal = bits("dma.region_mode", value)
        if internal and end == "SRC":
            raise NotInterpreted(f"{regs.op} from the LUT memory")
        ends.append(SHRAM if internal else bits("dma.region", value))
    length = regs.address("DMA0_LEN")
    data = memory.read(ends[0], regs.address("DMA0_SRC"), length, f"{regs.op} reading its source")
    memory.write(ends[1], regs.address("DMA0_DST"), data, f"{regs.op} writing its destination")


def execute(commands: list[Command], memory: Memory, accelerator: Accelerator,
            constants: list[OpConstants] | None = None) -> int:
    """Run ``commands`` to their NPU_OP_STOP; returns the number of operations run. With ``constants``, only the
    DMAs run, and each CONV and DEPTHWISE appends its decoded weights and scale records instead of computing
    (a MATMUL, whose weights are its IFM2, holds none)."""
    regs = U85Registers()
    chains: Chains = {}
    kept = Kept()
    ran = 0
    with Decoder() as decoder:
        for cmd in commands:
            if cmd.name.startswith("NPU_SET_"):
                regs.set(cmd)
                continue
            regs.op = f"{cmd.name.removeprefix('NPU_OP_')} at byte {cmd.offset:#x}"
            if cmd.name == "NPU_OP_STOP":
                if chains:
                    raise StreamError(f"the program stops with chaining buffer(s) {sorted(chains)} never read")
                if kept.total is not None:
                    raise StreamError(f"the program stops with the accumulator {kept.by} kept never output")
                return ran
            if cmd.name in _NO_EFFECT:
                continue
            if cmd.name == "NPU_OP_DMA_START":
                _dma(regs, memory)
            elif kept.total is not None and cmd.name not in ("NPU_OP_CONV", "NPU_OP_DEPTHWISE"):
                raise NotInterpreted(f"{regs.op} between {kept.by}, which kept its accumulator, and the operation "
                                     "that adds to it")
            elif constants is not None:
                if cmd.name in ("NPU_OP_CONV", "NPU_OP_DEPTHWISE") and not cmd.param:
                    constants.append(conv_constants(regs, memory, accelerator, decoder,
                                                    depthwise=cmd.name == "NPU_OP_DEPTHWISE"))
            elif cmd.name in ("NPU_OP_CONV", "NPU_OP_DEPTHWISE"):
                if cmd.param and cmd.name == "NPU_OP_CONV":
                    matmul(regs, memory, chains)
                elif cmd.param:
                    raise StreamError(f"{regs.op}: a DEPTHWISE with parameter {cmd.param:#x}")
                else:
                    conv(regs, memory, chains, accelerator, decoder, depthwise=cmd.name == "NPU_OP_DEPTHWISE", kept=kept)
            elif cmd.name == "NPU_OP_POOL":
                pool(regs, memory, chains, bits("pool.mode", cmd.param))
            elif cmd.name == "NPU_OP_ELEMENTWISE":
                elementwise(regs, memory, chains, bits("elementwise.mode", cmd.param))
            elif cmd.name == "NPU_OP_RESIZE":
                resize(regs, memory, chains, bits("resize_op.mode", cmd.param))
            else:
                raise NotInterpreted(regs.op)
            ran += 1
    raise StreamError("the command stream ends without NPU_OP_STOP")
