"""NPU_OP_POOL: MAX (zero points 0) and AVERAGE without padding, global scale, 8-bit, then the activation (a clamp or a LUT).

MAX takes the largest ``ifm - ifm_zp`` of each window, AVERAGE the sum; both then go
through the output stage with ``OFM_SCALE``. Regor emits 1x1 AVERAGE pools with scale
``0x80000001 >> 31`` and strides of its own as copies and transposes.
"""

from __future__ import annotations

import numpy as np

from zoo.registry.command_stream.activation import activation
from zoo.registry.command_stream.errors import NotInterpreted
from zoo.registry.command_stream.kernel import block_op, windows
from zoo.registry.command_stream.memory import Memory
from zoo.registry.command_stream.output import output_stage
from zoo.registry.command_stream.regfile import Registers

__all__ = ["pool"]

MAX, AVERAGE = 0, 1
GLOBAL = 1


def pool(regs: Registers, memory: Memory, mode: int) -> None:
    if mode not in (MAX, AVERAGE):
        raise NotInterpreted(f"POOL mode {mode} (only MAX and AVERAGE are modelled)")
    op = block_op(regs)
    name = "MAX" if mode == MAX else "AVERAGE"
    if any(op.pad):
        raise NotInterpreted(f"POOL {name} with padding {op.pad}")
    if op.ofm.precision.scale_mode != GLOBAL:
        raise NotInterpreted(f"POOL {name} with per-channel scales")
    if mode == MAX and (op.ifm_zero_point or op.ofm_zero_point):
        # Regor writes 0 for both (TOSA's MAX_POOL2D has none); whether the hardware subtracts them is not checked.
        raise NotInterpreted(f"POOL MAX with zero points {op.ifm_zero_point} (IFM) and {op.ofm_zero_point} (OFM)")
    if op.dilation != (1, 1):
        raise NotInterpreted(f"POOL {name} with dilation {op.dilation}")
    act = activation(regs, memory, op.ofm.precision)
    ih, iw, ic = op.ifm_shape
    if ic != op.ofm_shape[2]:
        raise NotInterpreted(f"POOL {name} from {ic} to {op.ofm_shape[2]} channels")
    ifm = op.ifm.read(memory, ih, iw, ic, regs.op) - op.ifm_zero_point
    taps = [w for _, _, w in windows(op, ifm)]
    acc = np.maximum.reduce(taps) if mode == MAX else np.add.reduce(taps)
    scale, shift = regs["OFM_SCALE"], regs.param("OFM_SCALE") & 0x3F
    out = output_stage(acc, np.asarray(scale), np.asarray(shift), round_mode=op.ofm.precision.round_mode,
                       zero_point=op.ofm_zero_point, activation=act, dtype=op.ofm.precision.dtype, what=regs.op)
    op.ofm.write(memory, out, regs.op)
