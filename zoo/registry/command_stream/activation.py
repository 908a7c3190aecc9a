"""The ACTIVATION registers: after the output stage, a clamp, or a table lookup (LUT) in the SHRAM.

``ACTIVATION`` bits 0-4 are the function, bits 12-14 the clip range. Function 0 clamps the
OFM value to ``[ACTIVATION_MIN, ACTIVATION_MAX]`` (and to the OFM type): Vela's RELU and "no
activation" alike. Function ``16 + k`` (TABLE_k) looks the value, saturated to the 8-bit OFM
type, up in LUT slot k: 256 one-byte entries at ``k * 256`` in the SHRAM's last 2 KiB, where
the stream's DMAs in region mode INTERNAL put them (Vela's ``shram_lut_address``: the SHRAM
less 2 KiB on every U55/U65 configuration). Index ``v + 128`` for a signed OFM, ``v`` for an
unsigned one (Vela's ``lut.py``).

Both limits are 16-bit values in the OFM's signedness: Regor's ``GenerateActivation`` writes them
from the int16 minimum to the uint16 maximum, so an unsigned 16-bit OFM's top may be ``0xffff``
(65535, not -1) and a signed OFM's ReLU6 may end below zero (``0xfffa``, -6).

A 32-bit OFM is not clamped: ``ACTIVATION_MIN``/``MAX`` are 16-bit and Vela writes the int16
limits for it, while the int32 values of its own softmax (legacy ``softmax.py``) lie far outside
them; Regor's softmax is bit-exact with the TOSA reference model so. TANH and SIGMOID (3 and 4),
an int16 LUT (512 words of base and slope), a clip range other than the OFM's and a clamp
beside a table are not modelled.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from zoo.registry.command_stream.errors import NotInterpreted
from zoo.registry.command_stream.fmap import Precision
from zoo.registry.command_stream.memory import SHRAM, Memory
from zoo.registry.command_stream.regfile import Registers

__all__ = ["Activation", "activation"]

TABLE_0 = 16
LUT_BYTES, SLOT_BYTES = 2048, 256
_INT16 = (-(1 << 15), (1 << 15) - 1)


@dataclass(frozen=True)
class Activation:
    clamp: tuple[int, int] | None
    """The inclusive range after the OFM type's; None: the OFM type's alone."""
    table: np.ndarray[Any, Any] | None = None
    """256 OFM values indexed by the saturated value less the type's minimum."""

    def apply(self, values: np.ndarray[Any, Any], dtype: np.dtype[Any]) -> np.ndarray[Any, Any]:
        info = np.iinfo(dtype)
        low, high = int(info.min), int(info.max)
        if self.clamp is not None:
            low, high = max(self.clamp[0], low), min(self.clamp[1], high)
        v = np.clip(values, low, high)
        return v if self.table is None else self.table[v - int(info.min)]


def _limit(value: int, signed: bool) -> int:
    """A 16-bit ``ACTIVATION_MIN`` or ``ACTIVATION_MAX`` in the OFM's signedness."""
    raw = value & 0xFFFF
    return raw - 0x10000 if signed and raw & 0x8000 else raw


def activation(regs: Registers, memory: Memory, ofm: Precision) -> Activation:
    value = regs["ACTIVATION"]
    function, clip_range = value & 0x1F, (value >> 12) & 7
    clamp = (_limit(regs["ACTIVATION_MIN"], ofm.signed), _limit(regs["ACTIVATION_MAX"], ofm.signed))
    if clip_range:
        raise NotInterpreted(f"{regs.op} with activation clip range {clip_range}")
    if function == 0:
        if ofm.bits == 32:
            if clamp != _INT16:
                raise NotInterpreted(f"{regs.op} clamping a 32-bit OFM to {clamp}")
            return Activation(None)
        return Activation(clamp)
    if not TABLE_0 <= function < TABLE_0 + 8:
        raise NotInterpreted(f"{regs.op} with activation function {function} (tanh or sigmoid)")
    if ofm.bits != 8:
        raise NotInterpreted(f"{regs.op} with a LUT on a {ofm.bits}-bit OFM")
    info = np.iinfo(ofm.dtype)
    if clamp != (int(info.min), int(info.max)):
        raise NotInterpreted(f"{regs.op} with a LUT and the clamp {clamp}")
    shram = memory.regions[SHRAM]
    start = shram.size - LUT_BYTES + (function - TABLE_0) * SLOT_BYTES
    raw = memory.read(SHRAM, start, SLOT_BYTES, f"{regs.op} reading its LUT (slot {function - TABLE_0})")
    return Activation(None, np.frombuffer(raw, dtype=ofm.dtype).astype(np.int64))
