"""U85 NPU_OP_RESIZE: nearest-neighbour and bilinear resizes, TOSA's RESIZE computed by the NPU.

Learnt from Regor's ``GenerateResizeOp``: the mode is the operation's parameter (BILINEAR 0, REPLICATE 1,
NEAREST 2); ``RESIZE_Y_SCALE_N_M1``/``RESIZE_X_SCALE_N_M1`` hold TOSA's scale numerator ``n`` less one,
``RESIZE_Y_OFFSET``/``RESIZE_X_OFFSET`` its offset (12 bits, signed), and ``RESIZE_Y``/``RESIZE_X`` the
steps: the parameter's bits 0-3 and 4-14 are the integer parts of ``d / n`` and of ``(block - 1) * d / n``,
the payload's bits 0-10 and 16-26 their remainders, so the denominator ``d`` is ``int * n + mod`` and the
block step must agree with ``OFM_BLK_*_M1``. The IFM is ``KERNEL_HEIGHT_M1 + 1`` by
``KERNEL_WIDTH_M1 + 1`` by ``IFM_DEPTH_M1 + 1``.

Each OFM position (oy, ox) reads the IFM at ``y = oy * d + offset``: ``iy = floor(y / n)`` and the fraction
``dy = y - iy * n``, clamped to the IFM's edges as TOSA's RESIZE clamps them. NEAREST takes ``iy + 1``
where ``2 * dy >= n``, times ``2**16``; BILINEAR sums the four neighbours (less the zero point) weighted
``(n - dy) * (n - dx)``, ``(n - dy) * dx``, ``dy * (n - dx)`` and ``dy * dx``, times ``2**16``. Regor
writes the rescale TOSA puts after the resize as ``OFM_SCALE`` with scale 1 and the shift plus 16, so the
output stage (``stage.py``) undoes the ``2**16``. REPLICATE is not modelled (no program measured has it).

That sum is not held in a 32-bit accumulator, whatever ``ACC_FORMAT`` says (Regor writes I32 for an 8-bit
resize): a resize uses no accumulator buffer (``ArchEthosU85::TryBlockConfig``: "Elementwise and Resize don't
use IB/AB"), and Regor takes scales up to ``n = 2048`` with a shift up to 47 (``ethos_u85_constraints.cpp``),
so up to ``2**7 * 2048**2 * 2**16 = 2**45`` before the shift. The output stage takes it as 48 bits. Both of
deeplabv3-mobilenetv3-large's resizes pass 32 bits: its image-pooling branch's 1x1 to 14x14 (``n = 28``, into a
32-bit OFM: ``v * 784``, shift 16) sums to -6,576,668,672, and its final x16 (``n = 32``, shift 26) to up to
``127 * 1024 * 2**16``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from zoo.registry.command_stream.errors import NotInterpreted, StreamError
from zoo.registry.command_stream.memory import Memory
from zoo.registry.command_stream.u85.maps import (
    TILE2X2,
    Chains,
    ifm_map,
    ofm_map,
    reader,
    write_ofm,
)
from zoo.registry.command_stream.u85.regfile import U85Registers
from zoo.registry.command_stream.u85.regs import bits
from zoo.registry.command_stream.u85.stage import activation, ofm_scale, stage

__all__ = ["MODES", "resize"]

MODES = ("BILINEAR", "REPLICATE", "NEAREST")
BILINEAR, REPLICATE, NEAREST = 0, 1, 2
ONE = 1 << 16


def _axis(regs: U85Registers, axis: str, block_m1: int) -> tuple[int, int, int]:
    """(n, d, offset) of one axis, after checking the block step agrees with the block."""
    n = regs[f"RESIZE_{axis}_SCALE_N_M1"] + 1
    step, step_param = regs[f"RESIZE_{axis}"], regs.param(f"RESIZE_{axis}")
    if step & ~0x07FF07FF or step_param & 0x8000:
        raise StreamError(f"{regs.op}: NPU_SET_RESIZE_{axis} has reserved bits set")
    d = bits("resize.one_step_int", step_param) * n + bits("resize.one_step_mod", step)
    block = bits("resize.blk_step_int", step_param) * n + bits("resize.blk_step_mod", step)
    if block != block_m1 * d or bits("resize.one_step_mod", step) >= n:
        raise StreamError(f"{regs.op}: NPU_SET_RESIZE_{axis}'s steps ({d} a position, {block} a block) disagree with "
                          f"its scale n={n} and the OFM block of {block_m1 + 1}")
    offset = regs[f"RESIZE_{axis}_OFFSET"]
    if offset >> 12:
        raise StreamError(f"{regs.op}: NPU_SET_RESIZE_{axis}_OFFSET {offset:#x} has reserved bits set")
    return n, d, offset - (1 << 12) if offset >> 11 else offset


def _positions(size: int, n: int, d: int, offset: int, extent: int) -> tuple[np.ndarray[Any, Any], ...]:
    """Each OFM coordinate's lower and upper IFM index (clamped) and its fraction ``dy`` of ``n``."""
    y = np.arange(size, dtype=np.int64) * d + offset
    low = y // n
    fraction = y - low * n
    return np.clip(low, 0, extent - 1), np.clip(low + 1, 0, extent - 1), fraction


