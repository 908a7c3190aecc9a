"""An interpreter of the Ethos-U55/U65 command streams Vela writes: what the NPU would compute.

It reads only what the NPU reads: a .pte's Vela payload (its command stream, weight data and
scratch size) and the input bytes, placed in the scratch as the runtime places them. It
never imports a compiler, torch or the TOSA tools (an import-linter contract keeps it so).
A command or mode it does not model stops the run with ``not implemented: ...``.
"""

from __future__ import annotations

from zoo.registry.command_stream import limits
from zoo.registry.command_stream.errors import NotInterpreted, StreamError
from zoo.registry.command_stream.machine import execute
from zoo.registry.command_stream.memory import SHRAM, Memory, Writers
from zoo.registry.command_stream.ops_conv import OpConstants
from zoo.registry.command_stream.stream import Program, disassemble, parse
from zoo.registry.pte.vela_payload import VelaPayload

__all__ = ["NotInterpreted", "OpConstants", "StreamError", "Writers", "constants", "disassemble", "parse", "program_of",
           "run"]

SCRATCH, FAST_SCRATCH = 1, 2


def program_of(payload: VelaPayload) -> Program:
    """The payload's decoded command stream."""
    if "cmd_data" not in payload.data:
        raise StreamError("the Vela payload has no cmd_data block")
    if "cmd_data" in payload.external:
        raise NotInterpreted("a command stream stored as named data")
    return parse(payload.data["cmd_data"])


def _memory(payload: VelaPayload, program: Program, fast_scratch: int, writers: Writers | None = None) -> Memory:
    if "weight_data" in payload.external:
        raise NotInterpreted("weight data stored as named data")
    scratch = limits.region_size(payload.scratch_size, "the payload's scratch_size")
    fast = limits.region_size(fast_scratch, "the fast scratch")
    return Memory({0: payload.data.get("weight_data", b""), SCRATCH: bytes(scratch), FAST_SCRATCH: bytes(fast),
                   SHRAM: bytes(program.config.shram_kib * 1024 // program.config.cores)}, writers=writers)


def constants(payload: VelaPayload, *, fast_scratch: int = 0) -> list[OpConstants]:
    """Every CONV's and DEPTHWISE's weights and scale records, in stream order, decoded as the program's DMAs
    leave them: what the NPU reads besides the feature maps, for a comparison with the graph's constants."""
    program = program_of(payload)
    found: list[OpConstants] = []
    execute(program, _memory(payload, program, fast_scratch), found)
    return found


def run(payload: VelaPayload, inputs: list[bytes], *, fast_scratch: int = 0,
        writers: Writers | None = None) -> list[bytes]:
    """Each output's bytes after running the payload's command stream on ``inputs`` (one bytes per input, in order).

    ``fast_scratch`` is the size of region 2, which the platform provides, not the payload
    (``ethosu_fast_scratch``): 0 by default, Vela's arena cache for a Dedicated_Sram target.
    ``writers``, if given, learns which command last wrote each byte.
    """
    program = program_of(payload)
    if len(inputs) != len(payload.inputs):
        raise StreamError(f"the program takes {len(payload.inputs)} input(s), {len(inputs)} given")
    memory = _memory(payload, program, fast_scratch, writers)
    for i, (given, info) in enumerate(zip(inputs, payload.inputs, strict=True)):
        size = info.elements * info.element_size
        if len(given) != size:
            raise StreamError(f"input {i} is {len(given)} bytes; the program takes {size} ({info.shape}, "
                              f"{info.element_size}-byte elements)")
        if info.region != SCRATCH:
            raise StreamError(f"input {i} sits in region {info.region}; the runtime places inputs in the scratch (region 1)")
        memory.write(SCRATCH, info.offset, given, f"input {i}")
    execute(program, memory)
    outputs = []
    for i, info in enumerate(payload.outputs):
        if info.region != SCRATCH:
            raise StreamError(f"output {i} sits in region {info.region}; the runtime reads outputs from the scratch (region 1)")
        outputs.append(memory.read(SCRATCH, info.offset, info.elements * info.element_size, f"output {i}"))
    return outputs
