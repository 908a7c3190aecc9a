"""Run a decoded command stream over a memory: register writes, then each operation in order."""

from __future__ import annotations

from zoo.registry.command_stream.decoder import Decoder
from zoo.registry.command_stream.errors import NotInterpreted, StreamError
from zoo.registry.command_stream.memory import Memory
from zoo.registry.command_stream.ops_conv import OpConstants, conv, conv_constants
from zoo.registry.command_stream.ops_dma import dma
from zoo.registry.command_stream.ops_elementwise import elementwise
from zoo.registry.command_stream.ops_pool import pool
from zoo.registry.command_stream.regfile import Registers
from zoo.registry.command_stream.stream import Program

__all__ = ["execute"]

# DMA_WAIT and KERNEL_WAIT order a pipelined NPU; a sequential model has finished everything already.
_NO_EFFECT = {"NPU_OP_DMA_WAIT", "NPU_OP_KERNEL_WAIT"}


def _ofm_ublock(program: Program) -> int:
    """The OFM micro-block depth, which fixes the weights' brick order: 4 on the 32-MAC U55, else 8."""
    return 4 if program.config.product == 0 and program.config.macs_per_cycle == 32 else 8


def execute(program: Program, memory: Memory, constants: list[OpConstants] | None = None) -> int:
    """Run ``program`` to its NPU_OP_STOP; returns the number of operations run. With ``constants``, only the
    DMAs run, and each CONV and DEPTHWISE appends its decoded weights and scale records instead of computing."""
    with Decoder() as decoder:
        return _execute(program, memory, decoder, constants)


def _execute(program: Program, memory: Memory, decoder: Decoder, constants: list[OpConstants] | None) -> int:
    regs = Registers()
    ublock = _ofm_ublock(program)
    ran = 0
    for cmd in program.commands:
        if cmd.name.startswith("NPU_SET_"):
            regs.set(cmd)
            continue
        regs.op = f"{cmd.name.removeprefix('NPU_OP_')} at byte {cmd.offset:#x}"
        if cmd.name == "NPU_OP_STOP":
            return ran
        if cmd.name in _NO_EFFECT:
            continue
        if cmd.name == "NPU_OP_DMA_START":
            dma(regs, memory)
        elif constants is not None:
            if cmd.name in ("NPU_OP_CONV", "NPU_OP_DEPTHWISE"):
                constants.append(conv_constants(regs, memory, ublock, decoder, depthwise=cmd.name == "NPU_OP_DEPTHWISE"))
        elif cmd.name == "NPU_OP_CONV":
            if cmd.param:
                raise NotInterpreted(f"{regs.op} with parameter {cmd.param:#x}")
            conv(regs, memory, ublock, decoder)
        elif cmd.name == "NPU_OP_DEPTHWISE":
            conv(regs, memory, ublock, decoder, depthwise=True)
        elif cmd.name == "NPU_OP_POOL":
            pool(regs, memory, cmd.param)
        elif cmd.name == "NPU_OP_ELEMENTWISE":
            elementwise(regs, memory, cmd.param)
        else:
            raise NotInterpreted(f"{cmd.name} ({regs.op})")
        ran += 1
    raise StreamError("the command stream ends without NPU_OP_STOP")
