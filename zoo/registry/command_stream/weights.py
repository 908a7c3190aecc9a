"""The weight and scale streams of a convolution, decoded back to OHWI weights and per-channel records.

Weights: Vela compresses them with its mlw codec in the hardware's brick order;
``ethosu.mlw_codec.decode`` undoes the compression and :func:`brick_order` the order
(the inverse of ``mlw_codec.reorder_encode``, design note issue46 §3.3). Scale records
(``weight_compressor.encode_bias``): 10 bytes per output channel, a 40-bit bias, a 32-bit
unsigned scale and a 6-bit shift, then zero padding to 16 bytes.
"""

from __future__ import annotations

import functools
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from zoo.registry.command_stream.decoder import Decoder
from zoo.registry.command_stream.errors import NotInterpreted, StreamError
from zoo.registry.command_stream.limits import MAX_WEIGHT_CHUNKS

__all__ = ["ScaleRecords", "WeightLayout", "brick_count", "brick_order", "conv_weights", "decode_stream", "scale_records", "weights_ohwi"]

RECORD = 10
_KEPT_BYTES = 256 << 20


@dataclass(frozen=True)
class ScaleRecords:
    bias: np.ndarray[Any, Any]
    scale: np.ndarray[Any, Any]
    shift: np.ndarray[Any, Any]


