"""The output stage: accumulator to OFM value (scale, shift, rounding, zero point, clamps).

``v = round(acc * scale / 2**shift) + ofm_zp``, then the activation (``activation.py``): a clamp
to ``[ACTIVATION_MIN, ACTIVATION_MAX]`` and the OFM type, or a table lookup. The scale is unsigned 32-bit (Regor's identity copies use
``0x80000001 >> 31``), so the product is computed exactly, in Python integers where int64
could overflow.

Rounding (``OFM_PRECISION`` bits 14-15): NATURAL adds half and shifts arithmetically
(round half up), which is TOSA's ``apply_scale_32`` with ``double_round=False``. TFL ("DBL")
rounds twice for shifts above 31 and its tie direction is not documented offline: it is
interpreted only where it cannot differ from a single rounding to nearest (shift at most 31
and no value exactly at a negative half), and stops otherwise. TRUNCATE is not modelled.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from zoo.registry.command_stream.activation import Activation
from zoo.registry.command_stream.errors import NotInterpreted, StreamError

__all__ = ["DBL", "NATURAL", "TRUNCATE", "output_stage", "scaled"]

DBL, TRUNCATE, NATURAL = 0, 1, 2
_INT32 = (-(1 << 31), (1 << 31) - 1)


def scaled(acc: np.ndarray[Any, Any], scale: np.ndarray[Any, Any], shift: np.ndarray[Any, Any], round_mode: int) -> np.ndarray[Any, Any]:
    big = int(np.abs(acc).max(initial=0)) * int(scale.max(initial=0)) >= 1 << 62
    a = acc.astype(object) if big else acc
    s = scale.astype(object) if big else scale
    sh = shift.astype(object) if big else shift
    product = a * s
    if round_mode == NATURAL:
        half = np.where(sh > 0, np.left_shift(1, np.maximum(sh - 1, 0)), 0)
        return np.asarray((product + half) >> sh, dtype=np.int64)
    if round_mode == DBL:
        if int(shift.max(initial=0)) > 31:
            raise NotInterpreted(f"OFM round mode DBL (TFL) with shift {int(shift.max())} (above 31 it rounds twice)")
        half = np.where(sh > 0, np.left_shift(1, np.maximum(sh - 1, 0)), 0)
        mask = np.left_shift(1, sh) - 1
        if ((product < 0) & (sh > 0) & ((product & mask) == half)).any():
            raise NotInterpreted("OFM round mode DBL (TFL) at an exact negative tie (its direction is not documented)")
        return np.asarray((product + half) >> sh, dtype=np.int64)
    if round_mode == TRUNCATE:
        raise NotInterpreted("OFM round mode TRUNCATE")
    raise StreamError(f"OFM round mode {round_mode} is reserved")


def output_stage(acc: np.ndarray[Any, Any], scale: np.ndarray[Any, Any], shift: np.ndarray[Any, Any], *, round_mode: int, zero_point: int,
                 activation: Activation, dtype: np.dtype[Any], what: str, wide: bool = False) -> np.ndarray[Any, Any]:
    """``acc`` is (..., C) int64; ``scale`` and ``shift`` are per channel (C,) or scalars.
    ``wide``: the accumulator is a 32-bit MUL's 64-bit product, not a 32-bit sum."""
    if not wide and acc.size and (acc.min() < _INT32[0] or acc.max() > _INT32[1]):
        raise NotInterpreted(f"{what}: a 32-bit accumulator overflows ({int(acc.min())}..{int(acc.max())}); "
                             "the hardware's saturation is not modelled")
    v = scaled(acc, np.asarray(scale, dtype=np.int64), np.asarray(shift, dtype=np.int64), round_mode) + zero_point
    return activation.apply(v, dtype)
