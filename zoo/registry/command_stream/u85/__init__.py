"""An interpreter of the Ethos-U85 command streams Vela 5.1.0 (Regor) writes: what the NPU would compute.

The same rules as the U55/U65 interpreter beside it (``command_stream``): it reads only what the
NPU reads (the payload's command stream, weight data and scratch size, and the input bytes placed
as the runtime places them), imports no compiler, torch or TOSA tool, and stops with
``not implemented: ...`` on a command or mode it does not model. It shares the U55's memory,
feature-map addressing, rounding and mlw decoder, and reads the U85's own opcodes (``regs``),
fields, weight formats (``weights``), chaining and transposes (``maps``).
"""

from __future__ import annotations

from zoo.registry.command_stream.errors import NotInterpreted, StreamError
from zoo.registry.command_stream.memory import SHRAM, Memory, Writers
from zoo.registry.command_stream.ops_conv import OpConstants
from zoo.registry.command_stream.stream import Command, Config, decode_words, split
from zoo.registry.command_stream.u85.machine import execute
from zoo.registry.command_stream.u85.ops_block import Accelerator
from zoo.registry.command_stream.u85.regs import CMD0, CMD1, bits
from zoo.registry.command_stream.u85.stage import LUT_RAM
from zoo.registry.pte.vela_payload import VelaPayload

__all__ = ["U85", "accelerator", "commands", "constants", "is_u85", "run"]

U85 = 2
SCRATCH, FAST_SCRATCH = 1, 2


def is_u85(payload: VelaPayload) -> bool:
    """Whether the payload's command stream was written for an Ethos-U85 (``config_r``'s product)."""
    cmd_data = payload.data.get("cmd_data")
    return cmd_data is not None and split(cmd_data)[0].product == U85


def accelerator(config: Config) -> Accelerator:
    """The MACs (bits 0-3, log2) and weight decoders (bits 12-13, log2) of a U85 ``config_r``."""
    return Accelerator(1 << bits("config.macs", config.raw), 1 << bits("config.num_wd", config.raw))


def commands(cmd_data: bytes) -> tuple[Config, list[Command]]:
    config, words = split(cmd_data)
    if config.product != U85:
        raise StreamError(f"not an Ethos-U85 command stream (product {config.product})")
    return config, decode_words(words, CMD0, CMD1, "Ethos-U85")


def _program(payload: VelaPayload) -> tuple[Config, list[Command]]:
    if "cmd_data" not in payload.data:
        raise StreamError("the Vela payload has no cmd_data block")
    if "cmd_data" in payload.external or "weight_data" in payload.external:
        raise NotInterpreted("a command stream or weights stored as named data")
    return commands(payload.data["cmd_data"])


def _memory(payload: VelaPayload, fast_scratch: int, writers: Writers | None = None) -> Memory:
    return Memory({0: payload.data.get("weight_data", b""), SCRATCH: bytes(payload.scratch_size),
                   FAST_SCRATCH: bytes(fast_scratch), SHRAM: bytes(LUT_RAM)}, writers=writers)


def constants(payload: VelaPayload, *, fast_scratch: int = 0) -> list[OpConstants]:
    """Every CONV's and DEPTHWISE's weights (SWD, 2:4 sparse or FWD, every core's streams) and scale records,
    in stream order, decoded as the program's DMAs leave them (the U55/U65 interpreter's ``constants``)."""
    config, program = _program(payload)
    found: list[OpConstants] = []
    execute(program, _memory(payload, fast_scratch), accelerator(config), found)
    return found


def run(payload: VelaPayload, inputs: list[bytes], *, fast_scratch: int = 0,
        writers: Writers | None = None) -> list[bytes]:
    """Each output's bytes after running the payload's U85 command stream on ``inputs``
    (the U55/U65 interpreter's ``run``, for the U85)."""
    config, program = _program(payload)
    if len(inputs) != len(payload.inputs):
        raise StreamError(f"the program takes {len(payload.inputs)} input(s), {len(inputs)} given")
    memory = _memory(payload, fast_scratch, writers)
    for i, (given, info) in enumerate(zip(inputs, payload.inputs, strict=True)):
        size = info.elements * info.element_size
        if len(given) != size:
            raise StreamError(f"input {i} is {len(given)} bytes; the program takes {size} ({info.shape}, "
                              f"{info.element_size}-byte elements)")
        if info.region != SCRATCH:
            raise StreamError(f"input {i} sits in region {info.region}; the runtime places inputs in the scratch (region 1)")
        memory.write(SCRATCH, info.offset, given, f"input {i}")
    execute(program, memory, accelerator(config))
    outputs = []
    for i, info in enumerate(payload.outputs):
        if info.region != SCRATCH:
            raise StreamError(f"output {i} sits in region {info.region}; the runtime reads outputs from the scratch (region 1)")
        outputs.append(memory.read(SCRATCH, info.offset, info.elements * info.element_size, f"output {i}"))
    return outputs