def scale_records(data: bytes, channels: int, what: str) -> ScaleRecords:
    """The first ``channels`` records of a scale stream; the stream must be exactly their padded length."""
    need = -(-channels * RECORD // 16) * 16
    if len(data) != need:
        raise StreamError(f"{what}: the scale stream is {len(data)} bytes, {channels} channels' records take {need}")
    if any(data[channels * RECORD:]):
        raise StreamError(f"{what}: the scale stream's padding after {channels} records is not zero")
    raw = np.frombuffer(data[:channels * RECORD], dtype=np.uint8).reshape(channels, RECORD).astype(np.int64)
    bias = sum(raw[:, k] << (8 * k) for k in range(5))
    bias = np.where(bias >= 1 << 39, bias - (1 << 40), bias)
    scale = sum(raw[:, 5 + k] << (8 * k) for k in range(4))
    if (raw[:, 9] & 0xC0).any():
        raise StreamError(f"{what}: a scale record's shift byte has bits 6-7 set")
    return ScaleRecords(np.asarray(bias, dtype=np.int64), np.asarray(scale, dtype=np.int64), raw[:, 9] & 0x3F)


@dataclass(frozen=True)
class WeightLayout:
    """What fixes the brick order: the op's shape and the accelerator's micro-blocks."""

    ofm_depth: int
    kernel_h: int
    kernel_w: int
    ifm_depth: int
    ofm_block_depth: int
    depthwise: bool
    part_kernel: bool
    ifm_bits: int
    decomp_h: int
    decomp_w: int
    ifm_ublock: int = 8
    ofm_ublock: int = 8


@functools.lru_cache(maxsize=256)
def brick_order(layout: WeightLayout) -> np.ndarray[Any, Any]:
    """For each value of the decoded stream, the flat OHWI index it belongs to, or -1 for a zero pad.

    The stream walks OFM blocks, then IFM blocks (32 deep, 16 in part-kernel order or for 16-bit
    IFMs; not clipped in depth-first order), then 8x8 sub-kernels; within one, the six loops
    below, outermost first. Part-kernel order puts the IFM micro-blocks outside the kernel
    elements, depth-first inside."""
    o_depth, kh, kw, i_depth = layout.ofm_depth, layout.kernel_h, layout.kernel_w, layout.ifm_depth
    if layout.depthwise:
        i_depth = 1
    iu, ou = layout.ifm_ublock, layout.ofm_ublock
    ifm_block_depth = 16 if (layout.part_kernel or layout.ifm_bits == 16) else 32
    chunks = []
    for ofm_block_z in range(0, o_depth, layout.ofm_block_depth):
        clipped_ofm = min(layout.ofm_block_depth, o_depth - ofm_block_z)
        for ifm_block_z in range(0, 1 if layout.depthwise else i_depth, ifm_block_depth):
            if layout.depthwise:
                clipped_ifm = iu
            elif layout.part_kernel:
                clipped_ifm = min(ifm_block_depth, i_depth - ifm_block_z)
            else:
                clipped_ifm = ifm_block_depth
            for sy in range(0, kh, layout.decomp_h):
                sub_h = min(kh - sy, layout.decomp_h)
                for sx in range(0, kw, layout.decomp_w):
                    sub_w = min(kw - sx, layout.decomp_w)
                    elems = sub_w * sub_h
                    if layout.part_kernel:
                        step = 2 if layout.ifm_bits == 16 else 4
                        elems = -(-elems // step) * step
                    elif layout.depthwise:
                        elems = -(-elems // 4) * 4
                    outer = clipped_ifm if layout.part_kernel else 1
                    inner = 1 if layout.part_kernel else clipped_ifm
                    iuo, oub, e, iui, oz, iz = np.ix_(
                        np.arange(0, outer, iu), np.arange(0, clipped_ofm, ou), np.arange(elems),
                        np.arange(0, inner, iu), np.arange(ou), np.arange(1 if layout.depthwise else iu))
                    kx, ky = e % sub_w, e // sub_w
                    ifm_z = np.zeros_like(iz) if layout.depthwise else ifm_block_z + iui + iuo + iz
                    ofm_z = ofm_block_z + oub + oz
                    index = ((ofm_z * kh + sy + ky) * kw + sx + kx) * i_depth + ifm_z
                    valid = (ofm_z < o_depth) & (ifm_z < i_depth) & (ky < sub_h)
                    chunks.append(np.where(valid, index, -1).ravel())
    return np.concatenate(chunks).astype(np.int64) if chunks else np.zeros(0, dtype=np.int64)


def _parts(total: int, step: int) -> list[tuple[int, int]]:
    """(size, how many) of the blocks of ``step`` that cover ``total``, the last one clipped."""
    return [(step, total // step)] + ([(total % step, 1)] if total % step else [])


def brick_count(layout: WeightLayout) -> int:
    """``brick_order(layout).size`` without listing it: blocks of one clipped size take the same count."""
    iu, ou = layout.ifm_ublock, layout.ofm_ublock
    ifm_block_depth = 16 if (layout.part_kernel or layout.ifm_bits == 16) else 32
    if layout.depthwise:
        ifm_blocks = [(iu, 1)]
    elif layout.part_kernel:
        ifm_blocks = _parts(layout.ifm_depth, ifm_block_depth)
    else:
        ifm_blocks = [(ifm_block_depth, -(-layout.ifm_depth // ifm_block_depth))]
    count = 0
    for clipped_ofm, n_ofm in _parts(layout.ofm_depth, layout.ofm_block_depth):
        for clipped_ifm, n_ifm in ifm_blocks:
            for sub_h, n_h in _parts(layout.kernel_h, layout.decomp_h):
                for sub_w, n_w in _parts(layout.kernel_w, layout.decomp_w):
                    elems = sub_h * sub_w
                    if layout.part_kernel:
                        step = 2 if layout.ifm_bits == 16 else 4
                        elems = -(-elems // step) * step
                    elif layout.depthwise:
                        elems = -(-elems // 4) * 4
                    outer, inner = (clipped_ifm, 1) if layout.part_kernel else (1, clipped_ifm)
                    per = -(-outer // iu) * -(-clipped_ofm // ou) * elems * -(-inner // iu) * ou * (1 if layout.depthwise else iu)
                    count += n_ofm * n_ifm * n_h * n_w * per
    return count


def decode_stream(data: bytes, what: str, decoder: Decoder | None = None) -> np.ndarray[Any, Any]:
    """The stream's values, decoded by ``mlw_codec.decode`` (``decoder``'s child, or one of its own);
    a stream it cannot decode is an error naming ``what``."""
    if decoder is None:
        with Decoder() as own:
            return decode_stream(data, what, own)
    values, said = decoder.decode(data)
    if said is not None:
        raise StreamError(f"{what}: the weight stream ({len(data)} bytes) does not decode ({said})")
    return np.frombuffer(values, dtype=np.int16).astype(np.int64)


def weights_ohwi(values: np.ndarray[Any, Any], layout: WeightLayout, what: str) -> np.ndarray[Any, Any]:
    """Scatter a decoded stream into (O, H, W, I) (I = 1 for depthwise); every position once, every pad zero.
    The counts come first: the brick order of a huge kernel takes minutes to list."""
    i_depth = 1 if layout.depthwise else layout.ifm_depth
    count = brick_count(layout)
    if values.size != count:
        raise StreamError(f"{what}: the weight stream decodes to {values.size} values, the op's shape and block "
                          f"depth {layout.ofm_block_depth} take {count}")
    ifm_block = 16 if (layout.part_kernel or layout.ifm_bits == 16) else 32
    chunks = (-(-layout.ofm_depth // layout.ofm_block_depth) * (1 if layout.depthwise else -(-i_depth // ifm_block))
              * -(-layout.kernel_h // layout.decomp_h) * -(-layout.kernel_w // layout.decomp_w))
    if chunks > MAX_WEIGHT_CHUNKS:
        raise NotInterpreted(f"{what}: a brick order of {chunks:,} blocks and sub-kernels, more than the "
                             f"interpreter's limit of {MAX_WEIGHT_CHUNKS:,}")
    order = brick_order(layout)
    pads = order < 0
    if values[pads].any():
        raise StreamError(f"{what}: the weight stream has a nonzero value in a padding slot")
    flat = np.zeros(layout.ofm_depth * layout.kernel_h * layout.kernel_w * i_depth, dtype=np.int64)
    flat[order[~pads]] = values[~pads]
    return flat.reshape(layout.ofm_depth, layout.kernel_h, layout.kernel_w, i_depth)


def conv_weights(data: bytes, layout: WeightLayout, what: str, decoder: Decoder | None = None) -> np.ndarray[Any, Any]:
    """:func:`weights_ohwi` of the decoded stream, kept (read-only) by the stream's bytes and layout
    for the next sample: scattering the values was half of a run's time."""
    key = (data, layout)
    if (kept := _kept.arrays.get(key)) is not None:
        _kept.arrays.move_to_end(key)
        return kept
    weights = weights_ohwi(decode_stream(data, what, decoder), layout, what)
    weights.flags.writeable = False
    _kept.arrays[key] = weights
    _kept.nbytes += weights.nbytes
    while _kept.nbytes > _KEPT_BYTES and len(_kept.arrays) > 1:
        _kept.nbytes -= _kept.arrays.popitem(last=False)[1].nbytes
    return weights


@dataclass
class _Kept:
    arrays: OrderedDict[tuple[bytes, WeightLayout], np.ndarray[Any, Any]] = field(default_factory=OrderedDict)
    nbytes: int = 0


_kept = _Kept()
