"""NPU_OP_ELEMENTWISE ADD and SUB of two int8 tensors of the OFM's shape, one operand rescaled (OPA_32/OPB_32).

The operands are ``a = ifm - ifm_zp`` and ``b = ifm2 - ifm2_zp``. The IFM scale mode names
the operand to rescale, by ``OPA_SCALE`` (32-bit scale, 6-bit shift) rounded by the IFM
round mode; the other is shifted left by 19 bits. The sum (or difference) goes through the
output stage with ``OFM_SCALE``.

The 19 is not in any document available offline; it was settled against the TOSA reference
model on Regor's resnet8-cifar and mv2 programs (u55-128: 18, 20 and 16 all fail). It is what
ExecuTorch's lowering does: both int8 operands go to int32 at ``2*max(scale)/2**20``, so the
larger-scale operand is multiplied by exactly ``2**19`` and only the other is rounded (legacy
Vela's ``advanced_elementwise_add_sub_scale`` likewise, with ``input_shift`` 20).
"""

from __future__ import annotations

import numpy as np

from zoo.registry.command_stream.errors import NotInterpreted
from zoo.registry.command_stream.fmap import feature_map, ifm_precision, ofm_precision
from zoo.registry.command_stream.memory import Memory
from zoo.registry.command_stream.output import output_stage, scaled
from zoo.registry.command_stream.regfile import Registers

__all__ = ["elementwise"]

ADD, SUB = 1, 2
OPA_32, OPB_32 = 1, 2
GLOBAL = 1
UNSCALED_SHIFT = 19


def elementwise(regs: Registers, memory: Memory, mode: int) -> None:
    if mode not in (ADD, SUB):
        raise NotInterpreted(f"ELEMENTWISE mode {mode} (only ADD and SUB are modelled)")
    name = "ADD" if mode == ADD else "SUB"
    if regs["IFM2_BROADCAST"]:
        raise NotInterpreted(f"ELEMENTWISE {name} with IFM2_BROADCAST {regs['IFM2_BROADCAST']:#x}")
    if regs["ACC_FORMAT"]:
        raise NotInterpreted(f"ELEMENTWISE {name} with ACC_FORMAT {regs['ACC_FORMAT']}")
    activation = regs["ACTIVATION"]
    if activation & 0x1F or (activation >> 12) & 7:
        raise NotInterpreted(f"ELEMENTWISE {name} with ACTIVATION {activation:#x}")
    ifm_p, ifm2_p = ifm_precision(regs["IFM_PRECISION"]), ifm_precision(regs["IFM2_PRECISION"], "IFM2")
    ofm_p = ofm_precision(regs["OFM_PRECISION"])
    for label, p in (("IFM", ifm_p), ("IFM2", ifm2_p), ("OFM", ofm_p)):
        if p.bits != 8:
            raise NotInterpreted(f"ELEMENTWISE {name} with a {p.bits}-bit {label}")
    if ifm_p.scale_mode not in (OPA_32, OPB_32):
        raise NotInterpreted(f"ELEMENTWISE {name} with IFM scale mode {ifm_p.scale_mode} (16-bit operand scales)")
    if ofm_p.scale_mode != GLOBAL:
        raise NotInterpreted(f"ELEMENTWISE {name} with per-channel OFM scales")
    shape = (regs["OFM_HEIGHT_M1"] + 1, regs["OFM_WIDTH_M1"] + 1, regs["OFM_DEPTH_M1"] + 1)
    a = feature_map(regs, "IFM", ifm_p).read(memory, *shape, regs.op) - regs["IFM_ZERO_POINT"]
    b = feature_map(regs, "IFM2", ifm2_p).read(memory, *shape, regs.op) - regs["IFM2_ZERO_POINT"]
    opa = (np.asarray(regs["OPA_SCALE"]), np.asarray(regs.param("OPA_SCALE") & 0x3F))
    if ifm_p.scale_mode == OPA_32:
        a, b = scaled(a, *opa, ifm_p.round_mode), b << UNSCALED_SHIFT
    else:
        a, b = a << UNSCALED_SHIFT, scaled(b, *opa, ifm_p.round_mode)
    acc = a + b if mode == ADD else a - b
    out = output_stage(acc, np.asarray(regs["OFM_SCALE"]), np.asarray(regs.param("OFM_SCALE") & 0x3F),
                       round_mode=ofm_p.round_mode, zero_point=regs["OFM_ZERO_POINT"],
                       clamp=(regs["ACTIVATION_MIN"], regs["ACTIVATION_MAX"]), dtype=ofm_p.dtype, what=regs.op)
    feature_map(regs, "OFM", ofm_p).write(memory, out, regs.op)
