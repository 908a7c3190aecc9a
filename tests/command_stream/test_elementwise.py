"""One-operation programs for ELEMENTWISE (IFM2 as a scalar, broadcast or reversed; 32-bit operands;
MIN, MAX and ABS) and the LUT activation, each against its definition."""

from __future__ import annotations

import numpy as np
import pytest

from tests.command_stream.programs import NHCWB16, block, cmd0, cmd1, fm, io, payload
from zoo.registry.command_stream import NotInterpreted, run
from zoo.registry.pte.vela_payload import VelaPayload

MUL, ADD, SUB, MIN, MAX, ABS = 0, 1, 2, 3, 4, 6
SCALAR, REVERSED = 1 << 7, 1 << 6
BROADCAST_H, BROADCAST_C = 1, 4
LUT_DST = (1 << 8) | 3  # region mode INTERNAL: the SHRAM (Vela's BASE_PTR_INDEX_MEM2MEM)
SHRAM_LUT = 24 * 1024 - 2048  # the u55-128 test config's 24 KiB SHRAM, less the 2 KiB of LUTs


def _stop(words: list[int]) -> list[int]:
    return words + cmd0("NPU_OP_STOP", 0xFFFF)


def _int32_clamp() -> list[int]:
    return cmd0("NPU_SET_ACTIVATION_MIN", -32768) + cmd0("NPU_SET_ACTIVATION_MAX", 32767)


def _natural(value: int, scale: int, shift: int) -> int:
    return (value * scale + (1 << (shift - 1))) >> shift if shift else value * scale


