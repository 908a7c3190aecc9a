"""The output stage's arithmetic: TOSA's single rounding, exact products, and what it refuses to guess."""

from __future__ import annotations

import numpy as np
import pytest

from zoo.registry.command_stream import NotInterpreted
from zoo.registry.command_stream.activation import Activation
from zoo.registry.command_stream.output import DBL, NATURAL, TRUNCATE, output_stage

INT8 = np.dtype(np.int8)


def _stage(acc: list[int], scale: int, shift: int, mode: int = NATURAL, zp: int = 0,
           clamp: tuple[int, int] = (-128, 127)) -> list[int]:
    out = output_stage(np.asarray(acc, dtype=np.int64), np.asarray(scale), np.asarray(shift), round_mode=mode,
                       zero_point=zp, activation=Activation(clamp), dtype=INT8, what="CONV")
    return [int(v) for v in out]


def test_natural_rounds_half_up_as_tosa_apply_scale_32() -> None:
    # TOSA apply_scale_32(value, multiplier, shift, double_round=False): (value*multiplier + 2**(shift-1)) >> shift.
    assert _stage([3, -3, 5, -5, 1, -1, 2, -2], 1, 1) == [2, -1, 3, -2, 1, 0, 1, -1]
    assert _stage([100], 1 << 30, 31) == [50]
    assert _stage([-9355 + 12345], 564340651, 38) == [round(2990 * 564340651 / 2**38)]


def test_products_beyond_int64_are_exact() -> None:
    # acc * scale reaches 2**63: computed in Python integers, not wrapped.
    big, scale = (1 << 31) - 1, (1 << 32) - 1
    assert big * scale >= 1 << 62 and ((big * scale + (1 << 56)) >> 57) == 64
    assert _stage([big, -big - 1], scale, 57) == [64, -64]


def test_regors_copy_scale_is_the_identity_in_both_roundings() -> None:
    values = list(range(-128, 128))
    for mode in (DBL, NATURAL):
        assert _stage(values, 0x80000001, 31, mode) == values


def test_zero_point_then_clamps() -> None:
    assert _stage([-200, -10, 10, 200], 1, 0, zp=-2, clamp=(-50, 60)) == [-50, -12, 8, 60]
    assert _stage([-1000, 1000], 1, 0, clamp=(-1000, 1000)) == [-128, 127]


def test_what_is_not_modelled_stops() -> None:
    with pytest.raises(NotInterpreted, match="not implemented: OFM round mode TRUNCATE"):
        _stage([1], 1, 1, TRUNCATE)
    with pytest.raises(NotInterpreted, match=r"not implemented: OFM round mode DBL .* shift 40"):
        _stage([1], 1, 40, DBL)
    with pytest.raises(NotInterpreted, match=r"DBL .* exact negative tie"):
        _stage([-3], 1, 1, DBL)
    assert _stage([3], 1, 1, DBL) == [2]
    with pytest.raises(NotInterpreted, match="32-bit accumulator overflows"):
        _stage([1 << 31], 1, 0)
