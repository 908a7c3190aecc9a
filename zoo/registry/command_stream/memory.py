"""The NPU's address space: numbered regions of bytes, each bounds-checked, region 0 read-only.

The runtime hands the driver three base pointers (ExecuTorch's ``EthosUBackend_Cortex_M.cpp``):
region 0 is the payload's ``weight_data`` (flash), region 1 the scratch arena holding the
inputs, outputs and intermediate tensors, region 2 the fast scratch (empty by default).
Every address in a command stream is an offset into one of them.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from zoo.registry.command_stream.errors import StreamError

__all__ = ["Memory"]


class Memory:
    def __init__(self, regions: dict[int, bytes | bytearray], read_only: frozenset[int] = frozenset({0})) -> None:
        self.regions = {k: np.frombuffer(bytearray(v), dtype=np.uint8) for k, v in regions.items()}
        self.read_only = read_only

    def _region(self, region: int, what: str) -> np.ndarray[Any, Any]:
        if region not in self.regions:
            raise StreamError(f"{what} names region {region}, which the runtime does not map (regions: "
                              f"{', '.join(str(r) for r in sorted(self.regions))})")
        return self.regions[region]

    def _check(self, region: int, data: np.ndarray[Any, Any], low: int, high: int, what: str) -> None:
        if low < 0 or high > data.size:
            hint = " (the fast scratch: its size is the platform's, run(..., fast_scratch=))" if region == 2 else ""
            raise StreamError(f"{what} reaches bytes {low:#x}..{high:#x} of region {region}, which holds "
                              f"{data.size:#x} bytes{hint}")

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
