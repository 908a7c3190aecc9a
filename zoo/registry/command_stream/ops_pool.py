"""NPU_OP_POOL: MAX (zero points 0), AVERAGE and REDUCE_SUM, global scale, then the activation.

MAX takes the largest ``ifm - ifm_zp`` of each window, the padding excluded (TOSA's MAX_POOL2D
and TFLite's alike; legacy Vela hands SAME padding to the hardware as it is); AVERAGE the sum;
both then go through the output stage with ``OFM_SCALE``. Regor emits 1x1 AVERAGE pools with
scale ``0x80000001 >> 31`` and strides of its own as copies and transposes (of 32-bit data too,
as four 8-bit channels). REDUCE_SUM (legacy Vela's ``ReduceSum`` block) sums each position's
channels into a one-channel OFM, from 8- or 32-bit maps into 8- or 32-bit ones: Regor's global
means are transposes, then REDUCE_SUMs whose last one scales by ``OFM_SCALE``.

A padded AVERAGE pool (TOSA's AVG_POOL2D with padding, torch's ``count_include_pad=False``) is
written with OFM_SCALE 1, shift 0: the hardware divides each window's sum by the number of its
taps inside the IFM, the padding excluded (legacy Vela: "for valid padding vela has to output
scaling values", and scale 1 otherwise), rounding to nearest, half up, as TOSA's reciprocal
scale does. Regor moves both zero points to -128 for it, so that every sum is at least 0 and
the tie direction of a negative sum never matters; a negative tie stops the run. Settled on the
u55-128 program of tests/ops_plugin.py's ops-avgpad-excl (3x3, stride 2, padding 1 top and
left): bit-exact with the TOSA reference model on 8 samples; a padded AVERAGE with another
OFM_SCALE is not modelled.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from zoo.registry.command_stream import limits
from zoo.registry.command_stream.activation import activation
from zoo.registry.command_stream.errors import NotInterpreted
from zoo.registry.command_stream.kernel import NEAREST, BlockOp, block_op, windows
from zoo.registry.command_stream.memory import Memory
from zoo.registry.command_stream.output import output_stage
from zoo.registry.command_stream.regfile import Registers

__all__ = ["pool"]

MAX, AVERAGE, REDUCE_SUM = 0, 1, 2
NAMES = ("MAX", "AVERAGE", "REDUCE_SUM")
GLOBAL = 1


def pool(regs: Registers, memory: Memory, mode: int) -> None:
    if mode not in (MAX, AVERAGE, REDUCE_SUM):
        raise NotInterpreted(f"POOL mode {mode}")
    name = NAMES[mode]
    op = block_op(regs, memory, (8, 32), (8, 32)) if mode == REDUCE_SUM else block_op(regs, memory, upscale=(NEAREST,))
    scale, shift = regs["OFM_SCALE"], regs.param("OFM_SCALE") & 0x3F
    divided = mode == AVERAGE and any(op.pad)
    if (any(op.pad) and mode == REDUCE_SUM) or (divided and (scale, shift) != (1, 0)):
        raise NotInterpreted(f"POOL {name} with padding {op.pad} and OFM_SCALE {scale:#x} shift {shift}")
    if op.ofm.precision.scale_mode != GLOBAL:
        raise NotInterpreted(f"POOL {name} with per-channel scales")
    if mode == MAX and (op.ifm_zero_point or op.ofm_zero_point):
        # Regor writes 0 for both (TOSA's MAX_POOL2D has none); whether the hardware subtracts them is not checked.
        raise NotInterpreted(f"POOL MAX with zero points {op.ifm_zero_point} (IFM) and {op.ofm_zero_point} (OFM)")
    if op.dilation != (1, 1):
        raise NotInterpreted(f"POOL {name} with dilation {op.dilation}")
    act = activation(regs, memory, op.ofm.precision)
    ih, iw, ic = op.ifm_shape
    if mode == REDUCE_SUM:
        if op.kernel != (1, 1) or op.stride != (1, 1) or op.ofm_shape[2] != 1:
            raise NotInterpreted(f"POOL REDUCE_SUM with kernel {op.kernel}, stride {op.stride} into "
                                 f"{op.ofm_shape[2]} channels (a 1x1 sum into one channel is modelled)")
        acc = (op.ifm.read(memory, ih, iw, ic, regs.op) - op.ifm_zero_point).sum(axis=2, keepdims=True)
    else:
        if ic != op.ofm_shape[2]:
            raise NotInterpreted(f"POOL {name} from {ic} to {op.ofm_shape[2]} channels")
        limits.macs(op.ofm_shape[0] * op.ofm_shape[1] * ic * op.kernel[0] * op.kernel[1], regs.op)
        ifm = op.read_ifm(memory, regs.op)
        top, left, bottom, right = op.pad
        if any(op.pad):  # MAX: a padded tap is below every value, so no window's maximum is one; AVERAGE adds 0
            low = np.iinfo(np.int64).min if mode == MAX else 0
            ifm = np.pad(ifm, ((top, bottom), (left, right), (0, 0)), constant_values=low)
        taps = [w for _, _, w in windows(op, ifm)]
        acc = np.maximum.reduce(taps) if mode == MAX else np.add.reduce(taps)
        if divided:
            acc = _window_mean(op, acc, regs.op)
    out = output_stage(acc, np.asarray(scale), np.asarray(shift), round_mode=op.ofm.precision.round_mode,
                       zero_point=op.ofm_zero_point, activation=act, dtype=op.ofm.precision.dtype, what=regs.op)
    op.ofm.write(memory, out, regs.op)


def _window_mean(op: BlockOp, sums: np.ndarray[Any, Any], what: str) -> np.ndarray[Any, Any]:
    """Each window's sum divided by its taps inside the IFM, rounded half up."""
    top, left, bottom, right = op.pad
    inside = np.pad(np.ones((*op.ifm_shape[:2], 1), dtype=np.int64), ((top, bottom), (left, right), (0, 0)))
    count = np.add.reduce([w for _, _, w in windows(op, inside)])
    if ((sums < 0) & (2 * (sums % count) == count)).any():
        raise NotInterpreted(f"{what}: a padded AVERAGE of a negative sum exactly between two values "
                             "(the hardware's tie direction is not settled)")
    return np.asarray((2 * sums + count) // (2 * count), dtype=np.int64)
