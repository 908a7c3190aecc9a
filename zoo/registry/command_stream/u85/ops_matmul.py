"""U85 MATMUL: ``NPU_OP_CONV`` with parameter 1, its weights the IFM2 map, TOSA's MATMUL of two activations.

Learnt from Regor's ``RewriteMatmul`` and ``GenerateCommon``: TOSA's ``A[N, H, C] @ B[N, C, W]`` runs with the
IFM ``A`` as an (N, H, C) map, the IFM2 ``B`` transposed (by an operation before it) to an (N, W, C) map,
and the OFM an (N, H, W) one: ``OFM[n, h, w] = sum_c (IFM[n, h, c] - zp) * (IFM2[n, w, c] - zp2)``, each
operand less its own zero point (``IFM_ZERO_POINT``, ``IFM2_ZERO_POINT``). The kernel is 1x1 without
padding; there is no scale stream: the accumulator (32-bit for 8-bit maps, 48-bit with ``ACC_FORMAT``
I48 for 16-bit ones) goes through ``OFM_SCALE``'s global scale (Regor writes the rescale TOSA puts after
the MATMUL there) and the activation. A scalar operand is not modelled; the broadcast registers are the
elementwise operations' (``ops_block.py``).
"""

from __future__ import annotations

import numpy as np

from zoo.registry.command_stream.errors import NotInterpreted, StreamError
from zoo.registry.command_stream.memory import Memory
from zoo.registry.command_stream.u85.maps import NONE, Chains, ifm_map, ofm_map, reader, write_ofm
from zoo.registry.command_stream.u85.regfile import U85Registers
from zoo.registry.command_stream.u85.regs import bits
from zoo.registry.command_stream.u85.stage import activation, ofm_scale, stage

__all__ = ["matmul"]


def matmul(regs: U85Registers, memory: Memory, chains: Chains) -> None:
    acc = regs["ACC_FORMAT"]
    if bits("acc.input", acc) or bits("acc.output", acc):
        raise NotInterpreted(f"{regs.op} (MATMUL) with ACC_FORMAT {acc:#x} (a kept accumulator, or no output)")
    if regs["IFM_UPSCALE"]:
        raise NotInterpreted(f"{regs.op} (MATMUL) with IFM_UPSCALE")
    if (regs["KERNEL_HEIGHT_M1"], regs["KERNEL_WIDTH_M1"]) != (0, 0) or any(
            regs[f"IFM_PAD_{side}"] for side in ("TOP", "LEFT", "BOTTOM", "RIGHT")):
        raise StreamError(f"{regs.op}: a MATMUL with a kernel other than 1x1, or padding")
    ofm, global_scale = ofm_map(regs)
    if not global_scale:
        raise StreamError(f"{regs.op}: a MATMUL with per-channel scales (it has no scale stream)")
    ifm, ifm2 = ifm_map(regs), ifm_map(regs, "IFM2")
    if NONE in (ifm.storage, ifm2.storage):
        raise NotInterpreted(f"{regs.op} (MATMUL) with a scalar operand")
    width = ifm.precision.bits
    if width != ifm2.precision.bits or width not in (8, 16) or (width == 16) != (bits("acc.format", acc) == 1):
        raise NotInterpreted(f"{regs.op} (MATMUL) of a {width}-bit IFM and a {ifm2.precision.bits}-bit IFM2, "
                             f"ACC_FORMAT {acc:#x}")
    n, h, w = regs["OFM_HEIGHT_M1"] + 1, regs["OFM_WIDTH_M1"] + 1, regs["OFM_DEPTH_M1"] + 1
    c = regs["IFM_DEPTH_M1"] + 1
    a = reader(regs, memory, chains, ifm)(n, h, c) - regs["IFM_ZERO_POINT"]
    b = reader(regs, memory, chains, ifm2)(n, w, c) - regs["IFM2_ZERO_POINT"]
    total = np.einsum("nhc,nwc->nhw", a, b)
    scale, shift, round_mode = ofm_scale(regs)
    out = stage(total, np.asarray(scale), np.asarray(shift), round_mode, regs["OFM_ZERO_POINT"],
                activation(regs, memory, ofm.dtype), ofm.dtype, regs.op, acc_bits=48 if width == 16 else 32)
    write_ofm(memory, chains, ofm, out, regs.op)
