"""Hand-built command streams for the interpreter's unit tests: words, a cmd_data block, a payload."""

from __future__ import annotations

import struct

from zoo.registry.command_stream.regs import CMD0, CMD1
from zoo.registry.pte.vela_payload import TensorInfo, VelaPayload

OPCODE0 = {name: code for code, name in CMD0.items()}
OPCODE1 = {name: code for code, name in CMD1.items()}
NHWC, NHCWB16 = 0, 1
U55_128 = 0x00001807  # config_r of mnist's u55-128 program: U55, 2**7 MACs, 24 KiB SHRAM
U65_512 = 0x10006009  # a u65-512 program's: U65, 2**9 MACs (two cores of 256), 96 KiB SHRAM (48 KiB each)


def cmd0(name: str, value: int = 0) -> list[int]:
    return [OPCODE0[name] | ((value & 0xFFFF) << 16)]


def cmd1(name: str, payload: int, param: int = 0) -> list[int]:
    return [OPCODE1[name] | 0x4000 | (param << 16), payload & 0xFFFFFFFF]


def cmd_data(words: list[int], config: int = U55_128) -> bytes:
    """COP1, CONFIG, NOPs to 16 bytes, COMMAND_STREAM, the words (Vela's driver-action layout)."""
    head = [int.from_bytes(b"COP1", "little"), 0x00100001, config, 0x10066001, 5, 5, 5]
    n = len(words)
    head.append(2 | ((n >> 16) & 0xFF) << 8 | (n & 0xFFFF) << 16)
    return struct.pack(f"<{len(head) + n}I", *head, *words)


def payload(words: list[int], *, weights: bytes = b"", scratch: int = 256, inputs: list[TensorInfo] | None = None,
            outputs: list[TensorInfo] | None = None, config: int = U55_128) -> VelaPayload:
    p = VelaPayload(offset=0, length=0, scratch_size=scratch, inputs=inputs or [], outputs=outputs or [])
    p.data = {"cmd_data": cmd_data(words, config), "weight_data": weights}
    p.blocks = list(p.data)
    return p


def fm(prefix: str, base: int, shape: tuple[int, int, int], layout: int = NHWC, zero_point: int = 0,
       bits: int = 8) -> list[int]:
    """A single-tile signed feature map with Vela's standard strides (``get_strides``); an OFM rounds NATURAL."""
    h, w, c = shape
    e = bits // 8
    strides = (c * e, w * c * e, e) if layout == NHWC else (16 * e, w * 16 * e * -(-c // 16), 16 * w * e)
    code = {8: 0, 16: 1, 32: 2}[bits]
    precision = 1 | (layout << 6) | ((0x8000 | code << 1) if prefix == "OFM" else code << 2)
    words = cmd0(f"NPU_SET_{prefix}_REGION", 1) + cmd1(f"NPU_SET_{prefix}_BASE0", base)
    for i in (1, 2, 3):
        words += cmd1(f"NPU_SET_{prefix}_BASE{i}", 0)
    words += cmd0(f"NPU_SET_{prefix}_HEIGHT0_M1", h - 1) + cmd0(f"NPU_SET_{prefix}_HEIGHT1_M1", h - 1)
    words += cmd0(f"NPU_SET_{prefix}_WIDTH0_M1", w - 1)
    words += cmd1(f"NPU_SET_{prefix}_STRIDE_X", strides[0]) + cmd1(f"NPU_SET_{prefix}_STRIDE_Y", strides[1])
    words += cmd1(f"NPU_SET_{prefix}_STRIDE_C", strides[2])
    words += cmd0(f"NPU_SET_{prefix}_ZERO_POINT", zero_point) + cmd0(f"NPU_SET_{prefix}_PRECISION", precision)
    if prefix == "IFM":
        words += cmd0("NPU_SET_IFM_DEPTH_M1", c - 1) + cmd0("NPU_SET_IFM_UPSCALE")
    elif prefix == "OFM":
        words += cmd0("NPU_SET_OFM_HEIGHT_M1", h - 1) + cmd0("NPU_SET_OFM_WIDTH_M1", w - 1)
        words += cmd0("NPU_SET_OFM_DEPTH_M1", c - 1)
    return words


def block(kernel: tuple[int, int], stride: int = 1, pad: int = 0, part_kernel: bool = False) -> list[int]:
    words = cmd0("NPU_SET_KERNEL_HEIGHT_M1", kernel[0] - 1) + cmd0("NPU_SET_KERNEL_WIDTH_M1", kernel[1] - 1)
    words += cmd0("NPU_SET_KERNEL_STRIDE", (stride - 1) * 3 | (4 if part_kernel else 0))
    for side in ("TOP", "LEFT", "BOTTOM", "RIGHT"):
        words += cmd0(f"NPU_SET_IFM_PAD_{side}", pad)
    words += cmd0("NPU_SET_ACTIVATION") + cmd0("NPU_SET_ACTIVATION_MIN", -128) + cmd0("NPU_SET_ACTIVATION_MAX", 127)
    return words + cmd0("NPU_SET_ACC_FORMAT")


def io(offset: int, shape: tuple[int, ...], element_size: int = 1) -> TensorInfo:
    return TensorInfo(shape, element_size, offset, 1)
