"""Where a program's operations read their weights and scales from in flash (the payload's weight_data):
through the registers and the DMAs that copied them, as the interpreter reads them."""

from __future__ import annotations

from dataclasses import dataclass

from zoo.registry.command_stream import program_of
from zoo.registry.pte.vela_payload import VelaPayload


@dataclass(frozen=True)
class Op:
    name: str
    """``CONV at byte 0x798``."""
    registers: dict[str, int]
    streams: dict[str, tuple[int, int]]
    """``WEIGHT``, ``SCALE``, ``WEIGHT1``, ``SCALE1``: (offset in weight_data, length)."""


def _flash(region: int, at: int, dmas: list[tuple[int, int, int, int, int]]) -> int:
    """The weight_data offset a byte at ``at`` of ``region`` was copied from (the last DMA that wrote it)."""
    if region == 0:
        return at
    for src_region, src, dst_region, dst, length in reversed(dmas):
        if dst_region == region and dst <= at < dst + length and src_region == 0:
            return src + at - dst
    raise AssertionError(f"byte {at:#x} of region {region} was not copied from flash")


def operations(payload: VelaPayload) -> tuple[list[Op], list[tuple[int, int]]]:
    """Each CONV/DEPTHWISE with its streams' flash ranges, and every flash range a DMA or a stream reads."""
    regs: dict[str, int] = {}
    dmas: list[tuple[int, int, int, int, int]] = []
    ops, reads = [], []
    for cmd in program_of(payload).commands:
        if cmd.name.startswith("NPU_SET_"):
            regs[cmd.name.removeprefix("NPU_SET_")] = cmd.payload if cmd.payload is not None else cmd.param
        elif cmd.name == "NPU_OP_DMA_START":
            dma = (regs["DMA0_SRC_REGION"] & 7, regs["DMA0_SRC"], regs["DMA0_DST_REGION"] & 7, regs["DMA0_DST"],
                   regs["DMA0_LEN"])
            dmas.append(dma)
            if dma[0] == 0:
                reads.append((dma[1], dma[4]))
        elif cmd.name in ("NPU_OP_CONV", "NPU_OP_DEPTHWISE"):
            streams = {}
            for kind, region in (("WEIGHT", "WEIGHT_REGION"), ("SCALE", "SCALE_REGION")):
                for suffix in ("", "1"):
                    length = regs.get(f"{kind}{suffix}_LENGTH", 0)
                    if length:
                        at = _flash(regs[region] & 7, regs[f"{kind}{suffix}_BASE"], dmas)
                        streams[f"{kind}{suffix}"] = (at, length)
                        reads.append((at, length))
            ops.append(Op(f"{cmd.name.removeprefix('NPU_OP_')} at byte {cmd.offset:#x}", dict(regs), streams))
    return ops, reads
