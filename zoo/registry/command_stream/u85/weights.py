"""The U85's weight and scale streams, decoded back to OHWI weights and per-channel records.

Learnt from Vela 5.1.0's Regor (``ethos_u85_weight_encoder.cpp``, ``mlw_encode_fwd.cpp``): the
encoder is the specification of what this undoes.

**Brick order** (:func:`brick_order`): the stream walks OFM blocks (``OFM_BLK_DEPTH``); within each,
IFM blocks, forwards for even OFM blocks and backwards for odd ones; then 8x8 sub-kernels, columns
outside rows; IFM micro-blocks; OFM micro-blocks (the depth of ``ACC_FORMAT``'s micro-block); then
the kernel positions, by stride phase for part-kernel-first and depthwise weights, each row of a
phase right to left when it is odd; then per position IFM groups of 8 (16 when 2:4 sparse), OFM
groups of 4 (one per core, in turn), 4 OFM channels and the group's IFM channels. A sub-kernel's
positions are padded with zeros to a multiple of 5 (part-kernel-first, 8-bit), 10 (part-kernel-first
16-bit or sparse, and depthwise), or 1; depthwise ones also after every tenth position and at the end, by 2
positions' worth on the U85-512 and 6 on larger ones, and by 2 from a 16-bit IFM on the U85-128 and U85-256
(ops-depthwise at a16w8 on u85-256: 96 values for a 3x3 kernel where 8-bit IFMs take 80). On more than one
core, SWD weights are one stream per core (``WEIGHT``, ``WEIGHT1``..3), each holding its cores' OFM
groups; FWD weights are one stream, the cores' blocks interleaved.

**FWD** (:func:`fwd_values`): a 32-byte header, read from bit 0 of byte 0 up: a raw flag, a small-palette
flag, 102 zero bits, an int8 zero adjustment and 16 palette entries of 9 bits (magnitude, then the sign in
the lowest bit); then one value per weight: 8 bits (raw, less the adjustment), or a 2-bit (small palette)
or 4-bit palette index; zero padding to a multiple of 32 bytes. The count is the brick order's.

**SWD** streams are the U55's mlw compression (``ethosu.mlw_codec.decode``, in the forked
:class:`~zoo.registry.command_stream.decoder.Decoder`), with every zero of a 2:4 sparse kernel held.

**Scale records** (:func:`scale_records`): 10 bytes per OFM channel: with a 32-bit accumulator an int32
bias, a 31-bit scale, a 6-bit shift and a zero byte; with a 48-bit one an int48 bias, a 15-bit scale, the
shift and a zero byte; padded with zero records to a multiple of 16 channels (of the micro-block depth
rounded up to 16) and to 16 bytes.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import numpy as np

from zoo.registry.command_stream.errors import NotInterpreted, StreamError
from zoo.registry.command_stream.weights import ScaleRecords

__all__ = [
    "DEPTHWISE",
    "DEPTH_FIRST",
    "PART_KERNEL",
    "Layout",
    "brick_order",
    "fwd_values",
    "scale_records",
    "scatter",
]

DEPTH_FIRST, PART_KERNEL, DEPTHWISE = "depth-first", "part-kernel-first", "depthwise"
INTERLEAVE = 4
RECORD = 10
FWD_HEADER = 32


@dataclass(frozen=True)
class Layout:
    """What fixes the brick order: the op's shape, its block and micro-block, the accelerator."""

    ofm_depth: int
    kernel_h: int
    kernel_w: int
    ifm_depth: int
    """1 for depthwise."""
    ofm_block_depth: int
    ifm_block_depth: int
    ofm_ublock_depth: int
    traversal: str
    ifm_bits: int
    stride: tuple[int, int]
    """(y, x)."""
    dilation: tuple[int, int]
    sparse: bool
    cores: int
    macs: int

    @property
    def ifm_ublock_depth(self) -> int:
        if self.traversal == PART_KERNEL:
            return 8 if self.ifm_bits == 16 and not self.sparse else self.ifm_block_depth
        return 1 if self.traversal == DEPTHWISE else self.ifm_block_depth

    @property
    def sub_kernel_round(self) -> int:
        if self.traversal == PART_KERNEL:
            return 10 if self.ifm_bits == 16 or self.sparse else 5
        return 10 if self.traversal == DEPTHWISE else 1


