"""One-operation CONV programs for the modes Regor's dilated and transposed convolutions and its
int32 results use: dilation, IFM_UPSCALE ZEROS and a 32-bit OFM, each against its definition."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from tests.command_stream.programs import block, cmd0, cmd1, fm, io, payload
from zoo.registry.command_stream import NotInterpreted, run

ZEROS = 2
SCRATCH = 8192


def _conv(x: np.ndarray[Any, Any], w: np.ndarray[Any, Any], bias: np.ndarray[Any, Any], scale: int, shift: int, *,
          ofm: tuple[int, int, int], pad: tuple[int, int, int, int], dilation: int = 1, upscale: int = 0,
          ofm_bits: int = 8) -> bytes:
    """DMA the scale records and weight stream to the scratch, then one CONV into an NHWC OFM at 4096."""
    from ethosu import mlw_codec
    from ethosu.vela.weight_compressor import encode_bias

    stream, _ = mlw_codec.reorder_encode(8, 8, w.astype(np.int16), 16, False, False, 8, 8 // dilation, 8 // dilation)
    records = b"".join(bytes(encode_bias(np.int64(b), scale, shift)) for b in bias)
    records += bytes(-len(records) % 16)
    data = records + bytes(stream)
    kh, kw = w.shape[1:3]
    words = cmd0("NPU_SET_DMA0_SRC_REGION", 0) + cmd1("NPU_SET_DMA0_SRC", 0) + cmd0("NPU_SET_DMA0_DST_REGION", 1)
    words += cmd1("NPU_SET_DMA0_DST", 2048) + cmd1("NPU_SET_DMA0_LEN", len(data)) + cmd0("NPU_OP_DMA_START")
    words += fm("IFM", 0, x.shape, zero_point=-3) + cmd0("NPU_SET_IFM_UPSCALE", upscale)
    words += fm("OFM", 4096, ofm, zero_point=5, bits=ofm_bits) + block((kh, kw))
    if ofm_bits == 32:
        words += cmd0("NPU_SET_ACTIVATION_MIN", -32768) + cmd0("NPU_SET_ACTIVATION_MAX", 32767)
    words += cmd0("NPU_SET_KERNEL_HEIGHT_M1", (kh - 1) * dilation) + cmd0("NPU_SET_KERNEL_WIDTH_M1", (kw - 1) * dilation)
    words += cmd0("NPU_SET_KERNEL_STRIDE", (dilation - 1) * (1 << 3 | 1 << 4))
    for side, p in zip(("TOP", "LEFT", "BOTTOM", "RIGHT"), pad, strict=True):
        words += cmd0(f"NPU_SET_IFM_PAD_{side}", p)
    words += cmd0("NPU_SET_WEIGHT_REGION", 1) + cmd1("NPU_SET_WEIGHT_BASE", 2048 + len(records))
    words += cmd1("NPU_SET_WEIGHT_LENGTH", len(stream)) + cmd0("NPU_SET_SCALE_REGION", 1)
    words += cmd1("NPU_SET_SCALE_BASE", 2048) + cmd1("NPU_SET_SCALE_LENGTH", len(records))
    words += cmd0("NPU_SET_OFM_BLK_DEPTH_M1", 15) + cmd0("NPU_OP_DMA_WAIT") + cmd0("NPU_OP_CONV") + cmd0("NPU_OP_STOP", 0xFFFF)
    program = payload(words, weights=data, scratch=SCRATCH, inputs=[io(0, x.shape)], outputs=[io(4096, ofm, ofm_bits // 8)])
    (out,) = run(program, [x.tobytes()])
    return out


def _definition(ifm: np.ndarray[Any, Any], w: np.ndarray[Any, Any], bias: np.ndarray[Any, Any], ofm: tuple[int, int, int],
                pad: tuple[int, int, int, int], dilation: int) -> np.ndarray[Any, Any]:
    """The accumulators: ``ifm`` (zero point already subtracted) padded with zeros, taps ``dilation`` apart."""
    top, left, bottom, right = pad
    padded = np.pad(ifm, ((top, bottom), (left, right), (0, 0)))
    acc = np.zeros(ofm, dtype=np.int64)
    for y, x, o in np.ndindex(ofm):
        for ky, kx in np.ndindex(w.shape[1:3]):
            acc[y, x, o] += int((padded[y + ky * dilation, x + kx * dilation] * w[o, ky, kx].astype(np.int64)).sum())
    return acc + bias


def _natural(acc: np.ndarray[Any, Any], scale: int, shift: int, zero_point: int) -> np.ndarray[Any, Any]:
    return np.clip(((acc.astype(object) * scale + (1 << (shift - 1))) >> shift).astype(np.int64) + zero_point, -128, 127)


def test_a_dilated_conv_spreads_its_taps() -> None:
    """Regor's 3x3 convolution at dilation 2, padding 2: its weights in reorder_encode's order with 4x4 decomposition."""
    rng = np.random.default_rng(15)
    x = rng.integers(-128, 128, size=(6, 7, 5)).astype(np.int8)
    w = rng.integers(-127, 128, size=(6, 3, 3, 5))
    bias = rng.integers(-3000, 3000, size=6)
    out = _conv(x, w, bias, 1 << 30, 37, ofm=(6, 7, 6), pad=(2, 2, 2, 2), dilation=2)
    want = _natural(_definition(x.astype(np.int64) + 3, w, bias, (6, 7, 6), (2, 2, 2, 2), 2), 1 << 30, 37, 5)
    assert np.array_equal(np.frombuffer(out, np.int8).reshape(6, 7, 6), want)


def test_ifm_upscale_zeros_is_a_transposed_convolution() -> None:
    """Regor's ConvTranspose2d(kernel 2, stride 2): each IFM element at (2y, 2x) of a map twice as large, zeros
    between, a 2x2 stride-1 CONV of it padded 1 at the top and left, into a 32-bit OFM with scale 1, shift 0."""
    rng = np.random.default_rng(16)
    x = rng.integers(-128, 128, size=(3, 4, 5)).astype(np.int8)
    w = rng.integers(-127, 128, size=(6, 2, 2, 5))
    bias = rng.integers(-3000, 3000, size=6)
    out = _conv(x, w, bias, 1, 0, ofm=(6, 8, 6), pad=(1, 1, 0, 0), upscale=ZEROS, ofm_bits=32)
    upscaled = np.zeros((6, 8, 5), dtype=np.int64)
    upscaled[::2, ::2] = x.astype(np.int64) + 3
    want = _definition(upscaled, w, bias, (6, 8, 6), (1, 1, 0, 0), 1) + 5
    assert np.array_equal(np.frombuffer(out, "<i4").reshape(6, 8, 6), want)


def test_a_32_bit_ofm_keeps_the_accumulator_and_other_scales_stop_the_run() -> None:
    rng = np.random.default_rng(17)
    x = rng.integers(-128, 128, size=(4, 4, 5)).astype(np.int8)
    w = rng.integers(-127, 128, size=(6, 3, 3, 5))
    bias = rng.integers(-3000, 3000, size=6)
    out = _conv(x, w, bias, 1, 0, ofm=(4, 4, 6), pad=(1, 1, 1, 1), ofm_bits=32)
    want = _definition(x.astype(np.int64) + 3, w, bias, (4, 4, 6), (1, 1, 1, 1), 1) + 5
    assert np.array_equal(np.frombuffer(out, "<i4").reshape(4, 4, 6), want)
    with pytest.raises(NotInterpreted, match=r"CONV at byte 0x[0-9a-f]+ into a 32-bit OFM with scales other than 1, shift 0$"):
        _conv(x, w, bias, 1 << 30, 31, ofm=(4, 4, 6), pad=(1, 1, 1, 1), ofm_bits=32)
