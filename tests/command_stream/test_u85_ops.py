"""The U85 operations the catalogue's transformers and segmentation networks need, on small hand-built programs
with expected values worked out by hand (torch's own ``interpolate`` and ``matmul`` give the same): RESIZE
(nearest and bilinear, TOSA's half-pixel x2), MATMUL (``NPU_OP_CONV`` with its weights from IFM2) and the null
pool that restores a 32-bit accumulator from IFM2 (a transposed convolution's output stage). Each was settled
bit-exact against the TOSA reference model on a tests/ops_plugin.py network on u85-256 (ops-upsample,
ops-bilinear, ops-matmul, ops-deconv, ops-layernorm; docs/verification.md)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from tests.command_stream.programs import payload
from tests.command_stream.test_u85_stream import U85_256, c0, c1
from zoo.registry.command_stream.errors import NotInterpreted, StreamError
from zoo.registry.command_stream.u85 import run
from zoo.registry.pte.vela_payload import TensorInfo, VelaPayload

NATURAL = 1 << 13


def _map(name: str, base: int, shape: tuple[int, int, int], bits: int = 8) -> list[int]:
    """An NHWC map in the scratch, one tile; the OFM with a global scale."""
    h, w, c = shape
    e = bits // 8
    code = {8: 0, 16: 1, 32: 2, 64: 3}[bits]
    precision = 1 | (code << 1 | 1 << 8 if name == "OFM" else code << 2)
    words = c0(f"NPU_SET_{name}_REGION", 1) + c1(f"NPU_SET_{name}_BASE0", base)
    words += [x for i in (1, 2, 3) for x in c1(f"NPU_SET_{name}_BASE{i}", 0)]
    words += c0(f"NPU_SET_{name}_HEIGHT0_M1", h - 1) + c0(f"NPU_SET_{name}_HEIGHT1_M1", h - 1)
    words += c0(f"NPU_SET_{name}_WIDTH0_M1", w - 1) + c0(f"NPU_SET_{name}_PRECISION", precision)
    words += c1(f"NPU_SET_{name}_STRIDE_Y", w * c * e) + c1(f"NPU_SET_{name}_STRIDE_X", c * e)
    words += c1(f"NPU_SET_{name}_STRIDE_C", e) + c0(f"NPU_SET_{name}_ZERO_POINT", 0)
    if name == "OFM":
        words += c0("NPU_SET_OFM_HEIGHT_M1", h - 1) + c0("NPU_SET_OFM_WIDTH_M1", w - 1) + c0("NPU_SET_OFM_DEPTH_M1", c - 1)
    return words


def _common(ifm: tuple[int, int, int], ofm: tuple[int, int, int], ifm_bits: int = 8) -> list[int]:
    words = _map("IFM", 0, ifm, ifm_bits) + _map("OFM", 0x100, ofm) + c0("NPU_SET_IFM_DEPTH_M1", ifm[2] - 1)
    words += [x for s in ("TOP", "LEFT", "BOTTOM", "RIGHT") for x in c0(f"NPU_SET_IFM_PAD_{s}", 0)]
    words += c0("NPU_SET_KERNEL_STRIDE", 0) + c0("NPU_SET_IFM_UPSCALE", 0) + c0("NPU_SET_ACC_FORMAT", 0)
    return words + c0("NPU_SET_ACTIVATION", 0) + c0("NPU_SET_ACTIVATION_MIN", -128) + c0("NPU_SET_ACTIVATION_MAX", 127)


def _resize(mode: int, width: int) -> list[int]:
    """A x2 resize of a 1 x ``width`` map: TOSA's scale 4/2, offset -1 (half-pixel), as Regor writes ops-bilinear's:
    a step of 2/4 (0 and remainder 2), a block of 16 (its step 15 * 2 = 7 * 4 + 2), the shift 16 + 4 or 16 + 0."""
    words = _common((1, width, 1), (1, 2 * width, 1))
    words += c0("NPU_SET_KERNEL_HEIGHT_M1", 0) + c0("NPU_SET_KERNEL_WIDTH_M1", width - 1)
    words += c0("NPU_SET_OFM_BLK_HEIGHT_M1", 0) + c0("NPU_SET_OFM_BLK_WIDTH_M1", 15)
    for axis in ("X", "Y"):
        words += c0(f"NPU_SET_RESIZE_{axis}_SCALE_N_M1", 3) + c0(f"NPU_SET_RESIZE_{axis}_OFFSET", 0xFFF)
    words += c1("NPU_SET_RESIZE_X", 2 | 2 << 16, 7 << 4) + c1("NPU_SET_RESIZE_Y", 2)
    shift = 16 + (4 if mode == 0 else 0)
    return words + c1("NPU_SET_OFM_SCALE", 1, shift | NATURAL) + c0("NPU_OP_RESIZE", mode) + c0("NPU_OP_STOP", 0xFFFF)


def program(words: list[int], given: np.ndarray[Any, Any], out_shape: tuple[int, ...]) -> VelaPayload:
    """The payload of ``words``: ``given`` at scratch 0, an int8 output of ``out_shape`` at 0x100
    (tests/firmware/test_npu_model_u85.py runs the same programs on the C model)."""
    inp = TensorInfo(region=1, offset=0, shape=given.shape, element_size=given.itemsize)
    out = TensorInfo(region=1, offset=0x100, shape=out_shape, element_size=1)
    return payload(words, config=U85_256, scratch=0x200, inputs=[inp], outputs=[out])


def _run(words: list[int], given: np.ndarray[Any, Any], out_shape: tuple[int, ...]) -> list[int]:
    (got,) = run(program(words, given, out_shape), [given.tobytes()])
    return list(np.frombuffer(got, np.int8))


@pytest.mark.parametrize("mode", [2, 0])  # NEAREST, BILINEAR
def test_a_resize_doubles_a_row_as_torch_does(mode: int) -> None:
    """torch's x2 ``interpolate`` (half-pixel, the edges clamped), the bilinear one rounded half up (NATURAL: 2.5 to 3,
    -7.5 to -7), as TOSA's rescale after its RESIZE rounds."""
    given = [0, 64, -10, 7, 10, 0, -10]
    x = np.arange(2 * len(given)) * 0.5 - 0.25
    low = np.clip(np.floor(x), 0, len(given) - 1).astype(int)
    high = np.clip(np.floor(x) + 1, 0, len(given) - 1).astype(int)
    frac = x - np.floor(x)
    ifm = np.asarray(given, dtype=np.int64)
    if mode == 2:
        want = ifm[np.where(frac >= 0.5, high, low)]
    else:
        want = np.floor(ifm[low] * (1 - frac) + ifm[high] * frac + 0.5).astype(np.int64)
    got = _run(_resize(mode, len(given)), ifm.astype(np.int8).reshape(1, -1, 1), (1, 2 * len(given), 1))
    assert got == want.tolist()


