"""Feature maps: an (H, W, C) tensor read or written through the tile bases, strides and layout the registers give.

Addressing follows the hardware's tiling (Vela's ``get_address``): a map is up to four tiles;
tile 0 and 2 are ``WIDTH0`` wide, tile 0 is ``HEIGHT0`` high, tile 1 (right of tile 0) is
``HEIGHT1`` high, and tiles 2 and 3 are below. In NHWC an element sits at
``base + y*STRIDE_Y + x*STRIDE_X + c*elem``; in NHCWB16 channels come in bricks of 16:
``base + y*STRIDE_Y + x*16*elem + (c//16)*STRIDE_C + (c%16)*elem``. Strides are taken from the
registers, never recomputed: Regor writes transposing strides of its own. ``STRIDE_C`` is the
stride between 16-channel bricks (the register map), which NHWC does not have: there channels
are contiguous whatever it holds (legacy Vela's ``get_address``), and Regor leaves a 32-bit
map's 4 in it for the 8-bit copies that follow.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from zoo.registry.command_stream import limits
from zoo.registry.command_stream.errors import NotInterpreted
from zoo.registry.command_stream.memory import Memory
from zoo.registry.command_stream.regfile import Registers

__all__ = ["FeatureMap", "Precision", "feature_map", "ifm_precision", "ofm_precision"]

NHWC, NHCWB16 = 0, 1
_BITS = {0: 8, 1: 16, 2: 32}


@dataclass(frozen=True)
class Precision:
    signed: bool
    bits: int
    layout: int
    scale_mode: int
    round_mode: int

    @property
    def dtype(self) -> np.dtype[Any]:
        return np.dtype(f"<{'i' if self.signed else 'u'}{self.bits // 8}")


def _precision(value: int, precision_shift: int, scale_bits: int, what: str) -> Precision:
    code = (value >> precision_shift) & 3
    if code not in _BITS:
        raise NotInterpreted(f"{what} precision B64")
    layout = (value >> 6) & 3
    if layout not in (NHWC, NHCWB16):
        raise NotInterpreted(f"{what} format {layout}")
    return Precision(bool(value & 1), _BITS[code], layout, (value >> 8) & scale_bits, (value >> 14) & 3)


def ifm_precision(value: int, what: str = "IFM") -> Precision:
    """``IFM_PRECISION``/``IFM2_PRECISION``: type bit 0, precision bits 2-3, format 6-7, scale mode 8-9, round mode 14-15."""
    return _precision(value, 2, 3, what)


def ofm_precision(value: int) -> Precision:
    """``OFM_PRECISION``: type bit 0, precision bits 1-2, format 6-7, scale mode bit 8, round mode 14-15."""
    return _precision(value, 1, 1, "OFM")


@dataclass(frozen=True)
class FeatureMap:
    name: str
    region: int
    bases: tuple[int, int, int, int]
    height0: int
    height1: int
    width0: int
    stride_x: int
    stride_y: int
    stride_c: int
    precision: Precision

    def addresses(self, h: int, w: int, c: int) -> np.ndarray[Any, Any]:
        """The byte address of each element's first byte, shape (h, w, c)."""
        elem = self.precision.bits // 8
        y = np.arange(h, dtype=np.int64)[:, None, None]
        x = np.arange(w, dtype=np.int64)[None, :, None]
        ch = np.arange(c, dtype=np.int64)[None, None, :]
        right = x >= self.width0
        below = np.where(right, y >= self.height1, y >= self.height0)
        tile = right.astype(np.int64) + 2 * below
        y = y - np.where(below, np.where(right, self.height1, self.height0), 0)
        x = x - np.where(right, self.width0, 0)
        base = np.asarray(self.bases, dtype=np.int64)[tile]
        if self.precision.layout == NHWC:
            inner = x * self.stride_x + ch * elem
        else:
            if self.stride_x != 16 * elem:
                raise NotInterpreted(f"{self.name} in NHCWB16 with STRIDE_X {self.stride_x} for {elem}-byte elements")
            inner = x * (16 * elem) + (ch // 16) * self.stride_c + (ch % 16) * elem
        return np.broadcast_to(base + y * self.stride_y + inner, (h, w, c))

    def _byte_addresses(self, h: int, w: int, c: int) -> np.ndarray[Any, Any]:
        limits.elements((h, w, c), self.name)
        first = self.addresses(h, w, c)
        elem = self.precision.bits // 8
        return first[..., None] + np.arange(elem, dtype=np.int64)

    def read(self, memory: Memory, h: int, w: int, c: int, what: str) -> np.ndarray[Any, Any]:
        """The map's first (h, w, c) elements as int64."""
        raw = memory.gather(self.region, self._byte_addresses(h, w, c), f"{what} reading its {self.name}")
        return np.ascontiguousarray(raw).view(self.precision.dtype)[..., 0].astype(np.int64)

    def write(self, memory: Memory, values: np.ndarray[Any, Any], what: str) -> None:
        h, w, c = values.shape
        limits.fits(values.size * self.precision.bits // 8, self.region,
                    memory.size(self.region, f"{what} writing its {self.name}"), f"{what}'s {self.name}")
        raw = np.ascontiguousarray(values.astype(self.precision.dtype)).view(np.uint8).reshape(h, w, c, -1)
        memory.scatter(self.region, self._byte_addresses(h, w, c), raw, f"{what} writing its {self.name}")


def feature_map(regs: Registers, name: str, precision: Precision) -> FeatureMap:
    """The IFM, IFM2 or OFM as its registers describe it."""
    if regs[f"{name}_REGION"] & ~7:
        raise NotInterpreted(f"{name}_REGION {regs[f'{name}_REGION']:#x} (upper bits set)")
    bases = tuple(regs.address(f"{name}_BASE{i}") for i in range(4))
    return FeatureMap(
        name, regs[f"{name}_REGION"] & 7, (bases[0], bases[1], bases[2], bases[3]),
        regs[f"{name}_HEIGHT0_M1"] + 1, regs[f"{name}_HEIGHT1_M1"] + 1, regs[f"{name}_WIDTH0_M1"] + 1,
        regs.address(f"{name}_STRIDE_X"), regs.address(f"{name}_STRIDE_Y"), regs.address(f"{name}_STRIDE_C"),
        precision,
    )
