"""The NPU's address space: numbered regions of bytes, each bounds-checked, region 0 read-only.

The runtime hands the driver three base pointers (ExecuTorch's ``EthosUBackend_Cortex_M.cpp``):
region 0 is the payload's ``weight_data`` (flash), region 1 the scratch arena holding the
inputs, outputs and intermediate tensors, region 2 the fast scratch (empty by default).
Every address in a command stream is an offset into one of them. The NPU's own SRAM
(SHRAM) is one more, ``SHRAM``: a DMA whose destination is in region mode INTERNAL writes
there, and the activation LUTs are read from its last 2 KiB.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from zoo.registry.command_stream.errors import StreamError

__all__ = ["SHRAM", "Memory", "Writers"]

SHRAM = 8
"""The key of the SHRAM in ``Memory.regions``: above the 3-bit region numbers a command can name."""


@dataclass
class Writers:
    """Which write last set each byte (``what`` of ``scatter``/``write``: the command and its byte offset
    in the stream), to explain a differing output. Off by default: it costs about a run's time again."""

    names: list[str] = field(default_factory=list)
    last: dict[int, np.ndarray[Any, Any]] = field(default_factory=dict)

    def wrote(self, region: int, size: int, addresses: np.ndarray[Any, Any] | slice, what: str) -> None:
        if region not in self.last:
            self.last[region] = np.full(size, -1, dtype=np.int32)
        if not self.names or self.names[-1] != what:
            self.names.append(what)
        self.last[region][addresses] = len(self.names) - 1

    def of(self, region: int, address: int) -> str | None:
        """The last write to byte ``address`` of ``region``; None if nothing wrote it."""
        index = int(self.last[region][address]) if region in self.last else -1
        return self.names[index] if index >= 0 else None


class Memory:
    def __init__(self, regions: dict[int, bytes | bytearray], read_only: frozenset[int] = frozenset({0}),
                 writers: Writers | None = None) -> None:
        self.regions = {k: np.frombuffer(bytearray(v), dtype=np.uint8) for k, v in regions.items()}
        self.read_only = read_only
        self.writers = writers

    def _region(self, region: int, what: str) -> np.ndarray[Any, Any]:
        if region not in self.regions:
            raise StreamError(f"{what} names region {region}, which the runtime does not map (regions: "
                              f"{', '.join(str(r) for r in sorted(self.regions))})")
        return self.regions[region]

    def _check(self, region: int, data: np.ndarray[Any, Any], low: int, high: int, what: str) -> None:
        if low < 0 or high > data.size:
            hint = " (the fast scratch: its size is the platform's, run(..., fast_scratch=))" if region == 2 else ""
            name = "the SHRAM" if region == SHRAM else f"region {region}"
            raise StreamError(f"{what} reaches bytes {low:#x}..{high:#x} of {name}, which holds "
                              f"{data.size:#x} bytes{hint}")

    def size(self, region: int, what: str) -> int:
        return int(self._region(region, what).size)

    def gather(self, region: int, addresses: np.ndarray[Any, Any], what: str) -> np.ndarray[Any, Any]:
        """The bytes at ``addresses`` (any shape)."""
        data = self._region(region, what)
        if addresses.size:
            self._check(region, data, int(addresses.min()), int(addresses.max()) + 1, what)
        return np.asarray(data[addresses])

    def scatter(self, region: int, addresses: np.ndarray[Any, Any], values: np.ndarray[Any, Any], what: str) -> None:
        data = self._region(region, what)
        if region in self.read_only:
            raise StreamError(f"{what} writes to region {region}, which is read-only (the weights in flash)")
        if addresses.size:
            self._check(region, data, int(addresses.min()), int(addresses.max()) + 1, what)
        data[addresses] = values
        if self.writers is not None:
            self.writers.wrote(region, data.size, addresses, what)

    def read(self, region: int, start: int, length: int, what: str) -> bytes:
        data = self._region(region, what)
        self._check(region, data, start, start + length, what)
        return data[start:start + length].tobytes()

    def write(self, region: int, start: int, values: bytes, what: str) -> None:
        data = self._region(region, what)
        if region in self.read_only:
            raise StreamError(f"{what} writes to region {region}, which is read-only (the weights in flash)")
        self._check(region, data, start, start + len(values), what)
        data[start:start + len(values)] = np.frombuffer(values, dtype=np.uint8)
        if self.writers is not None:
            self.writers.wrote(region, data.size, slice(start, start + len(values)), what)
