"""The U85's output stage: scale, shift and rounding from ``OFM_SCALE`` or the scale records, the zero point,
then the activation (a clamp, or a table in the LUT memory).

``OFM_SCALE``: the shift in parameter bits 0-5, ``dbl_rnd`` in 6-10, the rounding mode in 13-15; the
scale is the payload's low 31 bits. Of the six rounding modes NATURAL (1: add half, shift
arithmetically, TOSA's ``apply_scale_32`` without double rounding) and TRUNCATE_TO_LOWER (5: shift
arithmetically) are modelled, and any mode where scale 1 and the shift drop no bit (exact: Regor's copies
and transposes, 1x1 pools with scale 1, nearest-neighbour resizes, write DOUBLE_SYMMETRIC); the others stop
the run, as does a nonzero ``dbl_rnd``.

``ACTIVATION``: the function in bits 0-4, the table in 5-7, the clip range in bit 12. B16 (0) clamps
to ``[ACTIVATION_MIN, ACTIVATION_MAX]`` as well as to the OFM type; both 16-bit values are read in the
OFM's signedness (Regor's ``GenerateActivation`` writes limits from int16 minimum to uint16 maximum: a
signed OFM's ReLU6 may end below zero, hand-landmark-lite's ``0xfffa`` for -6, and an unsigned
16-bit OFM's may reach 65535); NONE (1) to the OFM type alone. LUT_S8_S8 (4) and LUT_U8_U8 (1) look the
saturated value up in the 256-byte table ``table`` of the 2 KiB LUT memory (index ``v + 128`` for a
signed OFM); the wider tables and TANH and SIGMOID are not modelled.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from zoo.registry.command_stream.activation import Activation
from zoo.registry.command_stream.errors import NotInterpreted, StreamError
from zoo.registry.command_stream.memory import SHRAM, Memory
from zoo.registry.command_stream.output import NATURAL, scaled
from zoo.registry.command_stream.u85.regfile import U85Registers
from zoo.registry.command_stream.u85.regs import bits

__all__ = ["LUT_RAM", "activation", "ofm_scale", "stage"]

U85_NATURAL, TRUNCATE_TO_LOWER = 1, 5
ROUND_NAMES = ("DOUBLE_SYMMETRIC", "NATURAL", "DOUBLE_ASYMMETRIC", "SYMMETRIC", "TRUNCATE_TO_ZERO", "TRUNCATE_TO_LOWER")
LUT_NONE, LUT_U8_U8, LUT_S8_S8 = 0, 1, 4
LUT_RAM = 2048


def ofm_scale(regs: U85Registers, name: str = "OFM_SCALE") -> tuple[int, int, int]:
    """(scale, shift, rounding mode) of ``OFM_SCALE`` (or ``IFM_SCALE``/``IFM2_SCALE``)."""
    value, param = regs[name], regs.param(name)
    if value >> 31:
        raise StreamError(f"{regs.op}: NPU_SET_{name} has its reserved bit 31 set")
    if bits("scale.dbl_rnd", param):
        raise NotInterpreted(f"{regs.op} with {name} dbl_rnd {bits('scale.dbl_rnd', param)}")
    return value, bits("scale.shift", param), bits("ofm_scale.round", param)


def _exact(acc: np.ndarray[Any, Any], scale: np.ndarray[Any, Any], shift: np.ndarray[Any, Any]) -> bool:
    """Whether ``acc * scale >> shift`` drops no bit (a resize's nearest neighbour, times ``2**16``)."""
    return bool((scale == 1).all() and not (acc & ((np.int64(1) << shift) - 1)).any())


def stage(acc: np.ndarray[Any, Any], scale: np.ndarray[Any, Any], shift: np.ndarray[Any, Any], round_mode: int,
          zero_point: int, act: Activation, dtype: np.dtype[Any], what: str, acc_bits: int = 32) -> np.ndarray[Any, Any]:
    """``acc`` (..., C) int64 to OFM values; ``scale`` and ``shift`` per channel or scalars; ``acc_bits``
    the accumulator's width (32, or 48 with ``ACC_FORMAT`` I48), whose saturation is not modelled."""
    low, high = -(1 << (acc_bits - 1)), (1 << (acc_bits - 1)) - 1
    if acc.size and (acc.min() < low or acc.max() > high):
        raise NotInterpreted(f"{what}: a {acc_bits}-bit accumulator overflows ({int(acc.min())}..{int(acc.max())})")
    scale, shift = np.asarray(scale, dtype=np.int64), np.asarray(shift, dtype=np.int64)
    if round_mode == U85_NATURAL or not shift.any() or _exact(acc, scale, shift):  # every mode agrees where exact
        v = scaled(acc, scale, shift, NATURAL)
    elif round_mode == TRUNCATE_TO_LOWER:
        v = scaled(acc, scale, np.zeros_like(shift), NATURAL) >> shift
    elif round_mode < len(ROUND_NAMES):
        raise NotInterpreted(f"{what}: OFM rounding {ROUND_NAMES[round_mode]}")
    else:
        raise StreamError(f"{what}: OFM rounding mode {round_mode} is reserved")
    return act.apply(v + zero_point, dtype)


def _limit(value: int, signed: bool) -> int:
    """A 16-bit ``ACTIVATION_MIN`` or ``ACTIVATION_MAX`` in the OFM's signedness."""
    raw = value & 0xFFFF
    return raw - 0x10000 if signed and raw & 0x8000 else raw


def activation(regs: U85Registers, memory: Memory, dtype: np.dtype[Any]) -> Activation:
    value = regs["ACTIVATION"]
    function, table, clip_none = bits("act.function", value), bits("act.table", value), bits("act.clip_range", value)
    if value & ~0x10FF:
        raise StreamError(f"{regs.op}: NPU_SET_ACTIVATION {value:#x} has reserved bits set")
    info = np.iinfo(dtype)
    low, high = _limit(regs["ACTIVATION_MIN"], info.min < 0), _limit(regs["ACTIVATION_MAX"], info.min < 0)
    clamp = None if clip_none else (low, high)
    if function == LUT_NONE:
        return Activation(clamp)
    if function not in (LUT_S8_S8, LUT_U8_U8):
        raise NotInterpreted(f"{regs.op} with activation function {function} (a 16- or 32-bit table, TANH or SIGMOID)")
    if dtype.itemsize != 1 or (function == LUT_S8_S8) != (info.min < 0):
        raise StreamError(f"{regs.op}: an 8-bit table (function {function}) on a {dtype} OFM")
    if clamp is not None and (max(low, int(info.min)), min(high, int(info.max))) != (int(info.min), int(info.max)):
        raise NotInterpreted(f"{regs.op} with a table and the clamp {clamp}")
    raw = memory.read(SHRAM, table * 256, 256, f"{regs.op} reading its LUT (table {table})")
    return Activation(None, np.frombuffer(raw, dtype=dtype).astype(np.int64))
