"""Small hand-written programs through ``run``: DMA, CONV, POOL and feature-map layouts, and the refusals."""

from __future__ import annotations

import numpy as np
import pytest

from tests.command_stream.programs import NHCWB16, NHWC, block, cmd0, cmd1, fm, io, payload
from zoo.registry.command_stream import NotInterpreted, StreamError, run


def _copy(src: int, dst: int, shape: tuple[int, int, int], src_layout: int = NHWC) -> list[int]:
    """Regor's copy: a 1x1 AVERAGE pool with the global scale 0x80000001 >> 31."""
    words = fm("IFM", src, shape, src_layout) + fm("OFM", dst, shape) + block((1, 1))
    words += cmd0("NPU_SET_OFM_PRECISION", 0x8101)  # global scale
    return words + cmd1("NPU_SET_OFM_SCALE", 0x80000001, 31) + cmd0("NPU_OP_POOL", 1)


def test_dma_and_a_copy_pool() -> None:
    weights = bytes(range(32)) + bytes(range(100, 132))
    words = cmd0("NPU_SET_DMA0_SRC_REGION", 0) + cmd1("NPU_SET_DMA0_SRC", 32) + cmd0("NPU_SET_DMA0_DST_REGION", 1)
    words += cmd1("NPU_SET_DMA0_DST", 64) + cmd1("NPU_SET_DMA0_LEN", 32) + cmd0("NPU_OP_DMA_START")
    words += cmd0("NPU_OP_DMA_WAIT") + _copy(64, 128, (2, 4, 4)) + cmd0("NPU_OP_STOP", 0xFFFF)
    (out,) = run(payload(words, weights=weights, outputs=[io(128, (2, 4, 4))]), [])
    assert out == bytes(range(100, 132))


def _conv_program(x: np.ndarray, w: np.ndarray, records: bytes, stream: bytes, ofm_layout: int,
                  op: str = "NPU_OP_CONV") -> list[int]:
    h, wd, _ = x.shape
    o = w.shape[0]
    words = cmd0("NPU_SET_DMA0_SRC_REGION", 0) + cmd1("NPU_SET_DMA0_SRC", 0) + cmd0("NPU_SET_DMA0_DST_REGION", 1)
    words += cmd1("NPU_SET_DMA0_DST", 1024) + cmd1("NPU_SET_DMA0_LEN", len(records) + len(stream))
    words += cmd0("NPU_OP_DMA_START") + fm("IFM", 0, x.shape, zero_point=-3)
    words += fm("OFM", 256, (h, wd, o), ofm_layout, zero_point=5)
    words += block((3, 3), pad=1, part_kernel=op == "NPU_OP_CONV")
    words += cmd0("NPU_SET_WEIGHT_REGION", 1) + cmd1("NPU_SET_WEIGHT_BASE", 1024 + len(records))
    words += cmd1("NPU_SET_WEIGHT_LENGTH", len(stream)) + cmd0("NPU_SET_SCALE_REGION", 1)
    words += cmd1("NPU_SET_SCALE_BASE", 1024) + cmd1("NPU_SET_SCALE_LENGTH", len(records))
    words += cmd0("NPU_SET_OFM_BLK_DEPTH_M1", 15) + cmd0("NPU_OP_DMA_WAIT") + cmd0(op)
    return words + _copy(256, 768, (h, wd, o), ofm_layout) + cmd0("NPU_OP_STOP", 0xFFFF)


@pytest.mark.parametrize("ofm_layout", [NHWC, NHCWB16])
def test_a_padded_conv_against_its_definition(ofm_layout: int) -> None:
    from ethosu import mlw_codec
    from ethosu.vela.weight_compressor import encode_bias

    rng = np.random.default_rng(3)
    x = rng.integers(-128, 128, size=(5, 6, 3)).astype(np.int8)
    w = rng.integers(-127, 128, size=(20, 3, 3, 3)).astype(np.int16)
    bias = rng.integers(-5000, 5000, size=20)
    scale, shift = 1 << 30, 36
    stream, _ = mlw_codec.reorder_encode(8, 8, w, 16, False, True, 8, 8, 8)
    records = b"".join(bytes(encode_bias(np.int64(b), scale, shift)) for b in bias)
    records += bytes(-len(records) % 16)
    words = _conv_program(x, w, records, bytes(stream), ofm_layout)
    program = payload(words, weights=records + bytes(stream), scratch=2048,
                      inputs=[io(0, x.shape)], outputs=[io(768, (5, 6, 20))])
    (out,) = run(program, [x.tobytes()])
    # The definition, element by element: zero-point-corrected input, zero padding, bias, scale, round half up.
    padded = np.pad(x.astype(np.int64) + 3, ((1, 1), (1, 1), (0, 0)))
    want = np.zeros((5, 6, 20), dtype=np.int64)
    for y in range(5):
        for xx in range(6):
            for o in range(20):
                acc = int((padded[y:y + 3, xx:xx + 3, :] * w[o].astype(np.int64)).sum()) + int(bias[o])
                want[y, xx, o] = min(127, max(-128, ((acc * scale + (1 << (shift - 1))) >> shift) + 5))
    assert np.array_equal(np.frombuffer(out, dtype=np.int8).reshape(5, 6, 20), want)


