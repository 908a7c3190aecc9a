"""The U85 interpreter's register map (``command_stream/u85/regs.py``) against the U85 register map, its stream
parse, and small hand-built U85 programs run end to end (``command_stream/u85``)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from tests.command_stream.programs import payload
from tests.command_stream.u85_script import u85 as census
from zoo.registry.command_stream.errors import NotInterpreted, StreamError
from zoo.registry.command_stream.u85 import accelerator, commands, run
from zoo.registry.command_stream.u85.regs import CMD0, CMD1, FIELDS
from zoo.registry.pte.vela_payload import TensorInfo, VelaPayload

ROOT = Path(__file__).resolve().parents[2]
_DRIVER = Path("shared") / "vendor" / "ethos-u-core-driver" / "src" / "ethosu85_interface.h"
HEADER = next((p / _DRIVER for p in ROOT.parents if (p / _DRIVER).is_file()), ROOT.parent / _DRIVER)
U85_256 = 0x20000118  # config_r of mnist's u85-256 program: U85, 2**8 MACs, one weight decoder
U85_512 = 0x20001119  # 2**9 MACs, two weight decoders
OP0 = {name: code for code, name in CMD0.items()}
OP1 = {name: code for code, name in CMD1.items()}
# zoo's field name -> (the header's struct, its field)
_STRUCTS = {"ifm": "npu_set_ifm_precision", "ofm": "npu_set_ofm_precision", "scale": "npu_set_ofm_scale",
            "ofm_scale": "npu_set_ofm_scale", "ifm_scale": "npu_set_ifm_scale", "acc": "npu_set_acc_format",
            "act": "npu_set_activation", "kernel": "npu_set_kernel_stride", "weights": "npu_set_weight_format",
            "broadcast": "npu_set_ifm_broadcast", "dma": "npu_set_dma0_src_region", "address": "npu_set_ifm_base0",
            "pool": "npu_op_pool", "elementwise": "npu_op_elementwise", "resize": "npu_set_resize_x_step",
            "resize_op": "npu_op_resize"}
_NAMES = {"ifm.type": "activation_type", "ifm.precision": "activation_precision", "ifm.format": "activation_format",
          "ifm.storage": "activation_storage", "ofm.type": "activation_type", "ofm.precision": "activation_precision",
          "ofm.format": "activation_format", "ofm.reverse": "activation_reverse",
          "ofm.transpose": "activation_transpose", "ofm.storage": "activation_storage", "ofm_scale.round": "round_mode",
          "ifm_scale.round": "round_mode", "acc.format": "acc_format", "acc.input": "acc_input",
          "acc.output": "acc_output", "act.function": "activation_function", "act.clip_range": "activation_clip_range",
          "weights.format": "weight_format", "weights.sparsity": "weight_sparsity", "broadcast.mode": "broadcast_mode",
          "address.hi": "addr_hi", "pool.mode": "pooling_mode", "elementwise.mode": "elementwise_mode",
          "resize_op.mode": "resize_mode"}


def test_the_opcodes_are_the_u85_register_maps_and_the_census_scripts() -> None:
    assert CMD0 == census.CMD0 and CMD1 == census.CMD1  # which test_u85_census.py checks against the header


@pytest.mark.skipif(not HEADER.is_file(), reason=f"the register map is not at {HEADER}")
def test_each_field_sits_where_the_register_map_puts_it() -> None:
    src = HEADER.read_text()
    for name, (_, lsb, width) in FIELDS.items():
        prefix = name.split(".")[0]
        if prefix == "config":
            continue
        struct = re.search(rf"struct {_STRUCTS[prefix]}_t\n\{{\n#ifdef __cplusplus\nprivate:\n#endif\n(.*?)#ifdef", src, re.S)
        assert struct is not None, name
        where, pos = {}, 0
        for field, bits in re.findall(r"uint32_t (\w+):(\d+);", struct.group(1)):
            where[field] = (pos - 16 if pos < 32 else pos - 32, int(bits))  # a parameter's bit, or a payload's
            pos += int(bits)
        assert where[_NAMES.get(name, name.split(".")[1])] == (lsb, width), name


def c0(name: str, value: int = 0) -> list[int]:
    return [OP0[name] | ((value & 0xFFFF) << 16)]


def c1(name: str, word: int, param: int = 0) -> list[int]:
    return [OP1[name] | 0x4000 | (param << 16), word & 0xFFFFFFFF]


def test_the_stream_reads_u85_opcodes_and_refuses_others() -> None:
    words = c0("NPU_SET_RESIZE_Y_OFFSET", 3) + c1("NPU_SET_IFM_SCALE", 7, 5) + c0("NPU_OP_STOP")
    config, cmds = commands(payload(words, config=U85_256).data["cmd_data"])
    assert [c.name for c in cmds] == ["NPU_SET_RESIZE_Y_OFFSET", "NPU_SET_IFM_SCALE", "NPU_OP_STOP"]
    assert (cmds[1].payload, cmds[1].param) == (7, 5) and accelerator(config).macs == 256
    assert (accelerator(config).cores, accelerator(commands(payload(words, config=U85_512).data["cmd_data"])[0]).cores) == (1, 2)
    with pytest.raises(StreamError, match="unknown cmd0 opcode 269"):  # IFM_IB_END on the U55, gone on the U85
        commands(payload([269 | 1 << 16, 0], config=U85_256).data["cmd_data"])
    with pytest.raises(StreamError, match="not an Ethos-U85"):
        commands(payload(c0("NPU_OP_STOP")).data["cmd_data"])


def _pool(ofm_precision: int, ifm: tuple[int, int, int]) -> list[int]:
    """A 1x1 MAX pool copying an NHWC int8 IFM at scratch 0 to an OFM at scratch 0x100, scale 1, NATURAL."""
    h, w, c = ifm
    words: list[int] = []
    for name, base, (sy, sx, sc) in (("IFM", 0, (w * c, c, 1)), ("OFM", 0x100, (0, 0, 0))):
        words += c0(f"NPU_SET_{name}_REGION", 1) + c1(f"NPU_SET_{name}_BASE0", base)
        words += [w for i in (1, 2, 3) for w in c1(f"NPU_SET_{name}_BASE{i}", 0)]
        words += c0(f"NPU_SET_{name}_ZERO_POINT", 0)
        if name == "IFM":
            words += c0("NPU_SET_IFM_HEIGHT0_M1", h - 1) + c0("NPU_SET_IFM_HEIGHT1_M1", h - 1)
            words += c0("NPU_SET_IFM_WIDTH0_M1", w - 1) + c0("NPU_SET_IFM_DEPTH_M1", c - 1)
            words += c1("NPU_SET_IFM_STRIDE_Y", sy) + c1("NPU_SET_IFM_STRIDE_X", sx) + c1("NPU_SET_IFM_STRIDE_C", sc)
    # the OFM transposed to C, H, W: tiles and strides of the transposed (c, h, w) map
    words += c0("NPU_SET_OFM_HEIGHT_M1", h - 1) + c0("NPU_SET_OFM_WIDTH_M1", w - 1) + c0("NPU_SET_OFM_DEPTH_M1", c - 1)
    words += c0("NPU_SET_OFM_HEIGHT0_M1", c - 1) + c0("NPU_SET_OFM_HEIGHT1_M1", c - 1) + c0("NPU_SET_OFM_WIDTH0_M1", h - 1)
    words += c1("NPU_SET_OFM_STRIDE_Y", h * w) + c1("NPU_SET_OFM_STRIDE_X", w) + c1("NPU_SET_OFM_STRIDE_C", 1)
    words += c0("NPU_SET_IFM_PRECISION", 1) + c0("NPU_SET_OFM_PRECISION", ofm_precision)
    words += [w for s in ("TOP", "LEFT", "BOTTOM", "RIGHT") for w in c0(f"NPU_SET_IFM_PAD_{s}", 0)]
    words += c0("NPU_SET_KERNEL_HEIGHT_M1", 0) + c0("NPU_SET_KERNEL_WIDTH_M1", 0) + c0("NPU_SET_KERNEL_STRIDE", 0)
    words += c0("NPU_SET_IFM_UPSCALE", 0) + c0("NPU_SET_ACC_FORMAT", 2 << 8)
    words += c0("NPU_SET_ACTIVATION", 0) + c0("NPU_SET_ACTIVATION_MIN", -128) + c0("NPU_SET_ACTIVATION_MAX", 127)
    words += c1("NPU_SET_OFM_SCALE", 1, 1 << 13)
    return words + c0("NPU_OP_POOL", 0) + c0("NPU_OP_STOP", 0xFFFF)


def test_an_ofm_transpose_writes_channels_first() -> None:
    """OFM_PRECISION's transpose CHW (6, bits 11-13) writes (y, x, c) at (c, y, x) of the map the tile
    and stride registers describe (mnist's second pool, before its fully connected layer)."""
    shape = (2, 3, 4)
    ifm = np.arange(24, dtype=np.int8).reshape(shape)
    out = TensorInfo(region=1, offset=0x100, shape=(4, 2, 3), element_size=1)
    inp = TensorInfo(region=1, offset=0, shape=shape, element_size=1)
    p = payload(_pool(1 | 1 << 8 | 6 << 11, shape), config=U85_256, scratch=0x200, inputs=[inp], outputs=[out])
    (got,) = run(p, [ifm.tobytes()])
    assert np.frombuffer(got, np.int8).tolist() == ifm.transpose(2, 0, 1).reshape(-1).tolist()
    with pytest.raises(StreamError, match="OFM transpose 4 is reserved"):
        run(payload(_pool(1 | 1 << 8 | 4 << 11, shape), config=U85_256, scratch=0x200, inputs=[inp], outputs=[out]),
            [ifm.tobytes()])


def reversed_pool(reverse: int, shape: tuple[int, int, int], *, transpose: int = 0) -> VelaPayload:
    """_pool's copy, its OFM in NHWC at 0x100 and mirrored along H (1), W (2) or C (3): the form of Regor's
    ``torch.flip`` (tests/ops_plugin.py's ops-flip on u85-256)."""
    h, w, c = shape
    words = _pool(1 | 1 << 8 | reverse << 9 | transpose << 11, shape)[:-2]  # without its POOL and STOP
    words += c0("NPU_SET_OFM_HEIGHT0_M1", h - 1) + c0("NPU_SET_OFM_HEIGHT1_M1", h - 1) + c0("NPU_SET_OFM_WIDTH0_M1", w - 1)
    words += c1("NPU_SET_OFM_STRIDE_Y", w * c) + c1("NPU_SET_OFM_STRIDE_X", c) + c1("NPU_SET_OFM_STRIDE_C", 1)
    inp = TensorInfo(region=1, offset=0, shape=shape, element_size=1)
    out = TensorInfo(region=1, offset=0x100, shape=shape, element_size=1)
    return payload(words + c0("NPU_OP_POOL", 0) + c0("NPU_OP_STOP", 0xFFFF), config=U85_256, scratch=0x200,
                   inputs=[inp], outputs=[out])


@pytest.mark.parametrize(("reverse", "axis"), [(1, 0), (2, 1), (3, 2)], ids=["H", "W", "C"])
def test_an_ofm_reversal_mirrors_the_operations_ofm_along_its_axis(reverse: int, axis: int) -> None:
    """OFM_PRECISION's reverse (bits 9-10) writes (y, x, c) at its mirror along H, W or C of the operation's own
    OFM, in the map the tile and stride registers describe; with a transpose too (which Regor never writes) the
    run stops."""
    shape = (2, 3, 4)
    ifm = np.arange(24, dtype=np.int8).reshape(shape)
    (got,) = run(reversed_pool(reverse, shape), [ifm.tobytes()])
    assert np.frombuffer(got, np.int8).reshape(shape).tolist() == np.flip(ifm, axis).tolist()
    with pytest.raises(NotInterpreted, match="an OFM both transposed \\(CHW\\) and reversed, which Regor never writes"):
        run(reversed_pool(reverse, shape, transpose=6), [ifm.tobytes()])


def test_what_is_not_modelled_stops_the_run() -> None:
    """An ARGMAX pool; a DOUBLE_SYMMETRIC rounding at shift 1 of odd values (where no bit is dropped, at shift 0
    or of even values, every mode is exact)."""
    shape = (2, 3, 4)
    inp = TensorInfo(region=1, offset=0, shape=shape, element_size=1)
    words = _pool(1 | 1 << 8, shape)
    for cut, what in ((c0("NPU_OP_POOL", 0), c0("NPU_OP_POOL", 6)), (c1("NPU_SET_OFM_SCALE", 1, 1 << 13), c1("NPU_SET_OFM_SCALE", 1, 1))):
        at = next(i for i in range(len(words)) if words[i:i + len(cut)] == cut)
        changed = words[:at] + what + words[at + len(cut):]
        with pytest.raises(NotInterpreted, match=r"not implemented: (POOL ARGMAX_X|.*OFM rounding DOUBLE_SYMMETRIC)"):
            run(payload(changed, config=U85_256, scratch=0x200, inputs=[inp], outputs=[inp]), [bytes(range(24))])


def test_a_scalar_operand_needs_no_region() -> None:
    """ELEMENTWISE MUL of the IFM and the scalar OP_SCALAR (IFM2 storage NONE, broadcast SCALAR): Regor never sets
    IFM2_REGION for it (ops-chanmean on u85-256), so the interpreter must not read it."""
    shape = (2, 3, 4)
    ifm = np.arange(-12, 12, dtype=np.int8).reshape(shape)
    words = _pool(1 | 1 << 8 | 6 << 11, shape)[:-2]  # the pool's registers, without its POOL and STOP
    words += c0("NPU_SET_IFM2_PRECISION", 1 | 3 << 14) + c0("NPU_SET_IFM_BROADCAST", 0)
    words += c0("NPU_SET_IFM2_BROADCAST", 8) + c0("NPU_SET_IFM2_ZERO_POINT", 0) + c1("NPU_SET_OP_SCALAR", -3)
    words += c1("NPU_SET_IFM_SCALE", 1, 1 << 13) + c1("NPU_SET_IFM2_SCALE", 1, 1 << 13)
    words += c0("NPU_OP_ELEMENTWISE", 0) + c0("NPU_OP_STOP", 0xFFFF)
    inp = TensorInfo(region=1, offset=0, shape=shape, element_size=1)
    out = TensorInfo(region=1, offset=0x100, shape=(4, 2, 3), element_size=1)
    (got,) = run(payload(words, config=U85_256, scratch=0x200, inputs=[inp], outputs=[out]), [ifm.tobytes()])
    want = np.clip(ifm.astype(np.int64) * -3, -128, 127).transpose(2, 0, 1).reshape(-1)
    assert np.frombuffer(got, np.int8).tolist() == want.tolist()


def test_constants_decodes_a_convolutions_weights_and_scales_where_a_dma_put_them() -> None:
    """A 1x1 CONV of 8 channels into 8, its FWD (raw) weights and its scale records copied from the weight data
    into the scratch by a DMA first: ``constants`` runs the DMA and decodes what the CONV reads, in (O, H, W, I)
    and per channel; the scratch holds zeros before the DMA, which would decode to all-zero weights."""
    from zoo.registry.command_stream.u85 import constants
    from zoo.registry.command_stream.u85 import weights as w85

    rng = np.random.default_rng(58)
    weights = rng.integers(-127, 128, size=(8, 1, 1, 8))
    bias, scale, shift = rng.integers(-(1 << 20), 1 << 20, 8), rng.integers(1 << 29, 1 << 30, 8), rng.integers(20, 40, 8)
    layout = w85.Layout(8, 1, 1, 8, 8, 64, 8, w85.DEPTH_FIRST, 8, (1, 1), (1, 1), False, 1, 256)
    (order,) = w85.brick_order(layout, True)
    stream = bytes([1] + [0] * 31) + np.where(order < 0, 0, weights.reshape(-1)[order]).astype(np.int8).tobytes()
    stream += bytes(-len(stream) % 32)
    records = b"".join(int(b).to_bytes(4, "little", signed=True) + int(s).to_bytes(4, "little") + bytes([int(t), 0])
                       for b, s, t in zip(bias, scale, shift, strict=True)) + bytes(80)
    data = stream + records
    words = _pool(1, (1, 1, 8))[:-4]  # the pool's registers, less its OFM scale, POOL and STOP
    words += c0("NPU_SET_OFM_HEIGHT0_M1", 0) + c0("NPU_SET_OFM_HEIGHT1_M1", 0) + c0("NPU_SET_OFM_WIDTH0_M1", 0)
    words += c0("NPU_SET_OFM_BLK_DEPTH_M1", 7) + c0("NPU_SET_WEIGHT_FORMAT", 1)
    words += c0("NPU_SET_DMA0_SRC_REGION", 0) + c0("NPU_SET_DMA0_DST_REGION", 1)
    words += c1("NPU_SET_DMA0_SRC", 0) + c1("NPU_SET_DMA0_DST", 0x100) + c1("NPU_SET_DMA0_LEN", len(data))
    words += c0("NPU_OP_DMA_START") + c0("NPU_OP_DMA_WAIT")
    words += c0("NPU_SET_WEIGHT_REGION", 1) + c1("NPU_SET_WEIGHT_BASE", 0x100) + c1("NPU_SET_WEIGHT_LENGTH", len(stream))
    words += c0("NPU_SET_SCALE_REGION", 1) + c1("NPU_SET_SCALE_BASE", 0x100 + len(stream))
    words += c1("NPU_SET_SCALE_LENGTH", len(records))
    words += c0("NPU_OP_CONV") + c0("NPU_OP_STOP", 0xFFFF)
    (found,) = constants(payload(words, weights=data, config=U85_256, scratch=0x1000))
    assert found.op == f"CONV at byte {4 * (len(words) - 2):#x}" and not found.depthwise and found.ofm_bits == 8
    assert found.weights.tolist() == weights.tolist()
    assert (found.records.bias.tolist(), found.records.scale.tolist(), found.records.shift.tolist()) == (
        bias.tolist(), scale.tolist(), shift.tolist())
