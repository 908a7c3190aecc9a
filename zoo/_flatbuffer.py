"""A bounds-checked reader of flatbuffer tables, vectors and strings: the one reader under both the
``.pte`` reader (``zoo.registry.pte``) and the ``.tflite`` reader (``zoo._tflite``).

Every read is checked against the data's end first: damaged or hostile bytes give the error the
format's reader names (its subclass's ``fail`` and ``outside``), never a struct error nor a read
beyond the data.
"""

from __future__ import annotations

import struct

__all__ = ["Reader", "Table"]


class Reader:
    """Little-endian flatbuffer data in ``data[:end]`` (all of ``data`` when ``end`` is None).

    A format subclasses it to name its errors: ``fail`` makes one from what is wrong, ``outside``
    from a read past the end. ``max_vector``, when set, caps a vector's declared length before
    its bytes are checked, so that a hostile length is named as such.
    """

    max_vector: int | None = None

    def __init__(self, data: bytes, end: int | None = None) -> None:
        self.data = data
        self.end = len(data) if end is None else end

    def fail(self, problem: str) -> Exception:
        return ValueError(f"not a readable flatbuffer: {problem}")

    def outside(self, what: str, pos: int, size: int) -> Exception:
        return self.fail(f"{what} at byte {pos} ({size} bytes) lies outside its {self.end:,} bytes")

    def check(self, pos: int, size: int, what: str) -> None:
        if pos < 0 or size < 0 or pos + size > self.end:
            raise self.outside(what, pos, size)

    def scalar(self, fmt: str, pos: int, what: str) -> int:
        self.check(pos, struct.calcsize(fmt), what)
        value: int = struct.unpack_from(fmt, self.data, pos)[0]
        return value

    def root(self, what: str) -> Table:
        return self.table(self.scalar("<I", 0, "the root offset"), what)

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
        """(absolute start, element count) of the vector or string that ``pos`` points to."""
        start = self.target(pos, what)
        length = self.scalar("<I", start, f"the length of {what}")
        if self.max_vector is not None and length > self.max_vector:
            raise self.fail(f"{what} declares {length:,} elements")
        self.check(start + 4, length * element, what)
        return start + 4, length


class Table:
    """One table: its fields by id (their order in the schema), absent ones as the default."""

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
        return self.r.scalar(fmt, at, f"a field of {self.what}") if at else default

    def number(self, fid: int, fmt: str, default: int | float = 0) -> int | float:
        """A field of any scalar type, floats too (``scalar`` is for integers)."""
        at = self._field(fid)
        if not at:
            return default
        self.r.check(at, struct.calcsize(fmt), f"a field of {self.what}")
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

    def numbers(self, fid: int, fmt: str, what: str) -> tuple[int | float, ...]:
        """A vector field of the scalar type ``fmt`` (a struct code: "i", "q", "f", ...)."""
        span = self.span(fid, what, struct.calcsize(fmt))
        if span is None or not span[1]:
            return ()
        values: tuple[int | float, ...] = struct.unpack_from(f"<{span[1]}{fmt.lstrip('<')}", self.r.data, span[0])
        return values

    def ints(self, fid: int, what: str, fmt: str = "i") -> tuple[int, ...]:
        return tuple(int(v) for v in self.numbers(fid, fmt, what))

    def tables(self, fid: int, what: str) -> list[Table]:
        span = self.span(fid, what, 4)
        if span is None:
            return []
        start, n = span
        return [self.r.table(self.r.target(start + 4 * i, what), what) for i in range(n)]