def test_a_padded_depthwise_conv_against_its_definition() -> None:
    from ethosu import mlw_codec
    from ethosu.vela.weight_compressor import encode_bias

    rng = np.random.default_rng(4)
    x = rng.integers(-128, 128, size=(5, 6, 20)).astype(np.int8)
    w = rng.integers(-127, 128, size=(20, 3, 3, 1)).astype(np.int16)
    bias = rng.integers(-5000, 5000, size=20)
    scale, shift = 1 << 30, 34
    stream, _ = mlw_codec.reorder_encode(8, 8, w, 16, True, False, 8, 8, 8)
    records = b"".join(bytes(encode_bias(np.int64(b), scale, shift)) for b in bias)
    records += bytes(-len(records) % 16)
    words = _conv_program(x, w, records, bytes(stream), NHCWB16, op="NPU_OP_DEPTHWISE")
    program = payload(words, weights=records + bytes(stream), scratch=2048,
                      inputs=[io(0, x.shape)], outputs=[io(768, (5, 6, 20))])
    (out,) = run(program, [x.tobytes()])
    padded = np.pad(x.astype(np.int64) + 3, ((1, 1), (1, 1), (0, 0)))
    want = np.zeros((5, 6, 20), dtype=np.int64)
    for y in range(5):
        for xx in range(6):
            for c in range(20):
                acc = int((padded[y:y + 3, xx:xx + 3, c] * w[c, :, :, 0].astype(np.int64)).sum()) + int(bias[c])
                want[y, xx, c] = min(127, max(-128, ((acc * scale + (1 << (shift - 1))) >> shift) + 5))
    assert np.array_equal(np.frombuffer(out, dtype=np.int8).reshape(5, 6, 20), want)


def _natural(value: int, scale: int, shift: int) -> int:
    return (value * scale + (1 << (shift - 1))) >> shift


@pytest.mark.parametrize("scaled", ["IFM", "IFM2"])
def test_an_add_against_its_definition(scaled: str) -> None:
    rng = np.random.default_rng(5)
    shape = (3, 4, 18)
    a, b = (rng.integers(-128, 128, size=shape).astype(np.int8) for _ in range(2))
    opa, opa_shift, ofm, ofm_shift = 1518500250, 12, 1431655766, 50
    words = fm("IFM", 0, shape, zero_point=7) + fm("IFM2", 256, shape, NHCWB16, zero_point=-9)
    words += cmd0("NPU_SET_IFM_PRECISION", 0x8001 | (1 if scaled == "IFM" else 2) << 8)  # NATURAL, OPA_32/OPB_32
    words += cmd0("NPU_SET_IFM2_BROADCAST") + fm("OFM", 1024, shape, zero_point=-4) + block((1, 1))
    words += cmd0("NPU_SET_OFM_PRECISION", 0x8101) + cmd1("NPU_SET_OPA_SCALE", opa, opa_shift)
    words += cmd1("NPU_SET_OPB_SCALE", 0) + cmd1("NPU_SET_OFM_SCALE", ofm, ofm_shift)
    words += cmd0("NPU_OP_ELEMENTWISE", 1) + cmd0("NPU_OP_STOP", 0xFFFF)
    (out,) = run(payload(words, scratch=2048, inputs=[io(0, shape), io(256, (3, 4, 32))],
                         outputs=[io(1024, shape)]),
                 [a.tobytes(), np.pad(b, ((0, 0), (0, 0), (0, 14))).transpose(0, 2, 1).reshape(3, 2, 16, 4)
                  .transpose(0, 1, 3, 2).tobytes()])
    want = np.zeros(shape, dtype=np.int64)
    for index in np.ndindex(shape):
        x, y = int(a[index]) - 7, int(b[index]) + 9
        x, y = (_natural(x, opa, opa_shift), y << 19) if scaled == "IFM" else (x << 19, _natural(y, opa, opa_shift))
        want[index] = min(127, max(-128, _natural(x + y, ofm, ofm_shift) - 4))
    assert np.array_equal(np.frombuffer(out, dtype=np.int8).reshape(shape), want)