X16_ROW = np.asarray([127, -128, 127, -128], dtype=np.int8).reshape(1, 4, 1)


def resize_x16() -> list[int]:
    """deeplabv3-mobilenetv3-large's final resize (its u85-256 program's at byte 0x7b60), on a row of 4: TOSA's
    scale 32/2, offset -15 (half-pixel x16), a step of 2/32, a block of 16 (15 * 2 = 0 * 32 + 30; the program's
    is 128), the shift 16 + 10; the OFM is 1 x 64."""
    words = _common((1, 4, 1), (1, 64, 1))
    words += c0("NPU_SET_KERNEL_HEIGHT_M1", 0) + c0("NPU_SET_KERNEL_WIDTH_M1", 3)
    words += c0("NPU_SET_OFM_BLK_HEIGHT_M1", 0) + c0("NPU_SET_OFM_BLK_WIDTH_M1", 15)
    for axis in ("X", "Y"):
        words += c0(f"NPU_SET_RESIZE_{axis}_SCALE_N_M1", 31) + c0(f"NPU_SET_RESIZE_{axis}_OFFSET", 0x1000 - 15)
    words += c1("NPU_SET_RESIZE_X", 2 | 30 << 16, 0) + c1("NPU_SET_RESIZE_Y", 2)
    return words + c1("NPU_SET_OFM_SCALE", 1, 26 | NATURAL) + c0("NPU_OP_RESIZE", 0) + c0("NPU_OP_STOP", 0xFFFF)


