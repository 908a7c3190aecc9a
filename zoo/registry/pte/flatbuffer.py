"""A bounds-checked reader of flatbuffer tables, vectors and strings, for the ``.pte`` readers.

Every read is checked against the buffer's length first: damaged bytes give a PteFormatError
naming what was read, never a struct error or a read beyond the buffer.
"""

from __future__ import annotations

import struct

__all__ = ["PteFormatError", "Reader", "Table"]


class PteFormatError(ValueError):
    """The bytes are not a readable .pte; the message says what is wrong."""


class Reader:
    """Bounds-checked reads of little-endian flatbuffer data in ``data[:end]``."""

    def __init__(self, data: bytes, end: int) -> None:
        self.data = data
        self.end = end

    def _check(self, pos: int, size: int, what: str) -> None:
        if pos < 0 or pos + size > self.end:
            raise PteFormatError(
                f"the program flatbuffer is damaged: {what} at byte {pos} lies outside its "
                f"{self.end:,} bytes"
            )

    def scalar(self, fmt: str, pos: int, what: str = "a value") -> int:
        size = struct.calcsize(fmt)
        self._check(pos, size, what)
        value: int = struct.unpack_from(fmt, self.data, pos)[0]
        return value

    def table(self, pos: int, what: str) -> Table:
        vtable = pos - self.scalar("<i", pos, f"the {what} table")
        vsize = self.scalar("<H", vtable, f"the {what} vtable")
        if vsize < 4 or vsize % 2:
            raise PteFormatError(f"the program flatbuffer is damaged: the {what} vtable has size {vsize}")
        self._check(vtable, vsize, f"the {what} vtable")
        return Table(self, pos, vtable, vsize, what)

    def target(self, pos: int, what: str) -> int:
        return pos + self.scalar("<I", pos, what)

    def vector(self, pos: int, what: str, element: int) -> tuple[int, int]:
        start = self.target(pos, what)
        length = self.scalar("<I", start, f"the length of {what}")
        self._check(start + 4, length * element, what)
        return start + 4, length


class Table:
    def __init__(self, reader: Reader, pos: int, vtable: int, vsize: int, what: str) -> None:
        self.r = reader
        self.pos = pos
        self.vtable = vtable
        self.vsize = vsize
        self.what = what

    def _field(self, fid: int) -> int:
        slot = 4 + 2 * fid
        if slot + 2 > self.vsize:
            return 0
        off = self.r.scalar("<H", self.vtable + slot)
        return self.pos + off if off else 0

    def scalar(self, fid: int, fmt: str, default: int = 0) -> int:
        at = self._field(fid)
        return self.r.scalar(fmt, at, f"a field of {self.what}") if at else default

    def number(self, fid: int, fmt: str) -> int | float:
        at = self._field(fid)
        if not at:
            return 0
        self.r._check(at, struct.calcsize(fmt), f"a field of {self.what}")
        value: int | float = struct.unpack_from(fmt, self.r.data, at)[0]
        return value

    def table(self, fid: int, what: str) -> Table | None:
        at = self._field(fid)
        return self.r.table(self.r.target(at, what), what) if at else None

    def string(self, fid: int, what: str) -> str | None:
        raw = self.raw(fid, what)
        return None if raw is None else raw.decode("utf-8", "replace")

    def raw(self, fid: int, what: str) -> bytes | None:
        span = self.span(fid, what)
        return None if span is None else self.r.data[span[0]:span[0] + span[1]]

    def span(self, fid: int, what: str, element: int = 1) -> tuple[int, int] | None:
        """(absolute start, element count) of a vector or string field."""
        at = self._field(fid)
        return self.r.vector(at, what, element) if at else None

    def scalars(self, fid: int, fmt: str, what: str) -> tuple[int, ...]:
        size = struct.calcsize(fmt)
        span = self.span(fid, what, size)
        if span is None:
            return ()
        start, n = span
        return struct.unpack_from(f"<{n}{fmt.lstrip('<')}", self.r.data, start) if n else ()

    def tables(self, fid: int, what: str) -> list[Table]:
        span = self.span(fid, what, 4)
        if span is None:
            return []
        start, n = span
        return [self.r.table(self.r.target(start + 4 * i, what), what) for i in range(n)]
