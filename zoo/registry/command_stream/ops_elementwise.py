"""NPU_OP_ELEMENTWISE ADD, SUB, MUL, MIN, MAX and ABS: IFM and IFM2 (a tensor, broadcast, or a scalar) to the OFM.

The operands are ``a = ifm - ifm_zp`` and ``b = ifm2 - ifm2_zp``. ``IFM2_BROADCAST`` bits 0-2
read IFM2 at y, x or c = 0 (its height, width or depth 1); bit 7 replaces IFM2 by
``IFM2_SCALAR`` (16 bits, signed as IFM2 is); bit 6 swaps the operands, so that operand A is
IFM2 (the ``ifm2_operand_order`` of the register map; legacy Vela swaps the scaled operand
with it too).

ADD and SUB rescale the operands by the IFM scale mode. OPA_32/OPB_32 name the operand to
rescale by ``OPA_SCALE`` (32-bit scale, 6-bit shift) rounded by the IFM round mode; the
other is shifted left by 19 bits. The 19 is not in any document available offline; it was
settled against the TOSA reference model on Regor's resnet8-cifar and mv2 programs (u55-128:
18, 20 and 16 all fail). It is what ExecuTorch's lowering does: both int8 operands go to
int32 at ``2*max(scale)/2**20``, so the larger-scale operand is multiplied by exactly
``2**19`` and only the other is rounded (legacy Vela's ``advanced_elementwise_add_sub_scale``
likewise, with ``input_shift`` 20). OPA_OPB_16 multiplies by 16-bit scales; Regor writes it
with both scales 1 (its int8-to-int32 casts and int32 subtractions in softmax), the only
case modelled. MUL multiplies the operands; OPA/OPB_SCALE are not read (legacy Vela writes
them for ADD and SUB alone).

The result goes through the output stage with ``OFM_SCALE``. For a 32-bit IFM the scale is
not applied, only the shift (the register map: "Scale. Not applied for 32-bit operations"),
and a MUL keeps the whole 64-bit product: Regor's softmax writes its int32-to-int8 rescale as
a 32-bit MUL by the TOSA multiplier with shift 49, which is bit-exact with the TOSA reference
model only so.

MIN and MAX take the smaller or larger operand, ABS (unary: no IFM2) ``|a|``; all three then go
through the output stage. Regor writes MIN and MAX (TOSA's MINIMUM and MAXIMUM) between its
int8-to-int32 casts, on 32-bit operands with both zero points 0, OFM_SCALE 1 shift 0 and the
per-channel scale mode (legacy Vela's too: it sets the global-scale bit only for ADD, SUB, MUL,
LRELU and ABS); an elementwise operation has no scale stream, so only that identity scale is
modelled, in either mode. ABS (TOSA's ABS of an int8 tensor) has the global mode and the
rescale ``ifm_scale / ofm_scale`` in OFM_SCALE, rounded NATURAL (``|a|`` is never negative, so
no tie's direction is in question). Settled on the u55-128 programs of tests/ops_plugin.py's
ops-max, ops-min and ops-abs: bit-exact with the TOSA reference model on 8 samples. LRELU is
not emitted for int8 (Regor writes LeakyReLU as a LUT, which is modelled), nor are CLZ, SHL and
SHR for any operation torch reaches in zoo's catalogue; they stop the run.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from zoo.registry.command_stream.activation import activation
from zoo.registry.command_stream.errors import NotInterpreted
from zoo.registry.command_stream.fmap import Precision, feature_map, ifm_precision, ofm_precision
from zoo.registry.command_stream.memory import Memory
from zoo.registry.command_stream.output import output_stage, scaled
from zoo.registry.command_stream.regfile import Registers

__all__ = ["elementwise"]

MODES = ("MUL", "ADD", "SUB", "MIN", "MAX", "LRELU", "ABS", "CLZ", "SHR", "SHL")
MUL, ADD, SUB, MIN, MAX, ABS = 0, 1, 2, 3, 4, 6
MODELLED = (MUL, ADD, SUB, MIN, MAX, ABS)
OPA_OPB_16, OPA_32, OPB_32 = 0, 1, 2
GLOBAL = 1
UNSCALED_SHIFT = 19
BROADCAST_H, BROADCAST_W, BROADCAST_C, REVERSED, SCALAR = 1, 2, 4, 1 << 6, 1 << 7


def _ifm2(regs: Registers, memory: Memory, precision: Precision, shape: tuple[int, int, int], name: str) -> np.ndarray[Any, Any]:
    """IFM2 as the OFM's shape, less its zero point."""
    broadcast = regs["IFM2_BROADCAST"]
    if broadcast & ~(BROADCAST_H | BROADCAST_W | BROADCAST_C | REVERSED | SCALAR):
        raise NotInterpreted(f"ELEMENTWISE {name} with IFM2_BROADCAST {broadcast:#x}")
    if broadcast & SCALAR:
        scalar = regs["IFM2_SCALAR"] & 0xFFFF
        if precision.signed and scalar & 0x8000:
            scalar -= 1 << 16
        return np.full(shape, scalar - regs["IFM2_ZERO_POINT"], dtype=np.int64)
    h, w, c = (1 if broadcast & bit else n for bit, n in zip((BROADCAST_H, BROADCAST_W, BROADCAST_C), shape, strict=True))
    b = feature_map(regs, "IFM2", precision).read(memory, h, w, c, regs.op) - regs["IFM2_ZERO_POINT"]
    return np.broadcast_to(b, shape)


