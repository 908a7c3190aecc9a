"""NPU_OP_CONV and NPU_OP_DEPTHWISE: convolution, fully connected (a 1x1 convolution) and depthwise, 8-bit, 32-bit accumulator.

``acc[y, x, o] = bias[o] + sum over ky, kx, i of (ifm[y*sy + ky*dy - top, x*sx + kx*dx - left, i] - ifm_zp) * w[o, ky, kx, i]``
with padded positions contributing 0, then the output stage. Weights and scales are read
through the regions the registers name, as the DMAs before the op left them.

Settled against the TOSA reference model on the u55-128 programs of tests/ops_plugin.py (8
samples each, bit-exact): dilation (ops-dilated: a 3x3 kernel at dilation 2, its weights in
reorder_encode's brick order with 8 // dilation decomposition, as before); a 32-bit OFM, which
Regor writes where a convolution's int32 result goes straight into its int8-to-int32 casts
(ops-mix, before MAXIMUM and MINIMUM) or a transposed convolution's rescale (ops-deconv): its
scale records hold scale 1, shift 0 and only they are modelled, and the OFM is not clamped
(activation.py); and IFM_UPSCALE ZEROS (kernel.py), Regor's transposed convolution.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from zoo.registry.command_stream import limits
from zoo.registry.command_stream.activation import activation
from zoo.registry.command_stream.decoder import Decoder
from zoo.registry.command_stream.errors import NotInterpreted, StreamError
from zoo.registry.command_stream.kernel import ZEROS, BlockOp, block_op, windows
from zoo.registry.command_stream.memory import Memory
from zoo.registry.command_stream.output import output_stage
from zoo.registry.command_stream.regfile import Registers
from zoo.registry.command_stream.weights import (
    ScaleRecords,
    WeightLayout,
    conv_weights,
    scale_records,
)

__all__ = ["OpConstants", "conv", "conv_constants"]

PER_CHANNEL = 0


@dataclass(frozen=True)
class OpConstants:
    """What a CONV or DEPTHWISE reads besides its IFM: its weights and its per-channel scale records."""

    op: str
    """The operation and its byte offset in the stream, as messages name it."""
    depthwise: bool
    weights: np.ndarray[Any, Any]
    """(O, H, W, I), I = 1 for a depthwise; as the hardware multiplies them (less the weight zero point)."""
    records: ScaleRecords
    ofm_bits: int = 8
    """32: the op writes its accumulators, scale 1 and shift 0 (:func:`conv` refuses others), the rescale elsewhere."""


def conv_constants(regs: Registers, memory: Memory, ofm_ublock: int, decoder: Decoder, *,
                   depthwise: bool = False) -> OpConstants:
    """The op's decoded weight and scale streams, read through its registers as :func:`conv` reads them."""
    op = block_op(regs, memory, ofm_bits=(8, 32), upscale=(ZEROS,))
    weights, records = _constants(regs, memory, op, decoder, ofm_ublock, _cores(regs), depthwise=depthwise)
    return OpConstants(regs.op, depthwise, weights, records, op.ofm.precision.bits)


def conv(regs: Registers, memory: Memory, ofm_ublock: int, decoder: Decoder, *, depthwise: bool = False) -> None:
    op = block_op(regs, memory, ofm_bits=(8, 32), upscale=(ZEROS,))
    cores = _cores(regs)
    if op.ofm.precision.scale_mode != PER_CHANNEL:
        raise NotInterpreted(f"{regs.op} with a global OFM scale")
    act = activation(regs, memory, op.ofm.precision)
    oh, ow, oc = op.ofm_shape
    ic = op.ifm_shape[2]
    if depthwise and ic != oc:
        raise NotInterpreted(f"{regs.op} from {ic} to {oc} channels (a depth multiplier)")
    if depthwise and op.part_kernel:
        raise NotInterpreted(f"{regs.op} in part-kernel-first weight order")
    weights, records = _constants(regs, memory, op, decoder, ofm_ublock, cores, depthwise=depthwise)
    limits.macs(oh * ow * oc * op.kernel[0] * op.kernel[1] * (1 if depthwise else ic), regs.op)
    if op.ofm.precision.bits == 32 and ((records.scale != 1).any() or (records.shift != 0).any()):
        raise NotInterpreted(f"{regs.op} into a 32-bit OFM with scales other than 1, shift 0")
    ifm = op.read_ifm(memory, regs.op)
    top, left, bottom, right = op.pad
    padded = np.pad(ifm, ((top, bottom), (left, right), (0, 0)))
    acc = np.zeros((oh, ow, oc), dtype=np.int64)
    for ky, kx, window in windows(op, padded):
        if depthwise:
            acc += window * weights[:, ky, kx, 0]
        else:
            acc += window.reshape(oh * ow, ic).dot(weights[:, ky, kx, :].T).reshape(oh, ow, oc)
    acc += records.bias
    out = output_stage(acc, records.scale, records.shift, round_mode=op.ofm.precision.round_mode,
                       zero_point=op.ofm_zero_point, activation=act, dtype=op.ofm.precision.dtype, what=regs.op)
    op.ofm.write(memory, out, regs.op)


