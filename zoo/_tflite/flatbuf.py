"""A bounds-checked reader of the flatbuffer tables, vectors and strings of a ``.tflite`` file.

Every read is checked against the file's length first: damaged or hostile bytes give a
SpecError naming what was read and where, never a struct error nor a read beyond the file.
(The ``.pte`` reader has its own, in the engine; this one is a leaf's, below it.)
"""

from __future__ import annotations

import struct

from zoo._errors import SpecError

# No real model needs vectors this long; a hostile length stops here rather than in memory.
MAX_VECTOR = 1 << 28


class Reader:
    """Little-endian flatbuffer data in ``data``; ``where`` names the file in errors."""

    def __init__(self, data: bytes, where: str) -> None:
        self.data = data
        self.where = where

    def fail(self, what: str) -> SpecError:
        return SpecError(f"{self.where}: not a readable TFLite model: {what}. "
                         "Check that the file is a complete .tflite (e.g. its sha256 against the source's)")

    def check(self, pos: int, size: int, what: str) -> None:
        if pos < 0 or size < 0 or pos + size > len(self.data):
            raise self.fail(f"{what} at byte {pos} ({size} bytes) lies outside the file's {len(self.data):,} bytes")

    def scalar(self, fmt: str, pos: int, what: str) -> int:
        size = struct.calcsize(fmt)
        self.check(pos, size, what)
        value: int = struct.unpack_from(fmt, self.data, pos)[0]
        return value

    def root(self) -> Table:
        return self.table(self.scalar("<I", 0, "the root table's offset"), "the model")

    def table(self, pos: int, what: str) -> Table:
        vtable = pos - self.scalar("<i", pos, f"the {what} table")
        vsize = self.scalar("<H", vtable, f"the {what} vtable")
        if vsize < 4 or vsize % 2:
            raise self.fail(f"the {what} vtable has size {vsize}")
        self.check(vtable, vsize, f"the {what} vtable")
        return Table(self, pos, vtable, vsize, what)

    def target(self, pos: int, what: str) -> int:
        return pos + self.scalar("<I", pos, what)

    def vector(self, pos: int, what: str, element: int) -> tuple[int, int]:
        start = self.target(pos, what)
        length = self.scalar("<I", start, f"the length of {what}")
        if length > MAX_VECTOR:
            raise self.fail(f"{what} declares {length:,} elements")
        self.check(start + 4, length * element, what)
        return start + 4, length


class Table:
    def __init__(self, reader: Reader, pos: int, vtable: int, vsize: int, what: str) -> None:
        self.r = reader
        self.pos = pos
        self.vtable = vtable
        self.vsize = vsize
        self.what = what

    def has(self, fid: int) -> bool:
        return self._field(fid) != 0

    def _field(self, fid: int) -> int:
        slot = 4 + 2 * fid
        if slot + 2 > self.vsize:
            return 0
        off = self.r.scalar("<H", self.vtable + slot, f"the {self.what} vtable")
        return self.pos + off if off else 0

    def scalar(self, fid: int, fmt: str, default: int = 0) -> int:
        at = self._field(fid)
        return self.r.scalar(fmt, at, f"a field of the {self.what}") if at else default

    def real(self, fid: int, default: float) -> float:
        at = self._field(fid)
        if not at:
            return default
        self.r.check(at, 4, f"a field of the {self.what}")
        value: float = struct.unpack_from("<f", self.r.data, at)[0]
        return value

    def table(self, fid: int, what: str) -> Table | None:
        at = self._field(fid)
        return self.r.table(self.r.target(at, what), what) if at else None

    def string(self, fid: int, what: str) -> str:
        span = self.span(fid, what, 1)
        return "" if span is None else self.r.data[span[0]:span[0] + span[1]].decode("utf-8", "replace")

    def span(self, fid: int, what: str, element: int) -> tuple[int, int] | None:
        """(absolute start, element count) of a vector or string field."""
        at = self._field(fid)
        return self.r.vector(at, what, element) if at else None

    def numbers(self, fid: int, fmt: str, what: str) -> tuple[int | float, ...]:
        size = struct.calcsize(fmt)
        span = self.span(fid, what, size)
        if span is None or not span[1]:
            return ()
        values: tuple[int | float, ...] = struct.unpack_from(f"<{span[1]}{fmt}", self.r.data, span[0])
        return values

    def ints(self, fid: int, what: str, fmt: str = "i") -> tuple[int, ...]:
        return tuple(int(v) for v in self.numbers(fid, fmt, what))

    def tables(self, fid: int, what: str) -> list[Table]:
        span = self.span(fid, what, 4)
        if span is None:
            return []
        start, n = span
        return [self.r.table(self.r.target(start + 4 * i, what), what) for i in range(n)]