def resize(regs: U85Registers, memory: Memory, chains: Chains, mode: int) -> None:
    if mode == REPLICATE or mode > NEAREST:
        raise NotInterpreted(f"RESIZE {MODES[mode] if mode < len(MODES) else mode}")
    if regs["IFM_UPSCALE"]:
        raise NotInterpreted(f"{regs.op} with IFM_UPSCALE")
    ofm, global_scale = ofm_map(regs)
    if not global_scale or ofm.transpose != "HWC":
        raise StreamError(f"{regs.op}: a resize with per-channel scales or a transposed OFM")
    ifm = ifm_map(regs)
    if ifm.storage != TILE2X2 and ifm.storage != 2:
        raise NotInterpreted(f"{regs.op} with a scalar IFM")
    shape = (regs["OFM_HEIGHT_M1"] + 1, regs["OFM_WIDTH_M1"] + 1, regs["OFM_DEPTH_M1"] + 1)
    extent = (regs["KERNEL_HEIGHT_M1"] + 1, regs["KERNEL_WIDTH_M1"] + 1)
    ny, dy, oy = _axis(regs, "Y", regs["OFM_BLK_HEIGHT_M1"])
    nx, dx, ox = _axis(regs, "X", regs["OFM_BLK_WIDTH_M1"])
    values = reader(regs, memory, chains, ifm)(extent[0], extent[1], regs["IFM_DEPTH_M1"] + 1) - regs["IFM_ZERO_POINT"]
    if values.shape[2] != shape[2]:
        raise StreamError(f"{regs.op}: a resize from {values.shape[2]} to {shape[2]} channels")
    y0, y1, fy = _positions(shape[0], ny, dy, oy, extent[0])
    x0, x1, fx = _positions(shape[1], nx, dx, ox, extent[1])
    if mode == NEAREST:
        rows = np.where(2 * fy >= ny, y1, y0)
        cols = np.where(2 * fx >= nx, x1, x0)
        total = values[rows[:, None], cols[None, :], :] * ONE
    else:
        wy, wx = fy[:, None, None], fx[None, :, None]
        total = ((values[y0[:, None], x0[None, :]] * (ny - wy) * (nx - wx)
                  + values[y0[:, None], x1[None, :]] * (ny - wy) * wx
                  + values[y1[:, None], x0[None, :]] * wy * (nx - wx)
                  + values[y1[:, None], x1[None, :]] * wy * wx) * ONE)
    scale, shift, round_mode = ofm_scale(regs)
    out = stage(total, np.asarray(scale), np.asarray(shift), round_mode, regs["OFM_ZERO_POINT"],
                activation(regs, memory, ofm.dtype), ofm.dtype, regs.op, acc_bits=48)
    write_ofm(memory, chains, ofm, out, regs.op)
