"""U85 NPU_OP_ELEMENTWISE ADD, SUB, MUL, MIN, MAX and ABS of 8- or 32-bit operands into 8- or 32-bit maps, and
ADD, SUB and MUL of 16-bit operands (a16w8), each operand a tensor, a chained OFM, a broadcast or a scalar.

Each operand less its zero point is rescaled by its own register first, ``IFM_SCALE`` and ``IFM2_SCALE``
(the shift in parameter bits 0-5, ``dbl_rnd`` in 6-10, the rounding in bit 13: DOUBLE_SYMMETRIC 0,
NATURAL 1; the 31-bit scale in the payload): ``a' = round(a * scale >> shift)``. Regor writes them for
every elementwise operation (``GenerateScalingForElementwise``), for TOSA's int8 ADD the rescales
ExecuTorch's lowering puts before it: the larger-scale operand times ``2**19``, shift 0, and the other
rounded NATURAL (mv2 on u85-256); for MAX and MIN the rescale of one operand to the other's scale, and
for ABS (unary: no IFM2) the IFM's. The operation then adds, subtracts, multiplies, takes the smaller or
larger value or the magnitude, and the output stage applies ``OFM_SCALE`` (``stage.py``). A MUL, or any
operation on 32-bit operands, with an operand scale other than 1 (shift 0) is not modelled (Regor
writes MUL with unit scales, and its softmax 32-bit SUBs with scale 1).

``IFM_BROADCAST``/``IFM2_BROADCAST`` (bits 0-3): H 1, W 2, C 4 read the operand at y, x or c = 0;
SCALAR 8 gives it as ``OP_SCALAR`` (its storage NONE). ``ACC_FORMAT``'s micro-block does not change the
result. ADD, SUB and MUL may use the 48-bit accumulator (I48: Regor's choice for a scaled 16-bit operation,
``FindBlockConfig``; a16w8's 32-bit MULs and residual ADDs): the sum or product is the same, the output stage
takes it whole, settled with ``OFM_SCALE`` 1 (ops-mul16 at a16w8); with a scale of more than 15 bits (the 48-bit
accumulator's scale records hold 15; hand-landmark-full's residual ADDs at a16w8 have 31) it stops the run. At a16w8 Regor writes
``nn.PReLU`` as a 16-bit MUL by the slopes (operand scales 1, ``OFM_SCALE`` shift 12) and a 16-bit ADD (operand
scales ``2**11``, shift 11): settled on tests/ops_plugin.py's ops-prelu and ops-a16-forms at a16w8, bit-exact on
the five U85 targets. A kept or IFM2 accumulator is not modelled, nor are the other modes' 16-bit operands, nor
the modes LRELU, CLZ, SHR, SHL, LSR, DIV, the comparisons and the bitwise ones.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from zoo.registry.command_stream.errors import NotInterpreted, StreamError
from zoo.registry.command_stream.memory import Memory
from zoo.registry.command_stream.output import NATURAL, scaled
from zoo.registry.command_stream.u85.maps import (
    NONE,
    Chains,
    Map,
    ifm_map,
    ofm_map,
    reader,
    write_ofm,
)
from zoo.registry.command_stream.u85.regfile import U85Registers
from zoo.registry.command_stream.u85.regs import bits
from zoo.registry.command_stream.u85.stage import activation, ofm_scale, stage

__all__ = ["MODES", "elementwise"]

MODES = {0: "MUL", 1: "ADD", 2: "SUB", 3: "MIN", 4: "MAX", 5: "LRELU", 6: "ABS", 7: "CLZ", 8: "SHR", 9: "SHL",
         10: "LSR", 11: "DIV", 16: "CMP_EQ", 17: "CMP_NE", 18: "CMP_GE", 19: "CMP_GT", 33: "AND", 34: "OR",
         35: "XOR", 36: "NOT", 42: "AND_NOT"}
MUL, ADD, SUB, MIN, MAX, ABS = 0, 1, 2, 3, 4, 6
H, W, C, SCALAR = 1, 2, 4, 8
IFM_NATURAL = 1


def _operand(regs: U85Registers, memory: Memory, chains: Chains, m: Map, shape: tuple[int, int, int]) -> np.ndarray[Any, Any]:
    """The operand as the OFM's shape, less its zero point."""
    broadcast = bits("broadcast.mode", regs[f"{m.name}_BROADCAST"])
    if regs[f"{m.name}_BROADCAST"] & ~0xF:
        raise StreamError(f"{regs.op}: NPU_SET_{m.name}_BROADCAST has reserved bits set")
    if (broadcast == SCALAR) != (m.storage == NONE):
        raise StreamError(f"{regs.op}: {m.name} broadcast mode {broadcast} with storage {m.storage}")
    if broadcast > SCALAR:
        raise StreamError(f"{regs.op}: {m.name} broadcast mode {broadcast} is reserved")
    h, w, c = (1 if broadcast & bit else n for bit, n in zip((H, W, C), shape, strict=True))
    values = reader(regs, memory, chains, m)(h, w, c) - regs[f"{m.name}_ZERO_POINT"]
    return np.broadcast_to(values, shape)


