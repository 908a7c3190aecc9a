"""The Ethos-U85 command opcodes and the register fields the interpreter reads, as data.

Written from the U85 register map (``ethos_u85_interface.hpp`` of Vela 5.1.0's Regor: ``cmd0_opcode``,
``cmd1_opcode`` and the ``npu_set_*_t`` structs). A command keeps the U55's word layout (opcode in
bits 0-9, bit 14 for a payload word, the 16-bit parameter in bits 16-31); a field's position here
is its bit in that parameter, or in the payload word where named so.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["CMD0", "CMD1", "FIELDS", "SIGNED", "Field", "bits", "field"]

_CMD0_OPS = {0: "STOP", 1: "IRQ", 2: "CONV", 3: "DEPTHWISE", 5: "POOL", 6: "ELEMENTWISE", 7: "RESIZE",
             16: "DMA_START", 17: "DMA_WAIT", 18: "KERNEL_WAIT", 19: "PMU_MASK"}
_CMD0_SETS = {
    256: "IFM_PAD_TOP", 257: "IFM_PAD_LEFT", 258: "IFM_PAD_RIGHT", 259: "IFM_PAD_BOTTOM", 260: "IFM_DEPTH_M1",
    261: "IFM_PRECISION", 263: "IFM_UPSCALE", 264: "IFM_BROADCAST", 265: "IFM_ZERO_POINT", 266: "IFM_WIDTH0_M1",
    267: "IFM_HEIGHT0_M1", 268: "IFM_HEIGHT1_M1", 271: "IFM_REGION", 273: "OFM_WIDTH_M1", 274: "OFM_HEIGHT_M1",
    275: "OFM_DEPTH_M1", 276: "OFM_PRECISION", 277: "OFM_BLK_WIDTH_M1", 278: "OFM_BLK_HEIGHT_M1",
    279: "OFM_BLK_DEPTH_M1", 280: "OFM_ZERO_POINT", 282: "OFM_WIDTH0_M1", 283: "OFM_HEIGHT0_M1",
    284: "OFM_HEIGHT1_M1", 287: "OFM_REGION", 288: "KERNEL_WIDTH_M1", 289: "KERNEL_HEIGHT_M1", 290: "KERNEL_STRIDE",
    292: "ACC_FORMAT", 293: "ACTIVATION", 294: "ACTIVATION_MIN", 295: "ACTIVATION_MAX", 296: "WEIGHT_REGION",
    297: "SCALE_REGION", 298: "RESIZE_X_SCALE_N_M1", 299: "RESIZE_Y_SCALE_N_M1", 300: "RESIZE_X_OFFSET",
    301: "RESIZE_Y_OFFSET", 302: "WEIGHT_FORMAT", 303: "BLOCKDEP", 304: "DMA0_SRC_REGION", 305: "DMA0_DST_REGION",
    306: "DMA0_SIZE0", 307: "DMA0_SIZE1", 308: "DMA0_IDX_REGION", 384: "IFM2_BROADCAST", 389: "IFM2_PRECISION",
    393: "IFM2_ZERO_POINT", 394: "IFM2_WIDTH0_M1", 395: "IFM2_HEIGHT0_M1", 396: "IFM2_HEIGHT1_M1",
    399: "IFM2_REGION",
}
_CMD1_SETS = {
    0: "IFM_BASE0", 1: "IFM_BASE1", 2: "IFM_BASE2", 3: "IFM_BASE3", 4: "IFM_STRIDE_X", 5: "IFM_STRIDE_Y",
    6: "IFM_STRIDE_C", 16: "OFM_BASE0", 17: "OFM_BASE1", 18: "OFM_BASE2", 19: "OFM_BASE3", 20: "OFM_STRIDE_X",
    21: "OFM_STRIDE_Y", 22: "OFM_STRIDE_C", 32: "WEIGHT_BASE", 33: "WEIGHT_LENGTH", 34: "SCALE_BASE",
    35: "SCALE_LENGTH", 36: "OFM_SCALE", 37: "IFM_SCALE", 38: "IFM2_SCALE", 39: "OP_SCALAR", 48: "DMA0_SRC",
    49: "DMA0_DST", 50: "DMA0_LEN", 51: "DMA0_SRC_STRIDE0", 52: "DMA0_SRC_STRIDE1", 53: "DMA0_DST_STRIDE0",
    54: "DMA0_DST_STRIDE1", 55: "DMA0_IDX", 56: "DMA0_IDX_MAX", 57: "DMA0_IDX_SKIP1", 128: "IFM2_BASE0",
    129: "IFM2_BASE1", 130: "IFM2_BASE2", 131: "IFM2_BASE3", 132: "IFM2_STRIDE_X", 133: "IFM2_STRIDE_Y",
    134: "IFM2_STRIDE_C", 144: "WEIGHT1_BASE", 145: "WEIGHT1_LENGTH", 146: "WEIGHT2_BASE", 147: "WEIGHT2_LENGTH",
    148: "WEIGHT3_BASE", 149: "WEIGHT3_LENGTH", 150: "RESIZE_X", 151: "RESIZE_Y",
}

CMD0: dict[int, str] = {**{k: f"NPU_OP_{v}" for k, v in _CMD0_OPS.items()},
                        **{k: f"NPU_SET_{v}" for k, v in _CMD0_SETS.items()}}
"""Single-word commands (``cmd0_opcode``): the 16-bit parameter is the register value or the operation's mode."""