def _positions(layout: Layout, sub_x: int, sub_y: int, width: int, height: int) -> list[tuple[int, int]]:
    """The kernel positions (y, x) of one sub-kernel, in stream order."""
    sy, sx = layout.stride if layout.traversal != DEPTH_FIRST else (1, 1)
    out = []
    for phase_y in range(sy):
        rows = (height + sy - 1 - phase_y) // sy
        for phase_x in range(sx):
            cols = (width + sx - 1 - phase_x) // sx
            for ky in range(rows):
                for kx in range(cols):
                    x = kx if ky % 2 == 0 else cols - 1 - kx
                    out.append((sub_y + phase_y + ky * sy, sub_x + phase_x + x * sx))
    return out


def _stream(layout: Layout, core: int) -> np.ndarray[Any, Any]:
    depthwise = layout.traversal == DEPTHWISE
    o_depth, kh, kw = layout.ofm_depth, layout.kernel_h, layout.kernel_w
    i_depth = 1 if depthwise else layout.ifm_depth
    iub, oub = layout.ifm_ublock_depth, layout.ofm_ublock_depth
    step = 1 if depthwise else (16 if layout.sparse else 8)
    decomp_x, decomp_y = 8 // layout.dilation[1], 8 // layout.dilation[0]
    dw_pad = 0 if layout.ifm_bits != 16 and layout.macs <= 256 else 2 if layout.macs <= 512 else 6
    ofm_groups = np.arange(core * INTERLEAVE, oub, INTERLEAVE * layout.cores)
    inner = np.arange(INTERLEAVE)
    chunks: list[np.ndarray[Any, Any]] = []
    pad = functools.partial(np.full, fill_value=-1, dtype=np.int64)
    ifm_blocks = list(range(0, 1 if depthwise else i_depth, layout.ifm_block_depth))
    for n, ofm_block in enumerate(range(0, o_depth, layout.ofm_block_depth)):
        clipped_ofm = min(layout.ofm_block_depth, o_depth - ofm_block)
        for ifm_block in ifm_blocks if n % 2 == 0 else ifm_blocks[::-1]:
            clipped_ifm = 1 if depthwise else min(layout.ifm_block_depth, i_depth - ifm_block)
            for sub_x in range(0, kw, decomp_x):
                width = min(kw - sub_x, decomp_x)
                for sub_y in range(0, kh, decomp_y):
                    height = min(kh - sub_y, decomp_y)
                    positions = _positions(layout, sub_x, sub_y, width, height)
                    rounded = -(-len(positions) // layout.sub_kernel_round) * layout.sub_kernel_round
                    for iu_outer in range(0, clipped_ifm, iub):
                        for ou_outer in range(0, clipped_ofm, oub):
                            ifm_in, og, oi, iz = np.ix_(np.arange(0, iub, step), ofm_groups, inner, np.arange(step))
                            ofm_z = ofm_block + ou_outer + og + oi
                            ifm_z = np.zeros_like(iz) if depthwise else ifm_block + iu_outer + ifm_in + iz
                            left = rounded
                            for wy, wx in positions:
                                index = ((ofm_z * kh + wy) * kw + wx) * i_depth + ifm_z
                                valid = (ofm_z < o_depth) & (ifm_z < i_depth)
                                chunks.append(np.where(valid, index, -1).ravel())
                                left -= 1
                                if depthwise and left % layout.sub_kernel_round == 0 and dw_pad:
                                    chunks.append(pad(dw_pad * oub // layout.cores))
                            if left > 0:
                                extra = dw_pad if depthwise else 0
                                chunks.append(pad((left + extra) * iub * oub // layout.cores))
    return np.concatenate(chunks) if chunks else np.zeros(0, dtype=np.int64)


@functools.lru_cache(maxsize=256)
def brick_order(layout: Layout, fwd: bool) -> tuple[np.ndarray[Any, Any], ...]:
    """Each stream's values' flat OHWI indices (O, H, W, I; I = 1 for depthwise), -1 for a zero pad:
    one stream per core for SWD, one for FWD."""
    streams = [_stream(layout, core) for core in range(layout.cores)]
    if not fwd or layout.cores == 1:
        return tuple(streams)
    block = layout.ofm_ublock_depth * layout.ifm_ublock_depth * layout.sub_kernel_round // layout.cores
    if len({s.size for s in streams}) != 1 or streams[0].size % block:
        raise NotInterpreted(f"FWD weights interleaved over {layout.cores} cores in uneven blocks")
    parts = [s.reshape(-1, block) for s in streams]
    return (np.stack(parts, axis=1).reshape(-1),)


def fwd_values(data: bytes, count: int, what: str) -> np.ndarray[Any, Any]:
    """The first ``count`` weights of an FWD stream."""
    if len(data) < FWD_HEADER:
        raise StreamError(f"{what}: the FWD weight stream is {len(data)} bytes, shorter than its 32-byte header")
    bits = np.unpackbits(np.frombuffer(data, dtype=np.uint8), bitorder="little")
    raw, small = int(bits[0]), int(bits[1])
    if bits[2:104].any():
        raise NotInterpreted(f"{what}: an FWD header with reserved bits 2-103 set")
    if raw and small:
        raise NotInterpreted(f"{what}: an FWD header with both the raw and the small-palette flag")
    weights = 8 if raw else 2 if small else 4
    need = FWD_HEADER * 8 + count * weights
    if bits.size < need:
        raise StreamError(f"{what}: the FWD weight stream holds {len(data)} bytes; {count} weights of {weights} "
                          f"bits after its header take {-(-need // 8)}")
    body = bits[FWD_HEADER * 8:need].reshape(count, weights).astype(np.int64)
    codes = (body << np.arange(weights)).sum(axis=1)
    if raw:
        adjust = int(np.packbits(bits[104:112], bitorder="little")[0].astype(np.int8))
        return np.asarray(codes.astype(np.uint8).astype(np.int8), dtype=np.int64) - adjust
    folded = (bits[112:256].reshape(16, 9).astype(np.int64) << np.arange(9)).sum(axis=1)
    palette = np.where(folded & 1, -(folded >> 1), folded >> 1)
    return np.asarray(palette[codes], dtype=np.int64)


def scatter(streams: list[np.ndarray[Any, Any]], orders: tuple[np.ndarray[Any, Any], ...], shape: tuple[int, int, int, int],
            what: str) -> np.ndarray[Any, Any]:
    """The (O, H, W, I) weights that the decoded ``streams`` hold in ``orders``; every pad must be zero."""
    flat = np.zeros(int(np.prod(shape)), dtype=np.int64)
    seen = np.zeros(flat.size, dtype=np.int64)
    for k, (values, order) in enumerate(zip(streams, orders, strict=True)):
        if values.size != order.size:
            raise StreamError(f"{what}: weight stream {k} decodes to {values.size} values, the op's shape, blocks and "
                              f"micro-block take {order.size}")
        pads = order < 0
        if values[pads].any():
            raise StreamError(f"{what}: weight stream {k} has a nonzero value in a padding slot")
        flat[order[~pads]] = values[~pads]
        seen[order[~pads]] += 1
    if (seen != 1).any():
        raise StreamError(f"{what}: the brick order does not place every weight once")
    return flat.reshape(shape)


def _little(raw: np.ndarray[Any, Any], start: int, count: int) -> np.ndarray[Any, Any]:
    """The little-endian unsigned integers in bytes ``start``..``start + count`` of each row."""
    return np.asarray((raw[:, start:start + count] << (8 * np.arange(count))).sum(axis=1), dtype=np.int64)


def scale_records(data: bytes, channels: int, acc48: bool, what: str) -> ScaleRecords:
    """The first ``channels`` records of a scale stream (the padding records after them are not read)."""
    if len(data) < channels * RECORD:
        raise StreamError(f"{what}: the scale stream is {len(data)} bytes, {channels} channels' records take "
                          f"{channels * RECORD}")
    raw = np.frombuffer(data[:channels * RECORD], dtype=np.uint8).reshape(channels, RECORD).astype(np.int64)
    bias_bytes, scale_bits = (6, 15) if acc48 else (4, 31)
    bias = _little(raw, 0, bias_bytes)
    bias = np.where(bias >= 1 << (8 * bias_bytes - 1), bias - (1 << (8 * bias_bytes)), bias)
    scale = _little(raw, bias_bytes, 8 - bias_bytes)
    top = scale >> scale_bits
    if top.any() or (raw[:, 8] & 0xC0).any() or raw[:, 9].any():
        raise StreamError(f"{what}: a scale record has a reserved bit set (scale's top bit, shift bits 6-7 or byte 9)")
    return ScaleRecords(np.asarray(bias, dtype=np.int64), np.asarray(scale, dtype=np.int64), raw[:, 8] & 0x3F)