def test_memory_is_checked() -> None:
    to_flash = cmd0("NPU_SET_DMA0_SRC_REGION", 1) + cmd1("NPU_SET_DMA0_SRC", 0) + cmd0("NPU_SET_DMA0_DST_REGION", 0)
    to_flash += cmd1("NPU_SET_DMA0_DST", 0) + cmd1("NPU_SET_DMA0_LEN", 16) + cmd0("NPU_OP_DMA_START")
    with pytest.raises(StreamError, match="DMA_START at byte 0x20 writing its destination writes to region 0, which is read-only"):
        run(payload(to_flash + cmd0("NPU_OP_STOP"), weights=bytes(16)), [])
    past = cmd0("NPU_SET_DMA0_SRC_REGION", 0) + cmd1("NPU_SET_DMA0_SRC", 8) + cmd0("NPU_SET_DMA0_DST_REGION", 1)
    past += cmd1("NPU_SET_DMA0_DST", 0) + cmd1("NPU_SET_DMA0_LEN", 16) + cmd0("NPU_OP_DMA_START")
    with pytest.raises(StreamError, match=r"reaches bytes 0x8\.\.0x18 of region 0, which holds 0x10 bytes"):
        run(payload(past + cmd0("NPU_OP_STOP"), weights=bytes(16)), [])


def test_the_fast_scratch_is_the_platforms() -> None:
    words = cmd0("NPU_SET_DMA0_SRC_REGION", 0) + cmd1("NPU_SET_DMA0_SRC", 0) + cmd0("NPU_SET_DMA0_DST_REGION", 2)
    words += cmd1("NPU_SET_DMA0_DST", 32) + cmd1("NPU_SET_DMA0_LEN", 16) + cmd0("NPU_OP_DMA_START")
    words += cmd0("NPU_SET_DMA0_SRC_REGION", 2) + cmd1("NPU_SET_DMA0_SRC", 32) + cmd0("NPU_SET_DMA0_DST_REGION", 1)
    words += cmd1("NPU_SET_DMA0_DST", 0) + cmd0("NPU_OP_DMA_START") + cmd0("NPU_OP_STOP")
    program = payload(words, weights=bytes(range(16)), outputs=[io(0, (16,))])
    with pytest.raises(StreamError, match=r"region 2, which holds 0x0 bytes \(the fast scratch: its size is the platform's"):
        run(program, [])
    assert run(program, [], fast_scratch=48) == [bytes(range(16))]


def test_an_unset_register_is_named() -> None:
    with pytest.raises(StreamError, match="DMA_START at byte 0x0 reads NPU_SET_DMA0_SRC_REGION, which the command stream never set"):
        run(payload(cmd0("NPU_OP_DMA_START") + cmd0("NPU_OP_STOP")), [])


def test_what_is_not_modelled_stops_the_run() -> None:
    with pytest.raises(NotInterpreted, match=r"^not implemented: NPU_OP_IRQ \(IRQ at byte 0x0\)$"):
        run(payload(cmd0("NPU_OP_IRQ") + cmd0("NPU_OP_STOP")), [])
    with pytest.raises(NotInterpreted, match=r"^not implemented: ELEMENTWISE LRELU \(ADD, SUB, MUL, MIN, MAX and ABS are modelled\)$"):
        run(payload(cmd0("NPU_OP_ELEMENTWISE", 5) + cmd0("NPU_OP_STOP")), [])
    from_shram = cmd0("NPU_SET_DMA0_SRC_REGION", 1 << 8) + cmd0("NPU_SET_DMA0_DST_REGION", 1) + cmd0("NPU_OP_DMA_START")
    with pytest.raises(NotInterpreted, match=r"not implemented: DMA from the SHRAM \(source region mode INTERNAL\)"):
        run(payload(from_shram + cmd0("NPU_OP_STOP")), [])
    nearest = _copy(0, 64, (2, 2, 1)) + cmd0("NPU_SET_IFM_UPSCALE", 1)
    with pytest.raises(NotInterpreted, match=r"not implemented: CONV at byte 0x[0-9a-f]+ with IFM_UPSCALE 1$"):
        run(payload(nearest + cmd0("NPU_SET_OFM_PRECISION", 0x8001) + cmd0("NPU_OP_CONV") + cmd0("NPU_OP_STOP")), [])
    max_with_zp = _copy(0, 64, (2, 2, 1)) + cmd0("NPU_SET_IFM_ZERO_POINT", 3) + cmd0("NPU_OP_POOL", 0)
    with pytest.raises(NotInterpreted, match=r"not implemented: POOL MAX with zero points 3 \(IFM\) and 0 \(OFM\)"):
        run(payload(max_with_zp + cmd0("NPU_OP_STOP")), [])
    padded_avg = _copy(0, 64, (2, 2, 1)) + cmd0("NPU_SET_IFM_PAD_TOP", 1) + cmd0("NPU_OP_POOL", 1)
    with pytest.raises(NotInterpreted, match=r"not implemented: POOL AVERAGE with padding \(1, 0, 0, 0\) and "
                                             r"OFM_SCALE 0x80000001 shift 31$"):
        run(payload(padded_avg + cmd0("NPU_OP_STOP")), [])


