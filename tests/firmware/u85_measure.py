"""What the host U85 interpreter reads and writes whole while it runs a program, measured by wrapping its own
readers, OFM writer, brick orders and scale records: the sizes npu_model_u85's buffers must hold
(tests/firmware/test_npu_sizes_u85.py compares them with what ``npu_sizes_u85`` walks from the registers)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from zoo.registry.command_stream.u85 import (
    maps,
    ops_block,
    ops_elementwise,
    ops_matmul,
    ops_resize,
    run,
)
from zoo.registry.command_stream.u85 import weights as w85
from zoo.registry.firmware.npu_sizes_u85 import U85Sizes
from zoo.registry.pte.vela_payload import VelaPayload

__all__ = ["measured"]

_OPS_MODULES = (ops_block, ops_elementwise, ops_matmul, ops_resize)


def measured(program: VelaPayload, inputs: list[bytes]) -> tuple[list[bytes], U85Sizes]:
    """The interpreter's outputs, and the largest map it read whole or OFM it computed (``map_values``), chained
    OFM, weights (OHWI, or every core's brick order if longer) and scale records of one operation."""
    seen = {"map": 1, "chain": 1, "weights": 1, "channels": 1}

    def note(kind: str, n: int) -> None:
        seen[kind] = max(seen[kind], n)

    def reader(regs: Any, memory: Any, chains: Any, m: maps.Map) -> maps.Reader:
        read = maps.reader(regs, memory, chains, m)

        def counted(h: int, w: int, c: int) -> np.ndarray[Any, Any]:
            note("map", h * w * c)
            return read(h, w, c)
        return counted

    def write_ofm(memory: Any, chains: Any, ofm: maps.Map, values: np.ndarray[Any, Any], what: str) -> None:
        note("chain" if ofm.storage == maps.CHAINED else "map" if ofm.storage == maps.TILE2X2 else "none", values.size)
        maps.write_ofm(memory, chains, ofm, values, what)

    brick_order, scale_records = w85.brick_order, w85.scale_records

    def orders(layout: w85.Layout, fwd: bool) -> tuple[np.ndarray[Any, Any], ...]:
        found = brick_order(layout, fwd)
        kernel = layout.ofm_depth * layout.kernel_h * layout.kernel_w * layout.ifm_depth
        note("weights", max(kernel, sum(o.size for o in found)))
        return found

    def records(data: bytes, channels: int, acc48: bool, what: str) -> Any:
        note("channels", channels)
        return scale_records(data, channels, acc48, what)

    seen["none"] = 0
    with pytest.MonkeyPatch.context() as mp:
        for module in _OPS_MODULES:
            mp.setattr(module, "reader", reader)
            mp.setattr(module, "write_ofm", write_ofm)
        mp.setattr(w85, "brick_order", orders)
        mp.setattr(w85, "scale_records", records)
        ops_block._kept.clear()  # the weights' cache would skip the decode, not the brick order: cleared all the same
        outputs = run(program, inputs)
    return outputs, U85Sizes(seen["weights"], seen["map"], seen["chain"], seen["channels"])