CMD1: dict[int, str] = {**{k: f"NPU_SET_{v}" for k, v in _CMD1_SETS.items()}, 256: "NPU_OP_BRANCH"}
"""Two-word commands (``cmd1_opcode``): a 32-bit payload word follows."""

SIGNED = frozenset({"NPU_SET_IFM_ZERO_POINT", "NPU_SET_OFM_ZERO_POINT", "NPU_SET_IFM2_ZERO_POINT",
                    "NPU_SET_ACTIVATION_MIN"})
"""cmd0 registers whose 16-bit value is two's complement. ``ACTIVATION_MIN`` and ``ACTIVATION_MAX`` take
the OFM's signedness, which ``stage.activation`` applies to both: Regor writes limits from the int16
minimum to the uint16 maximum into them (``GenerateActivation``)."""


@dataclass(frozen=True)
class Field:
    register: str
    lsb: int
    width: int

    def of(self, value: int) -> int:
        return (value >> self.lsb) & ((1 << self.width) - 1)


FIELDS: dict[str, tuple[str, int, int]] = {
    # IFM_PRECISION and IFM2_PRECISION
    "ifm.type": ("IFM_PRECISION", 0, 1), "ifm.precision": ("IFM_PRECISION", 2, 2),
    "ifm.format": ("IFM_PRECISION", 6, 2), "ifm.storage": ("IFM_PRECISION", 14, 2),
    # OFM_PRECISION
    "ofm.type": ("OFM_PRECISION", 0, 1), "ofm.precision": ("OFM_PRECISION", 1, 2),
    "ofm.format": ("OFM_PRECISION", 6, 2), "ofm.scale_mode": ("OFM_PRECISION", 8, 1),
    "ofm.reverse": ("OFM_PRECISION", 9, 2), "ofm.transpose": ("OFM_PRECISION", 11, 3),
    "ofm.storage": ("OFM_PRECISION", 14, 2),
    # OFM_SCALE, IFM_SCALE, IFM2_SCALE: in the parameter; the scale is the payload's low 31 bits
    "scale.shift": ("OFM_SCALE", 0, 6), "scale.dbl_rnd": ("OFM_SCALE", 6, 5), "ofm_scale.round": ("OFM_SCALE", 13, 3),
    "ifm_scale.round": ("IFM_SCALE", 13, 1),
    # ACC_FORMAT
    "acc.format": ("ACC_FORMAT", 0, 2), "acc.input": ("ACC_FORMAT", 4, 2), "acc.output": ("ACC_FORMAT", 6, 1),
    "acc.microblock": ("ACC_FORMAT", 8, 3),
    # ACTIVATION
    "act.function": ("ACTIVATION", 0, 5), "act.table": ("ACTIVATION", 5, 3), "act.clip_range": ("ACTIVATION", 12, 1),
    # KERNEL_STRIDE
    "kernel.stride_x_lsb": ("KERNEL_STRIDE", 0, 1), "kernel.stride_y_lsb": ("KERNEL_STRIDE", 1, 1),
    "kernel.weight_order": ("KERNEL_STRIDE", 2, 1), "kernel.dilation_x": ("KERNEL_STRIDE", 3, 1),
    "kernel.dilation_y": ("KERNEL_STRIDE", 4, 1), "kernel.decomposition": ("KERNEL_STRIDE", 5, 1),
    "kernel.stride_x_msb": ("KERNEL_STRIDE", 6, 1), "kernel.stride_y_msb": ("KERNEL_STRIDE", 9, 1),
    # WEIGHT_FORMAT
    "weights.format": ("WEIGHT_FORMAT", 0, 1), "weights.sparsity": ("WEIGHT_FORMAT", 4, 1),
    # IFM_BROADCAST / IFM2_BROADCAST
    "broadcast.mode": ("IFM_BROADCAST", 0, 4),
    # DMA0_SRC_REGION / DMA0_DST_REGION
    "dma.region": ("DMA0_SRC_REGION", 0, 3), "dma.region_mode": ("DMA0_SRC_REGION", 8, 1),
    "dma.stride_mode": ("DMA0_SRC_REGION", 9, 2), "dma.idx_mode": ("DMA0_SRC_REGION", 11, 1),
    # the 40-bit addresses: the parameter holds bits 32-39
    "address.hi": ("IFM_BASE0", 0, 8),
    # config_r (not a command): MACs per cycle (log2) and weight decoders (log2)
    "config.macs": ("CONFIG", 0, 4), "config.num_wd": ("CONFIG", 12, 2),
    # RESIZE_X / RESIZE_Y (cmd1): the integer steps in the parameter, their remainders in the payload
    "resize.one_step_int": ("RESIZE_X", 0, 4), "resize.blk_step_int": ("RESIZE_X", 4, 11),
    "resize.one_step_mod": ("RESIZE_X", 0, 11), "resize.blk_step_mod": ("RESIZE_X", 16, 11),
    # NPU_OP_POOL and NPU_OP_ELEMENTWISE: the mode in the parameter
    "pool.mode": ("NPU_OP_POOL", 0, 3), "elementwise.mode": ("NPU_OP_ELEMENTWISE", 0, 6),
    "resize_op.mode": ("NPU_OP_RESIZE", 0, 2),
}


def field(name: str) -> Field:
    """The named field (``"ofm.transpose"``); the register named is the one the field was read from
    in the register map, and the same layout holds for its twins (IFM2_PRECISION, IFM2_SCALE, ...)."""
    register, lsb, width = FIELDS[name]
    return Field(register, lsb, width)


def bits(name: str, value: int) -> int:
    """The named field of a register's ``value``."""
    return field(name).of(value)