def test_a_x16_bilinear_resize_sums_past_32_bits_as_the_npu_does() -> None:
    """Its sums reach 127 * 32 * 32 * 2**16, past 32 bits; the output stage takes them whole (48 bits): torch's
    ``interpolate`` rounded half up."""
    x = (np.arange(64) + 0.5) / 16 - 0.5
    low = np.clip(np.floor(x), 0, 3).astype(int)
    high = np.clip(np.floor(x) + 1, 0, 3).astype(int)
    frac = x - np.floor(x)
    ifm = X16_ROW.reshape(-1).astype(np.int64)
    want = np.floor(ifm[low] * (1 - frac) + ifm[high] * frac + 0.5).astype(np.int64)
    assert _run(resize_x16(), X16_ROW, (1, 64, 1)) == want.tolist()


def test_a_resize_whose_steps_disagree_with_its_block_is_refused() -> None:
    words = _resize(0, 4)
    at = words.index(c1("NPU_SET_RESIZE_X", 2 | 2 << 16, 7 << 4)[0])
    words[at] = c1("NPU_SET_RESIZE_X", 2 | 2 << 16, 6 << 4)[0]
    with pytest.raises(StreamError, match="RESIZE_X's steps"):
        _run(words, np.zeros((1, 4, 1), np.int8), (1, 8, 1))
    with pytest.raises(NotInterpreted, match="RESIZE REPLICATE"):
        _run(_resize(1, 4), np.zeros((1, 4, 1), np.int8), (1, 8, 1))


def test_matmul_multiplies_the_ifm_by_the_transposed_ifm2_less_their_zero_points() -> None:
    """OFM[n, h, w] = sum_c (IFM[n, h, c] - zp) * (IFM2[n, w, c] - zp2): a (1, 2, 3) IFM, a (1, 4, 3) IFM2 a DMA
    puts at 0x40."""
    a = np.asarray([[1, 2, 3], [-4, 5, -6]], dtype=np.int8)
    b = np.asarray([[1, 0, 0], [0, 1, 0], [0, 0, 1], [2, -1, 3]], dtype=np.int8)
    (got,) = run(matmul_program(b), [a.tobytes()])
    exact = (a.astype(np.int64) - 1) @ (b.astype(np.int64) + 1).T
    want = np.floor(exact / 2 + 0.5).astype(np.int64)  # OFM_SCALE 1, shift 1, NATURAL
    assert list(np.frombuffer(got, np.int8)) == want.reshape(-1).tolist()


def matmul_program(b: np.ndarray[Any, Any]) -> VelaPayload:
    """A MATMUL of a (1, 2, 3) int8 IFM at scratch 0 and the (1, 4, 3) IFM2 ``b``, which a DMA puts at 0x40."""
    words = _common((1, 2, 3), (1, 2, 4)) + _map("IFM2", 0x40, (1, 4, 3)) + c0("NPU_SET_IFM2_BROADCAST", 0)
    words += c0("NPU_SET_IFM_ZERO_POINT", 1) + c0("NPU_SET_IFM2_ZERO_POINT", -1)
    words += c0("NPU_SET_KERNEL_HEIGHT_M1", 0) + c0("NPU_SET_KERNEL_WIDTH_M1", 0)
    words += c1("NPU_SET_OFM_SCALE", 1, 1 | NATURAL) + c0("NPU_OP_CONV", 1) + c0("NPU_OP_STOP", 0xFFFF)
    inp = TensorInfo(region=1, offset=0, shape=(1, 2, 3), element_size=1)
    out = TensorInfo(region=1, offset=0x100, shape=(1, 2, 4), element_size=1)
    words_dma = c0("NPU_SET_DMA0_SRC_REGION", 0) + c0("NPU_SET_DMA0_DST_REGION", 1) + c1("NPU_SET_DMA0_SRC", 0)
    words_dma += c1("NPU_SET_DMA0_DST", 0x40) + c1("NPU_SET_DMA0_LEN", b.size) + c0("NPU_OP_DMA_START")
    return payload(words_dma + words, weights=b.tobytes(), config=U85_256, scratch=0x200, inputs=[inp], outputs=[out])


def test_the_null_pool_restores_a_32_bit_accumulator_from_ifm2() -> None:
    """POOL NONE, ACC_FORMAT input IFM2: each int32 of the IFM2 (the IFM, 8-bit, is a dummy) through OFM_SCALE."""
    acc = np.asarray([1000, -1000, 2 ** 20, -3, 5, 0], dtype=np.int32)
    got = _run(null_pool(6, 3, 4), acc.reshape(1, 6, 1), (1, 6, 1))
    want = np.clip(np.floor(acc.astype(np.int64) * 3 / 16 + 0.5), -128, 127).astype(int).tolist()
    assert got == want