def test_inputs_are_checked_and_the_stream_must_stop() -> None:
    program = payload(cmd0("NPU_OP_STOP"), inputs=[io(0, (4,))])
    with pytest.raises(StreamError, match=r"input 0 is 3 bytes; the program takes 4"):
        run(program, [b"abc"])
    with pytest.raises(StreamError, match="ends without NPU_OP_STOP"):
        run(payload(cmd0("NPU_OP_DMA_WAIT")), [])


def test_a_reduce_sum_sums_each_positions_channels() -> None:
    """Regor's global mean: int8 channels summed into int32, then int32 channels summed and scaled to int8."""
    rng = np.random.default_rng(10)
    x = rng.integers(-128, 128, size=(3, 5, 7)).astype(np.int8)
    words = fm("IFM", 0, (3, 5, 7), zero_point=-6) + fm("OFM", 128, (3, 5, 1), bits=32) + block((1, 1))
    words += cmd0("NPU_SET_OFM_PRECISION", 0x8105) + cmd1("NPU_SET_OFM_SCALE", 1, 0)
    words += cmd0("NPU_SET_ACTIVATION_MIN", -32768) + cmd0("NPU_SET_ACTIVATION_MAX", 32767) + cmd0("NPU_OP_POOL", 2)
    scale, shift = 0x60B366FF, 34
    words += fm("IFM", 128, (1, 3, 5), bits=32) + fm("OFM", 256, (1, 3, 1), zero_point=-128) + block((1, 1))
    words += cmd0("NPU_SET_OFM_PRECISION", 0x8101) + cmd1("NPU_SET_OFM_SCALE", scale, shift) + cmd0("NPU_OP_POOL", 2)
    program = payload(words + cmd0("NPU_OP_STOP", 0xFFFF), scratch=512, inputs=[io(0, x.shape)],
                      outputs=[io(128, (3, 5), 4), io(256, (3,))])
    sums, means = run(program, [x.tobytes()])
    want = (x.astype(np.int64) + 6).sum(axis=2)
    assert np.array_equal(np.frombuffer(sums, "<i4").reshape(3, 5), want)
    assert np.frombuffer(means, np.int8).tolist() == [
        min(127, max(-128, ((int(s) * scale + (1 << (shift - 1))) >> shift) - 128)) for s in want.sum(axis=1)]


def test_a_padded_max_pool_leaves_the_padding_out() -> None:
    """All-negative values: a padded tap counted as 0 would win every window at the border."""
    rng = np.random.default_rng(11)
    x = rng.integers(-128, -1, size=(3, 5, 3)).astype(np.int8)
    words = fm("IFM", 0, x.shape) + fm("OFM", 64, (2, 3, 3)) + block((3, 3), stride=2, pad=1)
    words += cmd0("NPU_SET_OFM_PRECISION", 0x8101) + cmd1("NPU_SET_OFM_SCALE", 1, 0) + cmd0("NPU_OP_POOL", 0)
    (out,) = run(payload(words + cmd0("NPU_OP_STOP", 0xFFFF), inputs=[io(0, x.shape)], outputs=[io(64, (2, 3, 3))]),
                 [x.tobytes()])
    want = [[[int(x[max(0, 2 * y - 1):2 * y + 2, max(0, 2 * xx - 1):2 * xx + 2, c].max()) for c in range(3)]
             for xx in range(3)] for y in range(2)]
    assert np.frombuffer(out, np.int8).reshape(2, 3, 3).tolist() == want


