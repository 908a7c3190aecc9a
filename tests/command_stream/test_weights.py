"""The weight and scale streams, against Vela's own encoders (``mlw_codec.reorder_encode``, ``encode_bias``)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from zoo.registry.command_stream import StreamError
from zoo.registry.command_stream.decoder import Decoder
from zoo.registry.command_stream.weights import (
    WeightLayout,
    conv_weights,
    decode_stream,
    scale_records,
    weights_ohwi,
)

# Shapes that cross every block boundary of the brick order: OFM blocks and micro-blocks, the
# 16/32-deep IFM blocks, part-kernel element padding, 8x8 sub-kernels (10x9 with dilation 1 and 2).
SHAPES = [(1, 1, 1, 1), (3, 3, 3, 5), (9, 1, 2, 20), (17, 3, 1, 33), (10, 1, 1, 64), (4, 10, 9, 3)]


def test_brick_order_inverts_reorder_encode() -> None:
    """Every combination of block depth, traversal, IFM width, micro-block and dilation on SHAPES
    (192 streams): decoded and put back, each is the array Vela encoded."""
    from ethosu import mlw_codec

    rng = np.random.default_rng(0)
    for shape, block, part_kernel, bits, ublock, dilation in itertools.product(
            SHAPES, [8, 16], [False, True], [8, 16], [8, 4], [1, 2]):
        w = rng.integers(-255, 256, size=shape).astype(np.int16)
        decomp = 8 // dilation
        encoded, _ = mlw_codec.reorder_encode(8, ublock, w, block, False, part_kernel, bits, decomp, decomp)
        layout = WeightLayout(ofm_depth=shape[0], kernel_h=shape[1], kernel_w=shape[2], ifm_depth=shape[3],
                              ofm_block_depth=block, depthwise=False, part_kernel=part_kernel, ifm_bits=bits,
                              decomp_h=decomp, decomp_w=decomp, ofm_ublock=ublock)
        # Well-formed streams from Vela's own encoder: decoded in-process (decode_stream forks, for untrusted ones).
        values = np.asarray(mlw_codec.decode(encoded), dtype=np.int64)
        got = weights_ohwi(values, layout, "test")
        assert np.array_equal(got, w), (shape, block, part_kernel, bits, ublock, dilation)


def test_a_convolutions_weights_are_scattered_once_and_kept_read_only() -> None:
    """The next sample's convolution gets the kept OHWI array of the same stream and layout without
    decoding again; another layout of the same bytes is scattered afresh."""
    from ethosu import mlw_codec

    w = np.arange(-60, 60, dtype=np.int16).reshape(10, 1, 3, 4)
    encoded = bytes(mlw_codec.reorder_encode(8, 8, w, 16, False, False, 8, 8, 8)[0])
    layout = WeightLayout(10, 1, 3, 4, ofm_block_depth=16, depthwise=False, part_kernel=False, ifm_bits=8,
                          decomp_h=8, decomp_w=8)

    class Counting(Decoder):
        asked = 0

        def decode(self, data: bytes) -> tuple[bytes, str | None]:
            Counting.asked += 1
            return super().decode(data)

    with Counting() as decoder:
        first = conv_weights(encoded, layout, "CONV", decoder)
        again = conv_weights(bytes(bytearray(encoded)), layout, "CONV", decoder)
        assert again is first and Counting.asked == 1 and np.array_equal(first, w)
        assert not first.flags.writeable
        other = conv_weights(encoded, WeightLayout(10, 1, 3, 4, ofm_block_depth=8, depthwise=False, part_kernel=False,
                                                   ifm_bits=8, decomp_h=8, decomp_w=8), "CONV", decoder)
        assert other is not first and Counting.asked == 2


def test_a_stream_for_another_shape_is_refused() -> None:
    from ethosu import mlw_codec

    w = np.arange(-40, 40, dtype=np.int16).reshape(20, 1, 1, 4)
    encoded, _ = mlw_codec.reorder_encode(8, 8, w, 16, False, False, 8, 8, 8)
    # IFM depth 40 where the stream holds 4: depth-first order pads the IFM to blocks of 32, so 64 per OFM channel.
    layout = WeightLayout(20, 1, 1, 40, ofm_block_depth=16, depthwise=False, part_kernel=False, ifm_bits=8,
                          decomp_h=8, decomp_w=8)
    with pytest.raises(StreamError, match="decodes to 768 values, the op's shape and block depth 16 take 1536"):
        weights_ohwi(decode_stream(bytes(encoded), "CONV"), layout, "CONV")


def test_a_stream_the_codec_cannot_decode_is_an_error_not_an_exit() -> None:
    # On this input ethosu.mlw_codec.decode prints "bitbuf_getbit: underrun" and ends its process.
    with pytest.raises(StreamError, match=r"CONV at byte 0x148: the weight stream \(16 bytes\) does not decode \(bitbuf_getbit: underrun"):
        decode_stream(b"\0" * 16, "CONV at byte 0x148")


def test_one_decoder_serves_a_run_and_outlives_a_stream_that_ends_it() -> None:
    from ethosu import mlw_codec

    with Decoder() as decoder:
        first = decoder.decode(bytes(mlw_codec.encode([4, -5])))
        pid = decoder._pid
        second = decoder.decode(bytes(mlw_codec.encode([7, 0, -255])))
        assert decoder._pid == pid != 0  # the same child served both
        values, said = decoder.decode(b"\0" * 48)
        assert values == b"" and said is not None and said.startswith("bitbuf_getbit: underrun")
        third = decoder.decode(bytes(mlw_codec.encode([255, 1])))
        assert decoder._pid not in (0, pid)  # a new child took over
    assert decoder._pid == 0
    assert [np.frombuffer(v, dtype=np.int16).tolist() for v, _ in (first, second, third)] == [[4, -5], [7, 0, -255], [255, 1]]


def test_scale_records_match_vela_encode_bias() -> None:
    from ethosu.vela.weight_compressor import encode_bias

    rng = np.random.default_rng(7)
    extremes = [(-(1 << 39), 0, 0), ((1 << 39) - 1, (1 << 32) - 1, 63), (-9355, 564340651, 38), (0, 0x80000001, 31)]
    records = extremes + [(int(b), int(s), int(h)) for b, s, h in zip(
        rng.integers(-(1 << 39), 1 << 39, 13), rng.integers(0, 1 << 32, 13, dtype=np.int64), rng.integers(0, 64, 13),
        strict=True)]
    data = b"".join(bytes(encode_bias(np.int64(b), s, h)) for b, s, h in records)
    data += bytes(-len(data) % 16)
    got = scale_records(data, len(records), "CONV")
    assert got.bias.tolist() == [b for b, _, _ in records]
    assert got.scale.tolist() == [s for _, s, _ in records]
    assert got.shift.tolist() == [h for _, _, h in records]


def test_scale_streams_of_the_wrong_length_or_padding_are_refused() -> None:
    data = bytes(range(10)) * 3 + bytes(2)
    with pytest.raises(StreamError, match="the scale stream is 32 bytes, 4 channels' records take 48"):
        scale_records(data, 4, "CONV")
    with pytest.raises(StreamError, match="padding after 2 records is not zero"):
        scale_records(data, 2, "CONV")
