"""U85 feature maps: the U55's tile addressing (``fmap.FeatureMap``) read through the U85's precision fields,
chained maps that never reach memory, and the OFM's transposes and reversals.

``IFM_PRECISION``/``IFM2_PRECISION``: type bit 0, precision bits 2-3, format 6-7, storage 14-15;
``OFM_PRECISION``: type 0, precision 1-2, format 6-7, scale mode 8, reverse 9-10, transpose 11-13,
storage 14-15. Storage ``TILE2X2`` is memory in the U55's four tiles; ``CHAINED`` a chaining buffer,
numbered by the map's ``*_REGION``: the OFM of one operation, kept for an IFM or IFM2 of the next;
``NONE`` an IFM given as the scalar ``OP_SCALAR``, or an OFM not written.

The OFM's size registers give its shape before the transpose, its tile and stride registers the
transposed map's: an element at (y, x, c) goes to the transposed position (``CHW``: (c, y, x);
settled on mnist's CHW and mv2's WCH; deit-tiny's WHC, HCW and CWH, bit-exact on u85-256). A reversal
(``reverse``: H, W or C) mirrors the operation's own OFM along that axis before it is written: Regor points
the OFM's tiles at the box the operation writes whatever its reversal, and splits a long reversed axis into
operations whose boxes it mirrors itself (``DecomposeReverse``); settled on ``torch.flip`` along an
NCHW tensor's three axes (tests/ops_plugin.py's ops-flip: POOL SUM copies reversed along H and W in NHCWB16
and C in NHWC, bit-exact on u85-256). Regor never writes a reversal with a transpose or into a chaining
buffer. A chained map is read whole, in the shape it was written.

Precision B64 (8-byte elements) is read only where Regor writes it: a CONV or DEPTHWISE of 16-bit maps whose
48-bit result two RESCALEs read (they cannot both be folded into it: ``CanBeFused``) writes its accumulator
as a 64-bit OFM (int48 tensors are int64 in memory: ``ConvertInt48Tensors``), and each RESCALE is a null pool
that loads it from IFM2 into the 48-bit accumulator (``GenerateAccFormat``). Anywhere else it stops the run.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from zoo.registry.command_stream.errors import NotInterpreted, StreamError
from zoo.registry.command_stream.fmap import FeatureMap, Precision, feature_map
from zoo.registry.command_stream.memory import Memory
from zoo.registry.command_stream.u85.regfile import U85Registers
from zoo.registry.command_stream.u85.regs import bits

__all__ = ["CHAINED", "NONE", "TILE2X2", "Chains", "Map", "Reader", "ifm_map", "ofm_map", "reader", "write_ofm"]

TILE2X2, TILE3X1, CHAINED, NONE = 0, 1, 2, 3
_BITS = {0: 8, 1: 16, 2: 32, 3: 64}
B64 = 3
_TRANSPOSES = {0: "HWC", 1: "WHC", 2: "HCW", 3: "WCH", 6: "CHW", 7: "CWH"}
_REVERSE_AXES = {1: 0, 2: 1, 3: 2}

Chains = dict[int, np.ndarray[Any, Any]]
"""The chaining buffers: each one's values, as the operation that filled it left them."""
Reader = Callable[[int, int, int], np.ndarray[Any, Any]]


@dataclass(frozen=True)
class Map:
    name: str
    precision: Precision
    storage: int
    region: int
    memory_map: FeatureMap | None
    transpose: str = "HWC"
    reverse: int = 0

    @property
    def dtype(self) -> np.dtype[Any]:
        return self.precision.dtype


def _precision(value: int, prefix: str, what: str, b64: bool) -> tuple[Precision, int]:
    code = bits(f"{prefix}.precision", value)
    if code == B64 and not b64:
        raise NotInterpreted(f"{what} precision B64")
    layout = bits(f"{prefix}.format", value)
    if layout > 1:
        raise StreamError(f"{what} format {layout} is reserved")
    return Precision(bool(bits(f"{prefix}.type", value)), _BITS[code], layout, 0, 0), bits(f"{prefix}.storage", value)