def test_an_int8_plus_a_scalar_widens_to_int32() -> None:
    """Regor's int8-to-int32 cast: ADD of IFM2_SCALAR with 16-bit operand scales 1 into a 32-bit OFM,
    whose int16 clamp registers at their limits clamp nothing."""
    shape = (2, 3, 5)
    x = np.arange(-128, 128, 256 // 30)[:30].astype(np.int8).reshape(shape)
    words = fm("IFM", 0, shape, zero_point=-3) + fm("OFM", 64, shape, bits=32) + block((1, 1)) + _int32_clamp()
    words += cmd0("NPU_SET_OFM_PRECISION", 0x0105) + cmd1("NPU_SET_OFM_SCALE", 1, 0)
    words += cmd1("NPU_SET_OPA_SCALE", 1) + cmd1("NPU_SET_OPB_SCALE", 1)
    words += cmd0("NPU_SET_IFM2_PRECISION", 1) + cmd0("NPU_SET_IFM2_ZERO_POINT", 0)
    words += cmd0("NPU_SET_IFM2_SCALAR", -300) + cmd0("NPU_SET_IFM2_BROADCAST", SCALAR) + cmd0("NPU_OP_ELEMENTWISE", ADD)
    (out,) = run(payload(_stop(words), scratch=256, inputs=[io(0, shape)], outputs=[io(64, shape, 4)]), [x.tobytes()])
    assert np.array_equal(np.frombuffer(out, "<i4").reshape(shape), x.astype(np.int64) + 3 - 300)


def test_a_32_bit_mul_keeps_the_whole_product_and_applies_only_the_shift() -> None:
    """Regor's int32-to-int8 RESCALE: a 32-bit MUL by the multiplier (IFM2 broadcast over H, W), shift 49,
    rounded NATURAL; OFM_SCALE's scale is not applied to a 32-bit operation."""
    shape = (2, 2, 3)
    rng = np.random.default_rng(6)
    a = rng.integers(-(1 << 31), 1 << 31, size=shape, dtype=np.int64).astype(np.int32)
    m = np.array([1 << 30, 1518500250, -(1 << 31)], dtype=np.int32)
    words = fm("IFM", 0, shape, bits=32) + fm("IFM2", 64, (1, 1, 3), bits=32) + fm("OFM", 128, shape, zero_point=7)
    words += block((1, 1)) + cmd0("NPU_SET_OFM_PRECISION", 0x8101) + cmd1("NPU_SET_OFM_SCALE", 0x12345, 49)
    words += cmd0("NPU_SET_IFM2_BROADCAST", 3) + cmd0("NPU_OP_ELEMENTWISE", MUL)
    program = payload(_stop(words), inputs=[io(0, shape, 4), io(64, (3,), 4)], outputs=[io(128, shape)])
    (out,) = run(program, [a.tobytes(), m.tobytes()])
    want = [min(127, max(-128, _natural(int(v) * int(m[i[2]]), 1, 49) + 7)) for i, v in np.ndenumerate(a)]
    assert np.frombuffer(out, np.int8).tolist() == want


@pytest.mark.parametrize("order", [0, REVERSED])
def test_a_32_bit_sub_of_a_broadcast_row_in_either_operand_order(order: int) -> None:
    shape = (3, 2, 20)
    rng = np.random.default_rng(7)
    a = rng.integers(-(1 << 20), 1 << 20, size=shape).astype(np.int32)
    row = rng.integers(-(1 << 20), 1 << 20, size=(1, 2, 20)).astype(np.int32)
    words = fm("IFM", 0, shape, NHCWB16, bits=32) + fm("IFM2", 1024, (1, 2, 20), bits=32)
    words += fm("OFM", 2048, shape, bits=32) + block((1, 1)) + _int32_clamp()
    words += cmd0("NPU_SET_OFM_PRECISION", 0x0105) + cmd1("NPU_SET_OFM_SCALE", 1, 0) + cmd1("NPU_SET_OPA_SCALE", 1)
    words += cmd1("NPU_SET_OPB_SCALE", 1) + cmd0("NPU_SET_IFM2_BROADCAST", BROADCAST_H | order)
    words += cmd0("NPU_OP_ELEMENTWISE", SUB)
    bricks = np.pad(a, ((0, 0), (0, 0), (0, 12))).reshape(3, 2, 2, 16).transpose(0, 2, 1, 3)  # NHCWB16
    program = payload(_stop(words), scratch=4096, inputs=[io(0, (3, 2, 2, 16), 4), io(1024, (1, 2, 20), 4)],
                      outputs=[io(2048, shape, 4)])
    (out,) = run(program, [bricks.tobytes(), row.tobytes()])
    diff = a.astype(np.int64) - row
    assert np.array_equal(np.frombuffer(out, "<i4").reshape(shape), -diff if order else diff)


def test_an_int8_mul_broadcast_over_channels() -> None:
    shape = (2, 3, 4)
    rng = np.random.default_rng(8)
    a = rng.integers(-128, 128, size=shape).astype(np.int8)
    col = rng.integers(-128, 128, size=(2, 3, 1)).astype(np.int8)
    scale, shift = 0x201E7091, 37
    words = fm("IFM", 0, shape, zero_point=-128) + fm("IFM2", 64, (2, 3, 1), zero_point=5) + fm("OFM", 128, shape, zero_point=-2)
    words += block((1, 1)) + cmd0("NPU_SET_OFM_PRECISION", 0x8101) + cmd1("NPU_SET_OFM_SCALE", scale, shift)
    words += cmd0("NPU_SET_IFM2_BROADCAST", BROADCAST_C) + cmd0("NPU_OP_ELEMENTWISE", MUL)
    program = payload(_stop(words), inputs=[io(0, shape), io(64, (2, 3, 1))], outputs=[io(128, shape)])
    (out,) = run(program, [a.tobytes(), col.tobytes()])
    want = [min(127, max(-128, _natural((int(v) + 128) * (int(col[i[0], i[1], 0]) - 5), scale, shift) - 2))
            for i, v in np.ndenumerate(a)]
    assert np.frombuffer(out, np.int8).tolist() == want


def _lut_program(table_slot: int, activation: int, clamp: tuple[int, int] = (-128, 127)) -> list[int]:
    """DMA a 256-byte table from the weights into LUT slot ``table_slot``, then copy the IFM through ACTIVATION."""
    shape = (4, 8, 8)
    words = cmd0("NPU_SET_DMA0_SRC_REGION", 0) + cmd1("NPU_SET_DMA0_SRC", 0) + cmd0("NPU_SET_DMA0_DST_REGION", LUT_DST)
    words += cmd1("NPU_SET_DMA0_DST", SHRAM_LUT + 256 * table_slot) + cmd1("NPU_SET_DMA0_LEN", 256)
    words += cmd0("NPU_OP_DMA_START") + cmd0("NPU_OP_DMA_WAIT")
    words += fm("IFM", 0, shape, zero_point=-1) + fm("OFM", 256, shape, zero_point=3) + block((1, 1))
    words += cmd0("NPU_SET_OFM_PRECISION", 0x8101) + cmd1("NPU_SET_OFM_SCALE", 0x80000001, 31)
    words += cmd0("NPU_SET_ACTIVATION", activation) + cmd0("NPU_SET_ACTIVATION_MIN", clamp[0])
    words += cmd0("NPU_SET_ACTIVATION_MAX", clamp[1]) + cmd0("NPU_OP_POOL", 1)
    return _stop(words)


def test_a_lut_looks_up_the_output_stages_value_in_the_slot_the_dma_filled() -> None:
    table = np.random.default_rng(9).permutation(256).astype(np.uint8).view(np.int8)
    x = np.arange(-128, 128, dtype=np.int8)
    program = payload(_lut_program(5, 16 + 5), weights=table.tobytes(), scratch=512,
                      inputs=[io(0, (4, 8, 8))], outputs=[io(256, (4, 8, 8))])
    (out,) = run(program, [x.tobytes()])
    value = np.clip(x.astype(np.int64) + 1 + 3, -128, 127)  # x - ifm_zp + ofm_zp, saturated to int8
    assert np.array_equal(np.frombuffer(out, np.int8), table[value + 128])
    (other,) = run(payload(_lut_program(5, 16 + 4), weights=table.tobytes(), scratch=512,
                           inputs=[io(0, (4, 8, 8))], outputs=[io(256, (4, 8, 8))]), [x.tobytes()])
    assert not other.strip(b"\0"), "slot 4 was never written: the SHRAM starts zeroed"


def test_what_elementwise_and_lut_do_not_model_stops_the_run() -> None:
    def refused(words: list[int], message: str) -> None:
        program = payload(words, weights=bytes(256), scratch=512, inputs=[io(0, (4, 8, 8))], outputs=[io(256, (4, 8, 8))])
        with pytest.raises(NotInterpreted, match=message):
            run(program, [bytes(256)])

    refused(_lut_program(0, 16, (-100, 127)), r"POOL at byte 0x[0-9a-f]+ with a LUT and the clamp \(-100, 127\)$")
    refused(_lut_program(0, 3), r"with activation function 3 \(tanh or sigmoid\)$")
    refused(_lut_program(0, 16 | 3 << 12), "with activation clip range 3$")
    shape = (4, 8, 8)
    base = fm("IFM", 0, shape) + fm("OFM", 256, shape) + block((1, 1)) + cmd0("NPU_SET_OFM_PRECISION", 0x8101)
    base += cmd1("NPU_SET_OFM_SCALE", 1, 0) + cmd0("NPU_SET_IFM2_PRECISION", 1) + cmd0("NPU_SET_IFM2_ZERO_POINT")
    base += cmd0("NPU_SET_IFM2_SCALAR", 2) + cmd0("NPU_SET_IFM2_BROADCAST", SCALAR) + cmd1("NPU_SET_OPB_SCALE", 1)
    add = cmd0("NPU_OP_ELEMENTWISE", ADD)
    refused(_stop(base + cmd1("NPU_SET_OPA_SCALE", 3) + add), "ELEMENTWISE ADD with 16-bit operand scales 3 and 1$")
    base += cmd1("NPU_SET_OPA_SCALE", 1)
    wide = fm("OFM", 256, (4, 8, 2), bits=32) + cmd0("NPU_SET_OFM_PRECISION", 0x0105)
    refused(_stop(base + wide + add), r"clamping a 32-bit OFM to \(-128, 127\)$")
    refused(_stop(base + cmd0("NPU_SET_IFM2_BROADCAST", 1 << 5) + add), "ELEMENTWISE ADD with IFM2_BROADCAST 0x20$")
    refused(_stop(base + cmd0("NPU_OP_ELEMENTWISE", 5)), r"ELEMENTWISE LRELU \(ADD, SUB, MUL, MIN, MAX and ABS are modelled\)$")
    refused(_stop(base + cmd1("NPU_SET_OFM_SCALE", 3, 1) + cmd0("NPU_OP_ELEMENTWISE", MAX)),
            r"ELEMENTWISE MAX with OFM_SCALE 0x3 shift 1 \(only 1, shift 0 is modelled\)$")


@pytest.mark.parametrize("mode", [MIN, MAX])
@pytest.mark.parametrize("order", [0, REVERSED])
def test_a_32_bit_min_or_max_of_a_broadcast_column(mode: int, order: int) -> None:
    """Regor's MINIMUM and MAXIMUM: 32-bit operands between its casts, OFM_SCALE 1 shift 0, the per-channel
    scale mode; IFM2 here broadcast along C, in either operand order (min and max do not care)."""
    shape = (3, 4, 5)
    rng = np.random.default_rng(12)
    a = rng.integers(-(1 << 24), 1 << 24, size=shape).astype(np.int32)
    col = rng.integers(-(1 << 24), 1 << 24, size=(3, 4, 1)).astype(np.int32)
    words = fm("IFM", 0, shape, bits=32) + fm("IFM2", 256, (3, 4, 1), bits=32) + fm("OFM", 512, shape, bits=32)
    words += block((1, 1)) + _int32_clamp() + cmd1("NPU_SET_OFM_SCALE", 1, 0)
    words += cmd0("NPU_SET_IFM2_BROADCAST", BROADCAST_C | order) + cmd0("NPU_OP_ELEMENTWISE", mode)
    program = payload(_stop(words), scratch=1024, inputs=[io(0, shape, 4), io(256, (3, 4, 1), 4)],
                      outputs=[io(512, shape, 4)])
    (out,) = run(program, [a.tobytes(), col.tobytes()])
    want = np.minimum(a, col) if mode == MIN else np.maximum(a, col)
    assert np.array_equal(np.frombuffer(out, "<i4").reshape(shape), want)


def test_an_int8_max_with_a_scalar_subtracts_the_zero_points_and_clamps() -> None:
    shape = (2, 3, 4)
    x = np.arange(-128, 128, 256 // 24)[:24].astype(np.int8).reshape(shape)
    words = fm("IFM", 0, shape, zero_point=5) + fm("OFM", 64, shape, zero_point=-3) + block((1, 1))
    words += cmd0("NPU_SET_ACTIVATION_MIN", -100) + cmd1("NPU_SET_OFM_SCALE", 1, 0)
    words += cmd0("NPU_SET_IFM2_PRECISION", 1) + cmd0("NPU_SET_IFM2_ZERO_POINT", 2) + cmd0("NPU_SET_IFM2_SCALAR", -20)
    words += cmd0("NPU_SET_IFM2_BROADCAST", SCALAR) + cmd0("NPU_OP_ELEMENTWISE", MAX)
    (out,) = run(payload(_stop(words), inputs=[io(0, shape)], outputs=[io(64, shape)]), [x.tobytes()])
    want = np.clip(np.maximum(x.astype(np.int64) - 5, -22) - 3, -100, 127)
    assert np.array_equal(np.frombuffer(out, np.int8).reshape(shape), want)


def test_abs_rescales_the_magnitude() -> None:
    """Regor's ABS of an int8 tensor: |ifm - zp| times OFM_SCALE (ifm_scale / ofm_scale), global mode, NATURAL."""
    shape = (4, 8, 8)
    x = np.arange(-128, 128, dtype=np.int8).reshape(shape)
    scale, shift = 0x78629C63, 30
    words = fm("IFM", 0, shape, zero_point=-8) + fm("OFM", 256, shape, zero_point=-128) + block((1, 1))
    words += cmd0("NPU_SET_OFM_PRECISION", 0x8101) + cmd1("NPU_SET_OFM_SCALE", scale, shift)
    words += cmd0("NPU_OP_ELEMENTWISE", ABS)
    (out,) = run(payload(_stop(words), scratch=512, inputs=[io(0, shape)], outputs=[io(256, shape)]), [x.tobytes()])
    want = [min(127, _natural(abs(int(v) + 8), scale, shift) - 128) for v in x.reshape(-1)]
    assert np.frombuffer(out, np.int8).tolist() == want


UNSIGNED_16_SHAPE = (2, 3, 5)


def unsigned_16_clamp() -> VelaPayload:
    """An int8 MUL by the scalar 300 into a uint16 OFM (zero point 20000) clamped to [5000, 50000]."""
    shape = UNSIGNED_16_SHAPE
    words = fm("IFM", 0, shape) + fm("OFM", 64, shape, zero_point=20000, bits=16) + block((1, 1))
    words += cmd0("NPU_SET_OFM_PRECISION", 0x8102) + cmd1("NPU_SET_OFM_SCALE", 1, 0)
    words += cmd0("NPU_SET_ACTIVATION_MIN", 5000) + cmd0("NPU_SET_ACTIVATION_MAX", 50000)
    words += cmd0("NPU_SET_IFM2_PRECISION", 1) + cmd0("NPU_SET_IFM2_ZERO_POINT", 0)
    words += cmd0("NPU_SET_IFM2_SCALAR", 300) + cmd0("NPU_SET_IFM2_BROADCAST", SCALAR) + cmd0("NPU_OP_ELEMENTWISE", MUL)
    return payload(_stop(words), scratch=256, inputs=[io(0, shape)], outputs=[io(64, shape, 2)])


def test_an_unsigned_16_bit_ofm_reads_its_clamp_as_unsigned() -> None:
    """Regor writes ``ACTIVATION_MIN``/``MAX`` from the int16 minimum to the uint16 maximum, in the OFM's signedness:
    a uint16 OFM's top of 50000 is ``0xc350``, which read as two's complement (-15536) turned every value into 50000."""
    shape = UNSIGNED_16_SHAPE
    x = np.arange(-128, 128, 256 // 30)[:30].astype(np.int8).reshape(shape)
    (out,) = run(unsigned_16_clamp(), [x.tobytes()])
    got = np.frombuffer(out, "<u2").reshape(shape)
    assert np.array_equal(got, np.clip(x.astype(np.int64) * 300 + 20000, 5000, 50000))
    assert got.min() == 5000 and got.max() == 50000