def _rescaled(regs: U85Registers, values: np.ndarray[Any, Any], name: str, mode: str) -> np.ndarray[Any, Any]:
    scale, shift, _ = ofm_scale(regs, name)
    round_mode = bits("ifm_scale.round", regs.param(name))
    if regs.param(name) & 0x1800 or regs.param(name) >> 14:  # bits 11-12 and 14-15
        raise StreamError(f"{regs.op}: NPU_SET_{name} has reserved parameter bits set")
    if (scale, shift) == (1, 0):
        return values
    if mode not in ("ADD", "SUB", "MIN", "MAX", "ABS"):
        raise NotInterpreted(f"ELEMENTWISE {mode} with {name} {scale:#x} shift {shift}")
    if round_mode != IFM_NATURAL and shift:
        raise NotInterpreted(f"{regs.op}: {name} rounding DOUBLE_SYMMETRIC with shift {shift}")
    return scaled(values, np.asarray(scale), np.asarray(shift), NATURAL)


def elementwise(regs: U85Registers, memory: Memory, chains: Chains, mode: int) -> None:
    name = MODES.get(mode, str(mode))
    if mode not in (MUL, ADD, SUB, MIN, MAX, ABS):
        raise NotInterpreted(f"ELEMENTWISE {name} on the U85 (ADD, SUB, MUL, MIN, MAX and ABS are modelled)")
    acc = regs["ACC_FORMAT"]
    acc48 = bits("acc.format", acc) == 1
    if bits("acc.format", acc) > (1 if mode in (MUL, ADD, SUB) else 0) or bits("acc.input", acc) or bits("acc.output", acc):
        raise NotInterpreted(f"ELEMENTWISE {name} with ACC_FORMAT {acc:#x}")
    ofm, global_scale = ofm_map(regs)
    if not global_scale:
        raise StreamError(f"{regs.op}: an elementwise operation with per-channel scales (it has no scale stream)")
    shape = (regs["OFM_HEIGHT_M1"] + 1, regs["OFM_WIDTH_M1"] + 1, regs["OFM_DEPTH_M1"] + 1)
    ifm = ifm_map(regs)
    ifm2 = ifm if mode == ABS else ifm_map(regs, "IFM2")
    wide = ifm.precision.bits == 32
    if ifm.precision.bits != ifm2.precision.bits or \
            (mode not in (MUL, ADD, SUB) and (ifm.precision.bits == 16 or ofm.precision.bits == 16)):
        raise NotInterpreted(f"ELEMENTWISE {name} of a {ifm.precision.bits}-bit IFM and a {ifm2.precision.bits}-bit "
                             f"IFM2 into a {ofm.precision.bits}-bit OFM")
    a = _rescaled(regs, _operand(regs, memory, chains, ifm, shape), "IFM_SCALE", "32-bit " * wide + name)
    if mode == ABS:
        total = np.abs(a)
    else:
        b = _rescaled(regs, _operand(regs, memory, chains, ifm2, shape), "IFM2_SCALE", "32-bit " * wide + name)
        if mode == ADD:
            total = a + b
        elif mode == SUB:
            total = a - b
        elif mode == MUL:
            total = a * b
        else:
            total = np.minimum(a, b) if mode == MIN else np.maximum(a, b)
    scale, shift, round_mode = ofm_scale(regs)
    if acc48 and scale >> 15:
        raise NotInterpreted(f"{regs.op}: {name} with the 48-bit accumulator and OFM_SCALE {scale:#x} (a scale of more "
                             "than 15 bits on it is not settled)")
    out = stage(np.asarray(total, dtype=np.int64), np.asarray(scale), np.asarray(shift), round_mode,
                regs["OFM_ZERO_POINT"], activation(regs, memory, ofm.dtype), ofm.dtype, regs.op,
                acc_bits=48 if acc48 else 32)
    write_ofm(memory, chains, ofm, out, regs.op)