def ifm_map(regs: U85Registers, name: str = "IFM", *, b64: bool = False) -> Map:
    """The IFM or IFM2; a 64-bit one only with ``b64`` (a null pool's accumulator)."""
    precision, storage = _precision(regs[f"{name}_PRECISION"], "ifm", name, b64)
    if storage == TILE3X1:
        raise NotInterpreted(f"{regs.op} with its {name} in storage TILE3X1")
    region = 0 if storage == NONE else regs[f"{name}_REGION"] & 7  # a scalar has no region: Regor may never set it
    fm = feature_map(regs, name, precision) if storage == TILE2X2 else None
    return Map(name, precision, storage, region, fm)


def ofm_map(regs: U85Registers, *, b64: bool = False) -> tuple[Map, bool]:
    """The OFM, and whether its scale is global (else per channel, from the scale stream); a 64-bit one only
    with ``b64`` (a convolution's 48-bit accumulator)."""
    value = regs["OFM_PRECISION"]
    precision, storage = _precision(value, "ofm", "OFM", b64)
    transpose = bits("ofm.transpose", value)
    if transpose not in _TRANSPOSES:
        raise StreamError(f"{regs.op}: OFM transpose {transpose} is reserved")
    if storage == TILE3X1:
        raise NotInterpreted(f"{regs.op} with its OFM in storage TILE3X1")
    fm = feature_map(regs, "OFM", precision) if storage == TILE2X2 else None
    return Map("OFM", precision, storage, regs["OFM_REGION"] & 7, fm, _TRANSPOSES[transpose],
               bits("ofm.reverse", value)), bool(bits("ofm.scale_mode", value))


def reader(regs: U85Registers, memory: Memory, chains: Chains, m: Map) -> Reader:
    """A function of (h, w, c) giving the map's first (h, w, c) elements as int64 (a scalar map: OP_SCALAR, signed as the map is)."""
    def read(h: int, w: int, c: int) -> np.ndarray[Any, Any]:
        if m.storage == NONE:
            width = m.precision.bits
            value = regs["OP_SCALAR"] & ((1 << width) - 1)
            if m.precision.signed and value >> (width - 1):
                value -= 1 << width
            return np.full((h, w, c), value, dtype=np.int64)
        if m.storage == CHAINED:
            held = chains.pop(m.region, None)
            if held is None:
                raise StreamError(f"{regs.op} reads its {m.name} from chaining buffer {m.region}, which no operation filled")
            if held.shape != (h, w, c):
                raise NotInterpreted(f"{regs.op} reading a {h}x{w}x{c} {m.name} from chaining buffer {m.region}, "
                                     f"which holds {held.shape[0]}x{held.shape[1]}x{held.shape[2]}")
            return held
        assert m.memory_map is not None
        return m.memory_map.read(memory, h, w, c, regs.op)
    return read


def write_ofm(memory: Memory, chains: Chains, ofm: Map, values: np.ndarray[Any, Any], what: str) -> None:
    """Write (or chain, or drop) the OFM's values, shaped as the size registers give them."""
    if ofm.storage == NONE:
        return
    if ofm.storage == CHAINED:
        if ofm.transpose != "HWC" or ofm.reverse:
            raise StreamError(f"{what}: a chained OFM with a transpose or reversal")
        chains[ofm.region] = values
        return
    if ofm.reverse:
        if ofm.transpose != "HWC":
            raise NotInterpreted(f"{what}: an OFM both transposed ({ofm.transpose}) and reversed, which Regor never writes")
        values = np.flip(values, axis=_REVERSE_AXES[ofm.reverse])
    elif ofm.transpose != "HWC":
        values = values.transpose(["HWC".index(a) for a in ofm.transpose])
    assert ofm.memory_map is not None
    ofm.memory_map.write(memory, np.ascontiguousarray(values), what)
