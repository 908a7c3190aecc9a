"""What CONV and POOL share: the kernel registers, the padding and the OFM shape.

``IFM_UPSCALE`` NEAREST (1) has the kernel read the IFM at twice its height and width, each
element repeated 2x2 (the register map's ``ifm_upscale_mode``; legacy Vela's 2x nearest-neighbour
resize): the extent the OFM, kernel, stride and padding give is the upscaled one. Regor writes it
on a 1x1 AVERAGE copy for ``F.interpolate(scale_factor=2, mode="nearest")`` (TOSA's RESIZE); the
u55-128 program of tests/ops_plugin.py's ops-upsample is bit-exact with the TOSA reference model
so on 8 samples. ZEROS (2) puts each IFM element at (2y, 2x) of the upscaled map and zeros
(after the zero point) between: Regor's transposed convolution (``nn.ConvTranspose2d(8, 8, 2,
stride=2)``) is a stride-1 CONV of it with padding 1 at the top and left, bit-exact so on
ops-deconv's program, and not with the elements at (2y + 1, 2x + 1). NEAREST is modelled on
POOL, ZEROS on CONV, both to an even upscaled extent.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from zoo.registry.command_stream import limits
from zoo.registry.command_stream.errors import NotInterpreted, StreamError
from zoo.registry.command_stream.fmap import FeatureMap, feature_map, ifm_precision, ofm_precision
from zoo.registry.command_stream.memory import Memory
from zoo.registry.command_stream.regfile import Registers

__all__ = ["BlockOp", "block_op", "windows"]

NEAREST, ZEROS = 1, 2
UPSCALES = {NEAREST: "NEAREST", ZEROS: "ZEROS"}


@dataclass(frozen=True)
class BlockOp:
    ifm: FeatureMap
    ofm: FeatureMap
    ofm_shape: tuple[int, int, int]
    ifm_shape: tuple[int, int, int]
    kernel: tuple[int, int]
    """Undilated (height, width)."""
    stride: tuple[int, int]
    dilation: tuple[int, int]
    pad: tuple[int, int, int, int]
    """Top, left, bottom, right."""
    part_kernel: bool
    ifm_zero_point: int
    ofm_zero_point: int
    upscale: int = 0
    """IFM_UPSCALE: 0 (none), NEAREST or ZEROS."""

    def read_ifm(self, memory: Memory, what: str) -> np.ndarray[Any, Any]:
        """The IFM the kernel reads (upscaled where IFM_UPSCALE says), less its zero point; first, the
        padded IFM is checked against the interpreter's limit."""
        h, w, c = self.ifm_shape
        top, left, bottom, right = self.pad
        limits.elements((h + top + bottom, w + left + right, c), f"{what}'s padded IFM")
        if not self.upscale:
            return self.ifm.read(memory, h, w, c, what) - self.ifm_zero_point
        ifm = self.ifm.read(memory, h // 2, w // 2, c, what) - self.ifm_zero_point
        if self.upscale == NEAREST:
            return ifm.repeat(2, axis=0).repeat(2, axis=1)
        zeros = np.zeros((h, w, c), dtype=np.int64)
        zeros[::2, ::2] = ifm
        return zeros


def block_op(regs: Registers, memory: Memory, ifm_bits: tuple[int, ...] = (8,), ofm_bits: tuple[int, ...] = (8,),
             upscale: tuple[int, ...] = ()) -> BlockOp:
    """The registers every block operation (CONV, DEPTHWISE, POOL) reads, checked for what is modelled:
    by default 8-bit maps alone, and the IFM_UPSCALE modes in ``upscale``."""
    if regs["IFM_UPSCALE"] and regs["IFM_UPSCALE"] not in upscale:
        raise NotInterpreted(f"{regs.op} with IFM_UPSCALE {regs['IFM_UPSCALE']}")
    if regs["ACC_FORMAT"]:
        raise NotInterpreted(f"{regs.op} with ACC_FORMAT {regs['ACC_FORMAT']} (only the 32-bit accumulator is modelled)")
    stride_reg = regs["KERNEL_STRIDE"]
    if stride_reg & (1 << 5):
        raise NotInterpreted(f"{regs.op} with 4x4 kernel decomposition")
    stride = (((stride_reg >> 1) & 1 | ((stride_reg >> 9) & 1) << 1) + 1, ((stride_reg & 1) | ((stride_reg >> 6) & 1) << 1) + 1)
    dilation = (((stride_reg >> 4) & 1) + 1, ((stride_reg >> 3) & 1) + 1)
    extent = (regs["KERNEL_HEIGHT_M1"], regs["KERNEL_WIDTH_M1"])
    if extent[0] % dilation[0] or extent[1] % dilation[1]:
        raise StreamError(f"{regs.op}: the kernel's extent {extent[0] + 1}x{extent[1] + 1} does not fit its dilation")
    kernel = (extent[0] // dilation[0] + 1, extent[1] // dilation[1] + 1)
    pad = (regs["IFM_PAD_TOP"], regs["IFM_PAD_LEFT"], regs["IFM_PAD_BOTTOM"], regs["IFM_PAD_RIGHT"])
    ofm_shape = (regs["OFM_HEIGHT_M1"] + 1, regs["OFM_WIDTH_M1"] + 1, regs["OFM_DEPTH_M1"] + 1)
    # The IFM extent is not a register: it is what the OFM, kernel, stride and padding read.
    ifm_h = (ofm_shape[0] - 1) * stride[0] + extent[0] + 1 - pad[0] - pad[2]
    ifm_w = (ofm_shape[1] - 1) * stride[1] + extent[1] + 1 - pad[1] - pad[3]
    if ifm_h < 1 or ifm_w < 1:
        raise StreamError(f"{regs.op}: the padding ({pad}) covers the whole input window")
    if regs["IFM_UPSCALE"] and (ifm_h % 2 or ifm_w % 2):
        raise NotInterpreted(f"{regs.op} with IFM_UPSCALE {UPSCALES[regs['IFM_UPSCALE']]} to an odd extent {ifm_h}x{ifm_w}")
    ifm_p = ifm_precision(regs["IFM_PRECISION"])
    ofm_p = ofm_precision(regs["OFM_PRECISION"])
    for name, p, bits in (("IFM", ifm_p, ifm_bits), ("OFM", ofm_p, ofm_bits)):
        if p.bits not in bits:
            raise NotInterpreted(f"{regs.op} with a {p.bits}-bit {name}")
    ofm = feature_map(regs, "OFM", ofm_p)
    limits.fits(ofm_shape[0] * ofm_shape[1] * ofm_shape[2] * ofm_p.bits // 8, ofm.region,
                memory.size(ofm.region, f"{regs.op} writing its OFM"), f"{regs.op}'s OFM")
    limits.elements(ofm_shape, f"{regs.op}'s OFM")
    return BlockOp(
        ifm=feature_map(regs, "IFM", ifm_p), ofm=ofm, ofm_shape=ofm_shape,
        ifm_shape=(ifm_h, ifm_w, regs["IFM_DEPTH_M1"] + 1), kernel=kernel, stride=stride, dilation=dilation,
        pad=pad, part_kernel=bool(stride_reg & 4), ifm_zero_point=regs["IFM_ZERO_POINT"],
        ofm_zero_point=regs["OFM_ZERO_POINT"], upscale=regs["IFM_UPSCALE"],
    )


def windows(op: BlockOp, padded: np.ndarray[Any, Any]) -> list[tuple[int, int, np.ndarray[Any, Any]]]:
    """For each kernel tap (ky, kx), the (OH, OW, C) slice of the padded IFM it multiplies."""
    oh, ow, _ = op.ofm_shape
    (sy, sx), (dy, dx) = op.stride, op.dilation
    out = []
    for ky in range(op.kernel[0]):
        for kx in range(op.kernel[1]):
            y0, x0 = ky * dy, kx * dx
            out.append((ky, kx, padded[y0:y0 + (oh - 1) * sy + 1:sy, x0:x0 + (ow - 1) * sx + 1:sx, :]))
    return out