def _padded_average(x: np.ndarray, ifm_zp: int, ofm_zp: int) -> list[int]:
    """Regor's AVG_POOL2D with padding: 3x3, stride 2, padding 1 but at the bottom (4 rows), OFM_SCALE 1 shift 0."""
    words = fm("IFM", 0, x.shape, zero_point=ifm_zp) + fm("OFM", 128, (2, 3, 2), zero_point=ofm_zp)
    words += block((3, 3), stride=2, pad=1) + cmd0("NPU_SET_IFM_PAD_BOTTOM", 0) + cmd0("NPU_SET_OFM_PRECISION", 0x8101) + cmd1("NPU_SET_OFM_SCALE", 1, 0)
    return words + cmd0("NPU_OP_POOL", 1) + cmd0("NPU_OP_STOP", 0xFFFF)


def test_a_padded_average_pool_divides_by_the_taps_inside_the_ifm() -> None:
    """Each window's sum over its taps inside the IFM, divided by their number (4, 6 or 9 here), rounded half up."""
    rng = np.random.default_rng(13)
    x = rng.integers(-128, 128, size=(4, 5, 2)).astype(np.int8)
    (out,) = run(payload(_padded_average(x, -128, -128), inputs=[io(0, x.shape)], outputs=[io(128, (2, 3, 2))]),
                 [x.tobytes()])
    want = []
    for y in range(2):
        for xx in range(3):
            window = x[max(0, 2 * y - 1):2 * y + 2, max(0, 2 * xx - 1):2 * xx + 2].astype(np.int64) + 128
            n = window.shape[0] * window.shape[1]
            want += [min(127, (2 * int(s) + n) // (2 * n) - 128) for s in window.sum(axis=(0, 1))]
    assert np.frombuffer(out, np.int8).tolist() == want


def test_a_padded_average_of_a_negative_tie_stops_the_run() -> None:
    """Regor's zero points of -128 keep every sum at least 0: a negative sum halfway between two values is unsettled."""
    x = np.zeros((4, 5, 2), dtype=np.int8)
    x[0, 0, 0] = -2  # the first window holds 4 taps: -2 / 4 = -0.5
    with pytest.raises(NotInterpreted, match=r"POOL at byte 0x[0-9a-f]+: a padded AVERAGE of a negative sum exactly "
                                             r"between two values \(the hardware's tie direction is not settled\)$"):
        run(payload(_padded_average(x, 0, 0), inputs=[io(0, x.shape)], outputs=[io(128, (2, 3, 2))]), [x.tobytes()])


def _upscaled_copy(x: np.ndarray, ofm: tuple[int, int, int]) -> list[int]:
    """Regor's 2x nearest-neighbour resize: a 1x1 AVERAGE copy with IFM_UPSCALE NEAREST into an OFM twice as large."""
    words = fm("IFM", 0, x.shape, zero_point=3) + cmd0("NPU_SET_IFM_UPSCALE", 1) + fm("OFM", 256, ofm, zero_point=-2)
    words += block((1, 1)) + cmd0("NPU_SET_OFM_PRECISION", 0x8101) + cmd1("NPU_SET_OFM_SCALE", 0x80000001, 31)
    return words + cmd0("NPU_OP_POOL", 1) + cmd0("NPU_OP_STOP", 0xFFFF)


def test_ifm_upscale_nearest_repeats_each_element_2x2() -> None:
    x = np.random.default_rng(14).integers(-128, 128, size=(3, 4, 5)).astype(np.int8)
    (out,) = run(payload(_upscaled_copy(x, (6, 8, 5)), scratch=1024, inputs=[io(0, x.shape)], outputs=[io(256, (6, 8, 5))]),
                 [x.tobytes()])
    want = np.clip(x.astype(np.int64).repeat(2, axis=0).repeat(2, axis=1) - 3 - 2, -128, 127)
    assert np.array_equal(np.frombuffer(out, np.int8).reshape(6, 8, 5), want)
    with pytest.raises(NotInterpreted, match=r"POOL at byte 0x[0-9a-f]+ with IFM_UPSCALE NEAREST to an odd extent 5x8$"):
        run(payload(_upscaled_copy(x, (5, 8, 5)), scratch=1024, inputs=[io(0, x.shape)], outputs=[io(256, (5, 8, 5))]),
            [x.tobytes()])
    zeros = _upscaled_copy(x, (6, 8, 5))
    zeros[zeros.index(cmd0("NPU_SET_IFM_UPSCALE", 1)[0])] = cmd0("NPU_SET_IFM_UPSCALE", 2)[0]
    with pytest.raises(NotInterpreted, match=r"POOL at byte 0x[0-9a-f]+ with IFM_UPSCALE 2$"):
        run(payload(zeros, scratch=1024, inputs=[io(0, x.shape)], outputs=[io(256, (6, 8, 5))]), [x.tobytes()])
