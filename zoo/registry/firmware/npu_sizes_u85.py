"""The buffers of npu_model_u85 (the stand-in's C model of the Ethos-U85), sized from the program's own U85
command stream, as ``npu_sizes`` sizes the U55/U65 model's.

Each operation's needs are read through the host U85 interpreter's own register readers (its kernel shapes,
weight layouts and brick orders), so a buffer is exactly as large as the largest thing the interpreter reads
or writes of its kind: a map read whole (an IFM, IFM2 or MATMUL operand, a CONV's IFM and its 32-bit copy) or
an OFM computed before it is written (``map_values``), a chained OFM (``chain_values``), one CONV's or
DEPTHWISE's weights (its OHWI kernel, or every core's brick order, whichever is longer: ``weight_values``) and
its output channels (``channels``). An operation the walk cannot read (a register never set, a mode the model
does not have) adds nothing: the model stops there itself.
"""

from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass, replace

from zoo.registry.command_stream import NotInterpreted, StreamError
from zoo.registry.command_stream.u85 import accelerator, commands
from zoo.registry.command_stream.u85 import weights as w85
from zoo.registry.command_stream.u85.maps import CHAINED, TILE2X2
from zoo.registry.command_stream.u85.ops_block import Accelerator, shapes, weight_layout
from zoo.registry.command_stream.u85.regfile import U85Registers
from zoo.registry.command_stream.u85.regs import bits

__all__ = ["U85Sizes", "u85_program_sizes"]

_CONV, _DEPTHWISE, _POOL, _ELEMENTWISE, _RESIZE = ("NPU_OP_CONV", "NPU_OP_DEPTHWISE", "NPU_OP_POOL",
                                                    "NPU_OP_ELEMENTWISE", "NPU_OP_RESIZE")
_POOLS_MODELLED = (0, 1, 2, 3, 4)  # MAX, AVERAGE, REDUCE_SUM, SUM, NONE
_NULL_POOL, _ABS = 4, 6
_BROADCAST = (1, 2, 4)  # IFM_BROADCAST's H, W and C bits


@dataclass(frozen=True)
class U85Sizes:
    weight_values: int = 1
    """Weights of one CONV or DEPTHWISE: its OHWI kernel, or every core's brick order with its pads, if longer."""
    map_values: int = 1
    """Values of one map read whole (an IFM, IFM2 or MATMUL operand), or of an OFM computed before it is written."""
    chain_values: int = 1
    """Values of one chained OFM (each of the eight chaining buffers holds one)."""
    channels: int = 1
    """Output channels whose scale records one operation reads."""
    operations: int = 0

    def larger(self, other: U85Sizes) -> U85Sizes:
        return U85Sizes(max(self.weight_values, other.weight_values), max(self.map_values, other.map_values),
                        max(self.chain_values, other.chain_values), max(self.channels, other.channels),
                        self.operations + other.operations)


def u85_program_sizes(cmd_data: bytes) -> U85Sizes:
    """The sizes one U85 command stream needs; none for a stream that is not a U85's or cannot be decoded."""
    sizes = U85Sizes()
    try:
        config, program = commands(cmd_data)
    except (StreamError, NotInterpreted):
        return sizes
    acc = accelerator(config)
    regs = U85Registers()
    for cmd in program:
        if cmd.name.startswith("NPU_SET_"):
            regs.set(cmd)
        elif cmd.name in (_CONV, _DEPTHWISE, _POOL, _ELEMENTWISE, _RESIZE):
            regs.op = f"{cmd.name.removeprefix('NPU_OP_')} at byte {cmd.offset:#x}"
            with contextlib.suppress(StreamError, NotInterpreted):  # the model stops there itself
                sizes = sizes.larger(_operation(regs, cmd.name, cmd.param, acc))
    return sizes


def _ofm(regs: U85Registers, elements: int, read: int) -> U85Sizes:
    """An operation that reads ``read`` map values and computes an OFM of ``elements``."""
    storage = bits("ofm.storage", regs["OFM_PRECISION"])
    return U85Sizes(map_values=max(read, elements if storage == TILE2X2 else 1),
                    chain_values=elements if storage == CHAINED else 1, operations=1)


def _operation(regs: U85Registers, name: str, param: int, acc: Accelerator) -> U85Sizes:
    if name == _CONV and param:  # MATMUL: OFM[n, h, w] = sum_c IFM[n, h, c] * IFM2[n, w, c]
        n, h, w = regs["OFM_HEIGHT_M1"] + 1, regs["OFM_WIDTH_M1"] + 1, regs["OFM_DEPTH_M1"] + 1
        c = regs["IFM_DEPTH_M1"] + 1
        return _ofm(regs, n * h * w, max(n * h * c, n * w * c))
    if name == _ELEMENTWISE:
        shape = (regs["OFM_HEIGHT_M1"] + 1, regs["OFM_WIDTH_M1"] + 1, regs["OFM_DEPTH_M1"] + 1)
        operands = ("IFM",) if bits("elementwise.mode", param) == _ABS else ("IFM", "IFM2")
        read = max(math.prod(1 if regs[f"{m}_BROADCAST"] & bit else n for bit, n in zip(_BROADCAST, shape, strict=True))
                   for m in operands)
        return _ofm(regs, math.prod(shape), read)
    if name == _RESIZE:
        shape = (regs["OFM_HEIGHT_M1"] + 1, regs["OFM_WIDTH_M1"] + 1, regs["OFM_DEPTH_M1"] + 1)
        return _ofm(regs, math.prod(shape),
                    (regs["KERNEL_HEIGHT_M1"] + 1) * (regs["KERNEL_WIDTH_M1"] + 1) * (regs["IFM_DEPTH_M1"] + 1))
    ofm, ifm = shapes(regs)
    if name == _POOL:
        mode = bits("pool.mode", param)
        if mode not in _POOLS_MODELLED:
            return U85Sizes()
        if mode == _NULL_POOL:  # its IFM2 in the OFM's shape, and per-channel records unless the scale is global
            per_channel = not bits("ofm.scale_mode", regs["OFM_PRECISION"])
            return replace(_ofm(regs, math.prod(ofm), math.prod(ofm)), channels=ofm[2] if per_channel else 1)
        return _ofm(regs, math.prod(ofm), math.prod(ifm))
    layout = weight_layout(regs, acc, depthwise=name == _DEPTHWISE)
    walked = sum(order.size for order in w85.brick_order(layout, bool(bits("weights.format", regs["WEIGHT_FORMAT"]))))
    kernel = layout.ofm_depth * layout.kernel_h * layout.kernel_w * layout.ifm_depth
    return replace(_ofm(regs, math.prod(ofm), math.prod(ifm)), weight_values=max(kernel, walked), channels=ofm[2])