ACC64 = np.asarray([-6_000_000_000, -1_000_000_000, -3, 0, 1, 4_200_000_000, 6_000_000_000, 2 ** 47 - 1, -2 ** 47,
                    123_456_789_012], dtype=np.int64)


def test_the_null_pool_restores_the_48_bit_accumulator_from_a_64_bit_ifm2() -> None:
    """POOL NONE with ACC_FORMAT I48 and a 64-bit IFM2: a CONV's 64-bit OFM (its 48-bit accumulator) rescaled, as
    Regor writes each of the RESCALEs two operations need of it (ops-conv64 at a16w8 on u85-256): values past 32
    bits, through a 15-bit scale and a shift of 40, rounded half up; the 48-bit extremes clamp."""
    got = _run(null_pool(10, 21253, 40, ifm2_bits=64), ACC64.reshape(1, 10, 1), (1, 10, 1))
    want = [max(-128, min(127, (int(v) * 21253 + (1 << 39)) >> 40)) for v in ACC64]
    assert got == want and len(set(want)) > 6


def test_a_64_bit_accumulator_past_48_bits_is_not_modelled() -> None:
    """What the NPU does with an IFM2 value the 48-bit accumulator cannot hold is written nowhere: the run stops."""
    acc = ACC64.copy()
    acc[3] = 2 ** 47
    with pytest.raises(NotInterpreted, match="48-bit accumulator overflows"):
        _run(null_pool(10, 21253, 40, ifm2_bits=64), acc.reshape(1, 10, 1), (1, 10, 1))


def mul16(width: int, scale: int, shift: int) -> list[int]:
    """ELEMENTWISE MUL of two (1, ``width``, 1) int16 maps (the IFM at scratch 0, the IFM2 after it) into an int16 OFM
    at 0x100 through OFM_SCALE (``scale``, ``shift``), with the 48-bit accumulator and no clamp: a16w8's MUL of two
    activations (operand scales 1, as Regor writes every MUL)."""
    shape = (1, width, 1)
    words = _map("IFM", 0, shape, 16) + _map("IFM2", 2 * width, shape, 16) + _map("OFM", 0x100, shape, 16)
    words += c0("NPU_SET_IFM_BROADCAST", 0) + c0("NPU_SET_IFM2_BROADCAST", 0) + c0("NPU_SET_ACC_FORMAT", 1)
    words += c1("NPU_SET_IFM_SCALE", 1, NATURAL) + c1("NPU_SET_IFM2_SCALE", 1, NATURAL)
    words += c0("NPU_SET_ACTIVATION", 1 << 12) + c0("NPU_SET_ACTIVATION_MIN", -32768) + c0("NPU_SET_ACTIVATION_MAX", 32767)
    return words + c1("NPU_SET_OFM_SCALE", scale, shift | NATURAL) + c0("NPU_OP_ELEMENTWISE", 0) + c0("NPU_OP_STOP", 0xFFFF)


MUL16_IN = np.asarray([[-32768, -32768, 32767, -1, 0, 1, 300, -300, 12345, -20000],
                       [-32768, 32767, 32767, -1, 5, -7, 300, 299, -2, 17]], dtype=np.int16).reshape(1, 20, 1)


def test_a_16_bit_mul_with_the_48_bit_accumulator_is_the_scaled_product() -> None:
    """Each product of two 16-bit values (up to 2**30), times the scale, shifted, rounded half up, saturated to 16
    bits (PReLU's MUL and a product of two activations at a16w8; bit-exact on ops-a16-forms, test_u85_a16_forms.py)."""
    (got,) = run(program(mul16(10, 3, 17), MUL16_IN, (1, 20, 1)), [MUL16_IN.tobytes()])
    a, b = MUL16_IN.reshape(2, 10).astype(np.int64)
    want = [max(-32768, min(32767, (int(x) * int(y) * 3 + (1 << 16)) >> 17)) for x, y in zip(a, b, strict=True)]
    assert np.frombuffer(got, "<i2").tolist() == want and len(set(want)) > 6