def _add_sub_operands(regs: Registers, a: np.ndarray[Any, Any], b: np.ndarray[Any, Any], ifm_p: Precision,
                      name: str) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    if ifm_p.scale_mode == OPA_OPB_16:
        scales = (regs["OPA_SCALE"], regs["OPB_SCALE"])
        if scales != (1, 1):
            raise NotInterpreted(f"ELEMENTWISE {name} with 16-bit operand scales {scales[0]} and {scales[1]}")
        return a, b
    if ifm_p.scale_mode not in (OPA_32, OPB_32):
        raise NotInterpreted(f"ELEMENTWISE {name} with IFM scale mode {ifm_p.scale_mode}")
    if ifm_p.bits != 8:
        raise NotInterpreted(f"ELEMENTWISE {name} of {ifm_p.bits}-bit operands with a 32-bit operand scale")
    opa = (np.asarray(regs["OPA_SCALE"]), np.asarray(regs.param("OPA_SCALE") & 0x3F))
    if ifm_p.scale_mode == OPA_32:
        return scaled(a, *opa, ifm_p.round_mode), b << UNSCALED_SHIFT
    return a << UNSCALED_SHIFT, scaled(b, *opa, ifm_p.round_mode)


def elementwise(regs: Registers, memory: Memory, mode: int) -> None:
    if mode >= len(MODES):
        raise NotInterpreted(f"ELEMENTWISE mode {mode}")
    name = MODES[mode]
    if mode not in MODELLED:
        raise NotInterpreted(f"ELEMENTWISE {name} (ADD, SUB, MUL, MIN, MAX and ABS are modelled)")
    if regs["ACC_FORMAT"]:
        raise NotInterpreted(f"ELEMENTWISE {name} with ACC_FORMAT {regs['ACC_FORMAT']}")
    ifm_p, ofm_p = ifm_precision(regs["IFM_PRECISION"]), ofm_precision(regs["OFM_PRECISION"])
    if ifm_p.bits == 16:
        raise NotInterpreted(f"ELEMENTWISE {name} of 16-bit operands")
    scale, shift = regs["OFM_SCALE"], regs.param("OFM_SCALE") & 0x3F
    if mode in (MIN, MAX):
        if (scale, shift) != (1, 0):
            raise NotInterpreted(f"ELEMENTWISE {name} with OFM_SCALE {scale:#x} shift {shift} (only 1, shift 0 is modelled)")
    elif ofm_p.scale_mode != GLOBAL:
        raise NotInterpreted(f"ELEMENTWISE {name} with per-channel OFM scales")
    act = activation(regs, memory, ofm_p)
    shape = (regs["OFM_HEIGHT_M1"] + 1, regs["OFM_WIDTH_M1"] + 1, regs["OFM_DEPTH_M1"] + 1)
    a = feature_map(regs, "IFM", ifm_p).read(memory, *shape, regs.op) - regs["IFM_ZERO_POINT"]
    wide = ifm_p.bits == 32
    acc = np.abs(a) if mode == ABS else _binary(regs, memory, mode, name, ifm_p, a, shape)
    out = output_stage(acc, np.asarray(1 if wide else scale), np.asarray(shift), round_mode=ofm_p.round_mode,
                       zero_point=regs["OFM_ZERO_POINT"], activation=act, dtype=ofm_p.dtype, what=regs.op,
                       wide=wide and mode == MUL)
    feature_map(regs, "OFM", ofm_p).write(memory, out, regs.op)


def _binary(regs: Registers, memory: Memory, mode: int, name: str, ifm_p: Precision, a: np.ndarray[Any, Any],
            shape: tuple[int, int, int]) -> np.ndarray[Any, Any]:
    ifm2_p = ifm_precision(regs["IFM2_PRECISION"], "IFM2")
    if ifm2_p.bits != ifm_p.bits:
        raise NotInterpreted(f"ELEMENTWISE {name} of a {ifm_p.bits}-bit IFM and a {ifm2_p.bits}-bit IFM2")
    b = _ifm2(regs, memory, ifm2_p, shape, name)
    if regs["IFM2_BROADCAST"] & REVERSED:
        a, b = b, a
    if mode == MUL:
        return np.multiply(a, b)
    if mode in (MIN, MAX):
        return np.minimum(a, b) if mode == MIN else np.maximum(a, b)
    a, b = _add_sub_operands(regs, a, b, ifm_p, name)
    return np.add(a, b) if mode == ADD else np.subtract(a, b)