def _cores(regs: Registers) -> int:
    """PARALLEL_MODE (the U65's): 0, one core; 1, DUAL_CORE_DEPTH, two cores sharing the OFM's depth."""
    mode = regs.values.get("PARALLEL_MODE", 0)
    if mode not in (0, 1):
        raise StreamError(f"{regs.op} with PARALLEL_MODE {mode}, which is reserved")
    return 2 if mode else 1


def _constants(regs: Registers, memory: Memory, op: BlockOp, decoder: Decoder, ofm_ublock: int, cores: int, *,
               depthwise: bool) -> tuple[np.ndarray[Any, Any], ScaleRecords]:
    """The op's OHWI weights and per-channel records. Split over ``cores`` (DUAL_CORE_DEPTH), core ``k`` reads
    its own weight and scale streams (``WEIGHT1_*``, ``SCALE1_*`` for core 1), which hold OFM channels
    ``k, k + cores, ...`` in the brick order of an OFM block ``cores`` times shallower (Regor's weight encoder
    deinterleaves the OFM depth so); a core with no channel has empty streams."""
    oc, ic = op.ofm_shape[2], op.ifm_shape[2]
    block = min(regs["OFM_BLK_DEPTH_M1"] + 1, oc)
    weights, parts = [], []
    for core in range(cores):
        suffix = str(core) if core else ""
        op_name = regs.op + (f" (core {core})" if cores > 1 else "")
        what = f"{op_name}'s weight stream"
        channels = (oc + cores - 1 - core) // cores
        if not channels:  # Regor writes only the empty lengths
            if regs.values.get(f"WEIGHT{suffix}_LENGTH", 0) or regs.values.get(f"SCALE{suffix}_LENGTH", 0):
                raise StreamError(f"{op_name}: core {core} has no OFM channel, yet its stream lengths are not 0")
            continue
        weight_data = memory.read(regs["WEIGHT_REGION"] & 7, regs.address(f"WEIGHT{suffix}_BASE"),
                                  regs.address(f"WEIGHT{suffix}_LENGTH"), what)
        scales = what.replace("weight", "scale")
        scale_data = memory.read(regs["SCALE_REGION"] & 7, regs.address(f"SCALE{suffix}_BASE"),
                                 regs.address(f"SCALE{suffix}_LENGTH"), scales)
        layout = WeightLayout(
            ofm_depth=channels, kernel_h=op.kernel[0], kernel_w=op.kernel[1], ifm_depth=ic,
            ofm_block_depth=(block + cores - 1 - core) // cores, depthwise=depthwise, part_kernel=op.part_kernel,
            ifm_bits=op.ifm.precision.bits, decomp_h=8 // op.dilation[0], decomp_w=8 // op.dilation[1],
            ofm_ublock=ofm_ublock,
        )
        weights.append(conv_weights(weight_data, layout, op_name, decoder))
        parts.append(scale_records(scale_data, channels, op_name))
    if len(weights) == 1:
        return weights[0], parts[0]
    merged = np.zeros((oc, *weights[0].shape[1:]), dtype=np.int64)
    fields = [np.zeros(oc, dtype=np.int64) for _ in range(3)]
    for core, (w, part) in enumerate(zip(weights, parts, strict=True)):
        merged[core::cores] = w
        for values, field in zip(fields, (part.bias, part.scale, part.shift), strict=True):
            values[core::cores] = field
    return merged, ScaleRecords(*fields)
