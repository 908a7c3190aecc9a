"""U85 NPU_OP_CONV, NPU_OP_DEPTHWISE and NPU_OP_POOL: the kernel registers, the weights and the arithmetic.

The kernel, padding and IFM extent are read as on the U55 (``kernel.py``: the IFM extent is what the
OFM, kernel, stride and padding read; ``KERNEL_STRIDE`` keeps its bits). CONV and DEPTHWISE take their
weights from ``WEIGHT_BASE``..``WEIGHT3_BASE`` in the format ``WEIGHT_FORMAT`` names (bit 0 FWD, bit 4
2:4 sparse; ``weights.py``) and their per-channel scales from the scale stream; the brick order depends
on the micro-block (``ACC_FORMAT`` bits 8-10: 1x1, 1x2, 1x4, 2x2, 2x4, 4x4, whose depth is the MACs
over 8 over its area) and on the IFM block depth, which no register holds: Regor's ``FindBlockConfig``
fixes it at 16 for part-kernel-first weights, 32 for a 32-bit IFM or a 16-deep micro-block on the
U85-128 and U85-256 (not sparse), 128 for 2:4 sparse 8-bit weights and 64 otherwise.

POOL MAX takes the largest ``ifm - ifm_zp`` of each window (padding left out), SUM the window's sum,
AVERAGE the sum divided by the taps inside the IFM (the padding left out: torch's
``count_include_pad=False``, where Regor moves both zero points to -128), rounded half up (Regor writes AVERAGE for kernels up to 8x8 with
``OFM_SCALE`` 1, shift 0, and SUM with the division folded into the scale above: ``GetPoolingMode``). A negative
sum exactly between two values stops the run: the program's rounding mode (NATURAL, on every pool) rounds the output
stage's shift, 0 here, and nothing in the program or in Regor says how the divider rounds such a tie (TOSA's
``reciprocal_scale``, and Regor's SUM for larger kernels, round it away from zero; docs/verification.md);
then the output stage with ``OFM_SCALE``. A padded SUM, an AVERAGE with another scale,
REDUCE_SUM sums each position's channels into one (a 1x1 kernel, from and into 8- or 32-bit maps:
Regor's softmax); NONE with the accumulator from IFM2 is Regor's null pool (``_restore``); MIN and the
ARGMAX modes are not modelled. MAX, AVERAGE and SUM pools of 8-bit maps may write 32-bit ones (a layer
norm's sums), and so may those of 16-bit maps (a16w8's widening rescale before a 32-bit MUL, a 1x1 SUM: ops-a16-forms).
Otherwise the accumulator is reset and output
(``ACC_FORMAT`` input RESET, output ENABLE), 32 bits wide for 8-bit IFMs and 48 for a 16-bit
CONV or DEPTHWISE (I48: mnist at a16w8 on u85-256 is bit-exact, as is tests/ops_plugin.py's ops-depthwise, whose
16-bit DEPTHWISE streams hold the extra padding Regor's ``_dwPaddingCount`` gives 16-bit IFMs); ``IFM_UPSCALE`` is not
modelled. A CONV or DEPTHWISE may also keep its accumulator instead (output DISABLE, its OFM's storage
NONE) for the next one to add to (input KEEP): Regor's ``DecomposeForStrides`` writes a kernel whose stride
the NPU lacks (wav2letter's 250-wide, stride-160 first convolution) as one 1x1 operation per kernel
position, each with its own weights and the whole bias; the last outputs the sum of all. The bias is
added once, at the output: where it enters is not settled, so every part's bias must be the same
(``Kept``). ``IFM_BROADCAST`` is not read: Regor writes it before elementwise operations only
(``GenerateInputBroadcast``), so a pool or convolution after one finds it set (palm-detection-lite's
POOL after a broadcast MUL, on u85-256) and the compiler takes it to apply to elementwise operations alone.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

import numpy as np

from zoo.registry.command_stream.decoder import Decoder
from zoo.registry.command_stream.errors import NotInterpreted, StreamError
from zoo.registry.command_stream.memory import Memory
from zoo.registry.command_stream.ops_conv import OpConstants
from zoo.registry.command_stream.u85 import weights as w85
from zoo.registry.command_stream.u85.maps import NONE as NONE_STORAGE
from zoo.registry.command_stream.u85.maps import (
    TILE2X2,
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
from zoo.registry.command_stream.weights import ScaleRecords, decode_stream

__all__ = ["Accelerator", "Kept", "conv", "conv_constants", "pool", "shapes", "weight_layout"]

_KEPT_BYTES = 256 << 20
_kept: OrderedDict[tuple[tuple[bytes, ...], w85.Layout, bool], np.ndarray[Any, Any]] = OrderedDict()
"""Each convolution's weights by its streams' bytes and layout, for the next sample (as the U55's ``conv_weights``)."""
_MICROBLOCKS = {0: (1, 1), 1: (1, 2), 2: (1, 4), 3: (2, 2), 4: (2, 4), 5: (4, 4)}
_STREAMS = ("WEIGHT", "WEIGHT1", "WEIGHT2", "WEIGHT3")
POOL_MODES = ("MAX", "AVERAGE", "REDUCE_SUM", "SUM", "NONE", "MIN", "ARGMAX_X", "ARGMAX_Y")
MAX, AVERAGE, REDUCE_SUM, SUM, NONE = 0, 1, 2, 3, 4
ACC_RESET, ACC_KEEP, ACC_IFM2 = 0, 1, 2


@dataclass(frozen=True)
class Accelerator:
    macs: int
    cores: int
    """Weight decoders (``config_r`` bits 12-13): one SWD stream each."""


@dataclass
class Kept:
    """The accumulator a CONV or DEPTHWISE kept (``ACC_FORMAT`` output DISABLE) for the next one's input KEEP."""
    total: np.ndarray[Any, Any] | None = None
    """Each OFM element's sum so far, bias not included."""
    bias: np.ndarray[Any, Any] | None = None
    by: str = ""
    """The operation that kept it."""


@dataclass(frozen=True)
class _Kernel:
    ofm_shape: tuple[int, int, int]
    ifm_shape: tuple[int, int, int]
    kernel: tuple[int, int]
    stride: tuple[int, int]
    dilation: tuple[int, int]
    pad: tuple[int, int, int, int]
    part_kernel: bool


def _accumulator(regs: U85Registers, kept: bool = False) -> int:
    """The micro-block's (height, width) code, after checking the accumulator is reset and output (or, with
    ``kept``, reset or kept, and output or not)."""
    value = regs["ACC_FORMAT"]
    if bits("acc.format", value) > 1 or bits("acc.input", value) > (ACC_KEEP if kept else ACC_RESET) or \
            (bits("acc.output", value) and not kept):
        raise NotInterpreted(f"{regs.op} with ACC_FORMAT {value:#x} (a kept or IFM2 accumulator, or no output)")
    return bits("acc.microblock", value)


def _acc48(regs: U85Registers) -> bool:
    """``ACC_FORMAT`` I48 (Regor's choice for 16-bit IFMs): scale records with a 48-bit bias and a 15-bit scale."""
    return bits("acc.format", regs["ACC_FORMAT"]) == 1


def _kernel(regs: U85Registers) -> _Kernel:
    if regs["IFM_UPSCALE"]:
        raise NotInterpreted(f"{regs.op} with IFM_UPSCALE {regs['IFM_UPSCALE']}")
    s = regs["KERNEL_STRIDE"]
    if bits("kernel.decomposition", s):
        raise NotInterpreted(f"{regs.op} with 4x4 kernel decomposition")
    stride = ((bits("kernel.stride_y_lsb", s) | bits("kernel.stride_y_msb", s) << 1) + 1,
              (bits("kernel.stride_x_lsb", s) | bits("kernel.stride_x_msb", s) << 1) + 1)
    dilation = (bits("kernel.dilation_y", s) + 1, bits("kernel.dilation_x", s) + 1)
    extent = (regs["KERNEL_HEIGHT_M1"], regs["KERNEL_WIDTH_M1"])
    if extent[0] % dilation[0] or extent[1] % dilation[1]:
        raise StreamError(f"{regs.op}: the kernel's extent {extent[0] + 1}x{extent[1] + 1} does not fit its dilation")
    pad = (regs["IFM_PAD_TOP"], regs["IFM_PAD_LEFT"], regs["IFM_PAD_BOTTOM"], regs["IFM_PAD_RIGHT"])
    ofm = (regs["OFM_HEIGHT_M1"] + 1, regs["OFM_WIDTH_M1"] + 1, regs["OFM_DEPTH_M1"] + 1)
    ifm_h = (ofm[0] - 1) * stride[0] + extent[0] + 1 - pad[0] - pad[2]
    ifm_w = (ofm[1] - 1) * stride[1] + extent[1] + 1 - pad[1] - pad[3]
    if ifm_h < 1 or ifm_w < 1:
        raise StreamError(f"{regs.op}: the padding ({pad}) covers the whole input window")
    return _Kernel(ofm, (ifm_h, ifm_w, regs["IFM_DEPTH_M1"] + 1),
                   (extent[0] // dilation[0] + 1, extent[1] // dilation[1] + 1), stride, dilation, pad, bool(bits("kernel.weight_order", s)))


def _windows(k: _Kernel, padded: np.ndarray[Any, Any]) -> list[tuple[int, int, np.ndarray[Any, Any]]]:
    oh, ow, _ = k.ofm_shape
    (sy, sx), (dy, dx) = k.stride, k.dilation
    return [(ky, kx, padded[ky * dy:ky * dy + (oh - 1) * sy + 1:sy, kx * dx:kx * dx + (ow - 1) * sx + 1:sx, :])
            for ky in range(k.kernel[0]) for kx in range(k.kernel[1])]


def _ifm(regs: U85Registers, memory: Memory, chains: Chains, k: _Kernel) -> tuple[Map, np.ndarray[Any, Any]]:
    ifm = ifm_map(regs)
    if ifm.storage not in (0, 2):
        raise NotInterpreted(f"{regs.op} with a scalar IFM")
    return ifm, reader(regs, memory, chains, ifm)(*k.ifm_shape) - regs["IFM_ZERO_POINT"]


def _layout(regs: U85Registers, acc: Accelerator, k: _Kernel, depthwise: bool, ifm_bits: int) -> w85.Layout:
    fmt = regs["WEIGHT_FORMAT"]
    if fmt & ~0x11:
        raise StreamError(f"{regs.op}: NPU_SET_WEIGHT_FORMAT {fmt:#x} has reserved bits set")
    sparse = bool(bits("weights.sparsity", fmt))
    h, w = _MICROBLOCKS.get(_accumulator(regs, kept=True), (0, 0))
    if not h:
        raise StreamError(f"{regs.op}: ACC_FORMAT micro-block {_accumulator(regs, kept=True)} is reserved")
    ublock_depth = acc.macs // 8 // (h * w)
    traversal = w85.DEPTHWISE if depthwise else w85.PART_KERNEL if k.part_kernel else w85.DEPTH_FIRST
    if traversal == w85.PART_KERNEL:
        ifm_block = 16
    elif ifm_bits == 32 or (acc.macs in (128, 256) and ublock_depth == 16 and not sparse):
        ifm_block = 32
    elif sparse and ifm_bits == 8:
        ifm_block = 128
    else:
        ifm_block = 64
    oc = k.ofm_shape[2]
    return w85.Layout(oc, k.kernel[0], k.kernel[1], 1 if depthwise else k.ifm_shape[2],
                      min(regs["OFM_BLK_DEPTH_M1"] + 1, oc), ifm_block, ublock_depth, traversal, ifm_bits, k.stride,
                      k.dilation, sparse, acc.cores, acc.macs)


def _weights(regs: U85Registers, memory: Memory, layout: w85.Layout, decoder: Decoder) -> np.ndarray[Any, Any]:
    fwd = bool(bits("weights.format", regs["WEIGHT_FORMAT"]))
    if fwd and layout.traversal == w85.DEPTHWISE:
        raise StreamError(f"{regs.op}: depthwise weights in the FWD format, which Regor never writes")
    orders = w85.brick_order(layout, fwd)
    for name in _STREAMS[len(orders):]:
        if regs.values.get(f"{name}_LENGTH", 0):
            raise StreamError(f"{regs.op}: NPU_SET_{name}_LENGTH is set, but this op's weights are {len(orders)} stream(s)")
    region = regs["WEIGHT_REGION"] & 7
    streams = tuple(memory.read(region, regs.address(f"{name}_BASE"), regs.address(f"{name}_LENGTH"),
                                f"{regs.op}'s weight stream {k}") for k, name in enumerate(_STREAMS[:len(orders)]))
    key = (streams, layout, fwd)
    if (kept := _kept.get(key)) is not None:
        _kept.move_to_end(key)
        return kept
    values = [w85.fwd_values(data, order.size, f"{regs.op}'s weight stream {k}") if fwd
              else decode_stream(data, f"{regs.op}'s weight stream {k}", decoder)
              for k, (data, order) in enumerate(zip(streams, orders, strict=True))]
    shape = (layout.ofm_depth, layout.kernel_h, layout.kernel_w, layout.ifm_depth)
    weights = w85.scatter(values, orders, shape, regs.op)
    weights.flags.writeable = False
    _kept[key] = weights
    while sum(w.nbytes for w in _kept.values()) > _KEPT_BYTES and len(_kept) > 1:
        _kept.popitem(last=False)
    return weights


def _constants(regs: U85Registers, memory: Memory, acc: Accelerator, decoder: Decoder, k: _Kernel, ifm_bits: int,
               depthwise: bool) -> tuple[np.ndarray[Any, Any], ScaleRecords]:
    """The op's OHWI weights (every core's streams, SWD or FWD) and its per-channel scale records (one stream)."""
    if ifm_bits not in (8, 16) or (ifm_bits == 16) != _acc48(regs):
        raise NotInterpreted(f"{regs.op} from a {ifm_bits}-bit IFM with ACC_FORMAT {regs['ACC_FORMAT']:#x}")
    ic, oc = k.ifm_shape[2], k.ofm_shape[2]
    if depthwise and ic != oc:
        raise NotInterpreted(f"{regs.op} from {ic} to {oc} channels (a depth multiplier)")
    weights = _weights(regs, memory, _layout(regs, acc, k, depthwise, ifm_bits), decoder)
    scale_data = memory.read(regs["SCALE_REGION"] & 7, regs.address("SCALE_BASE"), regs.address("SCALE_LENGTH"),
                             f"{regs.op}'s scale stream")
    return weights, w85.scale_records(scale_data, oc, _acc48(regs), regs.op)


def _check_b64(regs: U85Registers, ofm: Map, records: ScaleRecords) -> None:
    """A 64-bit OFM holds the 48-bit accumulator itself, for the null pools that rescale it: Regor writes it signed,
    in memory, with every channel's scale 1, shift 0, zero point 0 and no clamp (TOSA's CONV2D's int48 result)."""
    if ofm.precision.bits != 64:
        return
    if not _acc48(regs):
        raise StreamError(f"{regs.op}: a 64-bit OFM with ACC_FORMAT {regs['ACC_FORMAT']:#x} (not the 48-bit accumulator)")
    clip_none = bits("act.clip_range", regs["ACTIVATION"])
    if (records.scale != 1).any() or records.shift.any() or regs["OFM_ZERO_POINT"] or not clip_none or \
            bits("act.function", regs["ACTIVATION"]) or not ofm.precision.signed or ofm.storage != TILE2X2 or \
            ofm.transpose != "HWC" or ofm.reverse:
        raise NotInterpreted(f"{regs.op} into a 64-bit OFM unsigned, chained, transposed or reversed, or with a scale, "
                             "zero point or activation (Regor writes its 48-bit accumulator so)")


def conv_constants(regs: U85Registers, memory: Memory, acc: Accelerator, decoder: Decoder, *,
                   depthwise: bool = False) -> OpConstants:
    """What a CONV or DEPTHWISE reads besides its IFM, read through its registers as :func:`conv` reads it;
    its IFM is not read (it may be a chaining buffer no operation filled in this mode)."""
    k = _kernel(regs)
    ofm, global_scale = ofm_map(regs, b64=True)
    if global_scale:
        raise NotInterpreted(f"{regs.op} with a global OFM scale")
    weights, records = _constants(regs, memory, acc, decoder, k, ifm_map(regs).precision.bits, depthwise)
    _check_b64(regs, ofm, records)
    return OpConstants(regs.op, depthwise, weights, records, ofm.precision.bits)


def conv(regs: U85Registers, memory: Memory, chains: Chains, acc: Accelerator, decoder: Decoder,
         *, depthwise: bool = False, kept: Kept | None = None) -> None:
    k = _kernel(regs)
    kept = Kept() if kept is None else kept
    value = regs["ACC_FORMAT"]
    keep, output = bits("acc.input", value) == ACC_KEEP, not bits("acc.output", value)
    ofm, global_scale = ofm_map(regs, b64=True)
    if global_scale:
        raise NotInterpreted(f"{regs.op} with a global OFM scale")
    ifm, values = _ifm(regs, memory, chains, k)
    weights, records = _constants(regs, memory, acc, decoder, k, ifm.precision.bits, depthwise)
    _check_b64(regs, ofm, records)
    oh, ow, oc = k.ofm_shape
    ic = k.ifm_shape[2]
    top, left, bottom, right = k.pad
    padded = np.pad(values, ((top, bottom), (left, right), (0, 0)))
    total = np.zeros((oh, ow, oc), dtype=np.int64)
    for ky, kx, window in _windows(k, padded):
        if depthwise:
            total += window * weights[:, ky, kx, 0]
        else:
            total += window.reshape(oh * ow, ic).dot(weights[:, ky, kx, :].T).reshape(oh, ow, oc)
    if keep:
        if kept.total is None or kept.bias is None:
            raise StreamError(f"{regs.op} adds to a kept accumulator (ACC_FORMAT {value:#x}), but none was kept")
        if kept.total.shape != total.shape:
            raise NotInterpreted(f"{regs.op} adding a {'x'.join(map(str, total.shape))} OFM to the accumulator "
                                 f"{kept.by} kept, {'x'.join(map(str, kept.total.shape))}")
        if not np.array_equal(kept.bias, records.bias):
            raise NotInterpreted(f"{regs.op}: its bias differs from that of {kept.by}, whose accumulator it adds to "
                                 "(where the bias enters a kept accumulator is not settled)")
        total += kept.total
    kept.total = kept.bias = None
    if not output:
        if ofm.storage != NONE_STORAGE:
            raise NotInterpreted(f"{regs.op} keeps its accumulator (ACC_FORMAT {value:#x}) with its OFM in storage "
                                 f"{ofm.storage}")
        kept.total, kept.bias, kept.by = total, records.bias, regs.op
        return
    total += records.bias
    _, _, round_mode = ofm_scale(regs)
    out = stage(total, records.scale, records.shift, round_mode, regs["OFM_ZERO_POINT"],
                activation(regs, memory, ofm.dtype), ofm.dtype, regs.op, acc_bits=48 if _acc48(regs) else 32)
    write_ofm(memory, chains, ofm, out, regs.op)


def pool(regs: U85Registers, memory: Memory, chains: Chains, mode: int) -> None:
    if mode == REDUCE_SUM:
        _reduce_sum(regs, memory, chains)
        return
    if mode == NONE:
        _restore(regs, memory, chains)
        return
    if mode not in (MAX, AVERAGE, SUM):
        name = POOL_MODES[mode] if mode < len(POOL_MODES) else str(mode)
        raise NotInterpreted(f"POOL {name}")
    _accumulator(regs)
    k = _kernel(regs)
    ofm, global_scale = ofm_map(regs)
    if not global_scale:
        raise NotInterpreted(f"{regs.op} with per-channel scales")
    if k.dilation != (1, 1) or k.ifm_shape[2] != k.ofm_shape[2]:
        raise NotInterpreted(f"{regs.op} with dilation {k.dilation}, from {k.ifm_shape[2]} to {k.ofm_shape[2]} channels")
    if mode == SUM and any(k.pad):
        raise NotInterpreted(f"POOL SUM with padding {k.pad}")
    ifm, values = _ifm(regs, memory, chains, k)
    if ifm.precision.bits == 32 or _acc48(regs):
        raise NotInterpreted(f"{regs.op} from a {ifm.precision.bits}-bit IFM to a {ofm.precision.bits}-bit OFM, "
                             f"ACC_FORMAT {regs['ACC_FORMAT']:#x}")
    top, left, bottom, right = k.pad
    if any(k.pad):  # MAX: a padded tap is below every value, so no window's maximum is one; AVERAGE adds 0
        low = np.iinfo(np.int64).min if mode == MAX else 0
        values = np.pad(values, ((top, bottom), (left, right), (0, 0)), constant_values=low)
    taps = [w for _, _, w in _windows(k, values)]
    total = np.maximum.reduce(taps) if mode == MAX else np.add.reduce(taps)
    scale, shift, round_mode = ofm_scale(regs)
    if any(k.pad):  # the taps inside the IFM: the padding is left out of an average too
        inside = np.pad(np.ones((*k.ifm_shape[:2], 1), dtype=np.int64), ((top, bottom), (left, right), (0, 0)))
        count: Any = np.add.reduce([w for _, _, w in _windows(k, inside)])
    else:
        count = k.kernel[0] * k.kernel[1]
    if mode == AVERAGE and k.kernel != (1, 1):
        if (scale, shift) != (1, 0):
            raise NotInterpreted(f"POOL AVERAGE of {k.kernel} taps with OFM_SCALE {scale:#x} shift {shift}")
        if ((total < 0) & (2 * (total % count) == count)).any():
            raise NotInterpreted(f"{regs.op}: an AVERAGE of a negative sum exactly between two values "
                                 "(the hardware's tie direction is not settled)")
        total = (2 * total + count) // (2 * count)
    out = stage(total, np.asarray(scale), np.asarray(shift), round_mode, regs["OFM_ZERO_POINT"],
                activation(regs, memory, ofm.dtype), ofm.dtype, regs.op)
    write_ofm(memory, chains, ofm, out, regs.op)


def _reduce_sum(regs: U85Registers, memory: Memory, chains: Chains) -> None:
    """Each position's channels summed (less the IFM zero point) into a one-channel OFM, from and into 8- or 32-bit maps."""
    _accumulator(regs)
    k = _kernel(regs)
    ofm, global_scale = ofm_map(regs)
    if k.kernel != (1, 1) or k.stride != (1, 1) or any(k.pad) or k.ofm_shape[2] != 1 or not global_scale:
        raise NotInterpreted(f"POOL REDUCE_SUM with kernel {k.kernel}, stride {k.stride}, padding {k.pad} into "
                             f"{k.ofm_shape[2]} channels (a 1x1 sum into one channel, global scale, is modelled)")
    ifm, values = _ifm(regs, memory, chains, k)
    if ifm.precision.bits == 16 or ofm.precision.bits == 16:
        raise NotInterpreted(f"{regs.op} with 16-bit maps")
    scale, shift, round_mode = ofm_scale(regs)
    out = stage(values.sum(axis=2, keepdims=True), np.asarray(scale), np.asarray(shift), round_mode,
                regs["OFM_ZERO_POINT"], activation(regs, memory, ofm.dtype), ofm.dtype, regs.op)
    write_ofm(memory, chains, ofm, out, regs.op)


def _restore(regs: U85Registers, memory: Memory, chains: Chains) -> None:
    """POOL NONE with the accumulator from IFM2 (``ACC_FORMAT`` input IFM2): Regor's null pool, the output stage
    of a 32-bit map (a transposed convolution's phases, a rescale, a copy or transpose of 32-bit values) into the
    32-bit accumulator, or of a 64-bit one (a 16-bit convolution's 48-bit accumulator, which two RESCALEs read)
    into the 48-bit accumulator, whose scale records hold a 48-bit bias and a 15-bit scale. Its IFM is a dummy
    8-bit map the operation does not read; each IFM2 value less its zero point is the accumulator, plus the
    channel's bias where the scale is per channel."""
    value = regs["ACC_FORMAT"]
    if bits("acc.input", value) != ACC_IFM2 or bits("acc.output", value):
        raise NotInterpreted(f"POOL NONE with ACC_FORMAT {value:#x} (the accumulator from IFM2 is modelled)")
    k = _kernel(regs)
    if k.kernel != (1, 1) or k.stride != (1, 1) or any(k.pad):
        raise StreamError(f"{regs.op}: a null pool with kernel {k.kernel}, stride {k.stride}, padding {k.pad}")
    ofm, global_scale = ofm_map(regs)
    ifm2 = ifm_map(regs, "IFM2", b64=True)
    acc48 = _acc48(regs)
    if bits("acc.format", value) > 1 or ifm2.precision.bits != (64 if acc48 else 32) or ifm2.storage not in (0, 2):
        raise StreamError(f"{regs.op}: the accumulator (ACC_FORMAT {value:#x}) restored from a "
                          f"{ifm2.precision.bits}-bit IFM2")
    acc = reader(regs, memory, chains, ifm2)(*k.ofm_shape) - regs["IFM2_ZERO_POINT"]
    if global_scale:
        scale, shift, round_mode = ofm_scale(regs)
        if acc48 and scale >> 15:  # as an elementwise operation's (ops_elementwise.py)
            raise NotInterpreted(f"{regs.op}: the 48-bit accumulator with OFM_SCALE {scale:#x} (a scale of more than "
                                 "15 bits on it is not settled)")
        records = ScaleRecords(np.zeros(1, dtype=np.int64), np.asarray([scale]), np.asarray([shift]))
    else:
        _, _, round_mode = ofm_scale(regs)
        data = memory.read(regs["SCALE_REGION"] & 7, regs.address("SCALE_BASE"), regs.address("SCALE_LENGTH"),
                           f"{regs.op}'s scale stream")
        records = w85.scale_records(data, k.ofm_shape[2], acc48, regs.op)
    out = stage(acc + records.bias, records.scale, records.shift, round_mode, regs["OFM_ZERO_POINT"],
                activation(regs, memory, ofm.dtype), ofm.dtype, regs.op, acc_bits=48 if acc48 else 32)
    write_ofm(memory, chains, ofm, out, regs.op)


def shapes(regs: U85Registers) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
    """The (OFM, IFM) shapes a CONV, DEPTHWISE or POOL reads from its kernel registers, as it reads them."""
    k = _kernel(regs)
    return k.ofm_shape, k.ifm_shape


def weight_layout(regs: U85Registers, acc: Accelerator, *, depthwise: bool) -> w85.Layout:
    """The layout of a CONV's or DEPTHWISE's weight streams, as :func:`conv` reads them."""
    return _layout(regs, acc, _kernel(regs), depthwise, ifm_map(regs).precision.bits)