def test_a_48_bit_accumulator_scaled_by_more_than_15_bits_is_not_modelled() -> None:
    """hand-landmark-full's residual ADDs at a16w8 on u85-256 (the 48-bit accumulator, OFM_SCALE 0x67b1f441): whether
    the U85 scales a 48-bit accumulator by all 31 bits is settled on no program (the scale records of one hold 15)."""
    with pytest.raises(NotInterpreted, match="MUL with the 48-bit accumulator and OFM_SCALE 0x8000 "):
        run(program(mul16(10, 1 << 15, 30), MUL16_IN, (1, 20, 1)), [MUL16_IN.tobytes()])
    with pytest.raises(NotInterpreted, match="the 48-bit accumulator with OFM_SCALE 0x8000 "):
        _run(null_pool(10, 1 << 15, 50, ifm2_bits=64), ACC64.reshape(1, 10, 1), (1, 10, 1))


def test_a_pool_does_not_apply_the_broadcast_an_elementwise_operation_left() -> None:
    """Regor writes IFM_BROADCAST before ELEMENTWISE only; a POOL after one (palm-detection-lite's on u85-256)
    finds it still set and copies its whole IFM, not the first row and column broadcast."""
    from tests.command_stream.test_u85_stream import _pool

    shape = (2, 3, 4)
    ifm = np.arange(24, dtype=np.int8).reshape(shape)
    words = c0("NPU_SET_IFM_BROADCAST", 3) + _pool(1 | 1 << 8 | 6 << 11, shape)
    got = _run(words, ifm, (4, 2, 3))
    assert got == ifm.transpose(2, 0, 1).reshape(-1).tolist()


def test_a_signed_ofm_reads_its_activation_max_as_signed() -> None:
    """A ReLU6 whose top lies below the zero point: hand-landmark-lite's 3x3 DEPTHWISE on u85-256 clamps its int8 OFM
    to ``[-33, -6]``, ``NPU_SET_ACTIVATION_MAX 0xfffa`` (Regor writes the limits from int16 minimum to uint16
    maximum; read unsigned, -6 became 65530 and the clamp's top was lost)."""
    acc = np.asarray([-1000, -300, -100, -50, 0, 50, 100, 1000], dtype=np.int32)
    got = _run(null_pool(8, 1, 2, clamp=(-33, 0xFFFA)), acc.reshape(1, 8, 1), (1, 8, 1))
    assert got == np.clip(np.floor(acc.astype(np.int64) / 4 + 0.5), -33, -6).astype(int).tolist()


def null_pool(width: int, scale: int, shift: int, clamp: tuple[int, int] | None = None, ifm2_bits: int = 32) -> list[int]:
    """POOL NONE restoring a (1, ``width``, 1) int32 IFM2 at scratch 0 (or int64, into the 48-bit accumulator:
    ``ifm2_bits`` 64) through OFM_SCALE (``scale``, ``shift``) and the activation limits ``clamp`` into an int8 OFM
    at 0x100."""
    words = _common((1, width, 1), (1, width, 1)) + _map("IFM2", 0, (1, width, 1), ifm2_bits)
    words += c0("NPU_SET_IFM2_BROADCAST", 0) + c0("NPU_SET_KERNEL_HEIGHT_M1", 0) + c0("NPU_SET_KERNEL_WIDTH_M1", 0)
    acc = 2 << 4 | (ifm2_bits == 64)
    words[words.index(c0("NPU_SET_ACC_FORMAT", 0)[0])] = c0("NPU_SET_ACC_FORMAT", acc)[0]
    if clamp is not None:
        words += c0("NPU_SET_ACTIVATION_MIN", clamp[0]) + c0("NPU_SET_ACTIVATION_MAX", clamp[1])
    return words + c1("NPU_SET_OFM_SCALE", scale, shift | NATURAL) + c0("NPU_OP_POOL", 4) + c0("NPU_OP_STOP", 0xFFFF)


def _kernel_parts(ifm: np.ndarray[Any, Any], weights: np.ndarray[Any, Any], bias: list[int], stride: int,
                  last_bias: list[int] | None = None) -> list[int]:
    """Regor's ``DecomposeForStrides`` of a 1 x K convolution at a stride the NPU lacks: one 1x1 CONV per kernel
    position, its IFM base moved by one position and its IFM stride times ``stride``, its own FWD (raw) weights and
    the whole bias, each keeping its accumulator (output DISABLE, OFM storage NONE) but the last, and each but the
    first adding to the one kept (input KEEP): wav2letter's first convolution on u85-256, ACC_FORMAT 0x240, 0x250, 0x210."""
    from zoo.registry.command_stream.u85 import weights as w85

    oc, _, k, ic = weights.shape
    ow = (ifm.shape[1] - k) // stride + 1
    layout = w85.Layout(oc, 1, 1, ic, oc, 64, 8, w85.DEPTH_FIRST, 8, (1, 1), (1, 1), False, 1, 256)
    (order,) = w85.brick_order(layout, True)
    data, words = b"", _common((1, ow, ic), (1, ow, oc)) + c0("NPU_SET_OFM_BLK_DEPTH_M1", oc - 1)
    words += c0("NPU_SET_KERNEL_HEIGHT_M1", 0) + c0("NPU_SET_KERNEL_WIDTH_M1", 0) + c0("NPU_SET_WEIGHT_FORMAT", 1)
    words += c1("NPU_SET_IFM_STRIDE_X", stride * ic) + c0("NPU_SET_IFM_ZERO_POINT", 3)
    words += c0("NPU_SET_WEIGHT_REGION", 0) + c0("NPU_SET_SCALE_REGION", 0) + c1("NPU_SET_OFM_SCALE", 0, NATURAL)
    for kx in range(k):
        stream = bytes([1] + [0] * 31) + np.where(order < 0, 0, weights[:, :, kx:kx + 1].reshape(-1)[order]).astype(np.int8).tobytes()
        stream += bytes(-len(stream) % 32)
        last = kx == k - 1
        records = b"".join(b.to_bytes(4, "little", signed=True) + (1 << 30).to_bytes(4, "little") + bytes([40, 0])
                           for b in (last_bias if last and last_bias else bias))
        words += c1("NPU_SET_IFM_BASE0", kx * ic) + c0("NPU_SET_OFM_PRECISION", 1 | (0 if last else 3 << 14))
        words += c0("NPU_SET_ACC_FORMAT", 2 << 8 | (1 << 4 if kx else 0) | (0 if last else 1 << 6))
        words += c1("NPU_SET_WEIGHT_BASE", len(data)) + c1("NPU_SET_WEIGHT_LENGTH", len(stream))
        words += c1("NPU_SET_SCALE_BASE", len(data) + len(stream)) + c1("NPU_SET_SCALE_LENGTH", len(records))
        words += c0("NPU_OP_CONV")
        data += stream + records + bytes(-len(records) % 16)
    inp = TensorInfo(region=1, offset=0, shape=ifm.shape, element_size=1)
    out = TensorInfo(region=1, offset=0x100, shape=(1, ow, oc), element_size=1)
    (got,) = run(payload(words + c0("NPU_OP_STOP", 0xFFFF), weights=data, config=U85_256, scratch=0x200, inputs=[inp],
                         outputs=[out]), [ifm.tobytes()])
    return list(np.frombuffer(got, np.int8))


def test_a_kernel_split_into_parts_keeps_its_accumulator_and_adds_the_bias_once() -> None:
    """A 1x3 kernel at stride 3 as three 1x1 CONVs: the sum over the kernel plus the bias once, times 2**-10
    (scale 2**30, shift 40), rounded NATURAL."""
    rng = np.random.default_rng(62)
    ifm = rng.integers(-128, 128, size=(1, 9, 4)).astype(np.int8)
    weights = rng.integers(-127, 128, size=(5, 1, 3, 4))
    bias = [400, -700, 0, 10000, -3333]
    got = _kernel_parts(ifm, weights, bias, 3)
    acc = np.einsum("xki,oki->xo", (ifm[0].astype(np.int64) - 3).reshape(3, 3, 4), weights[:, 0]) + np.asarray(bias)
    assert got == np.clip(np.floor(acc / 1024 + 0.5), -128, 127).astype(int).reshape(-1).tolist()
    assert len(set(got)) > 5  # not all clamped
    with pytest.raises(NotInterpreted, match=r"CONV at byte 0x[0-9a-f]+: its bias differs from that of CONV at byte "
                                             r"0x[0-9a-f]+, whose accumulator it adds to"):
        _kernel_parts(ifm, weights, bias, 3, last_bias=[0] * 5)
