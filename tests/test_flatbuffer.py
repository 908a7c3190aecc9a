"""zoo._flatbuffer, the bounded reader under the .tflite and .pte readers, on hand-made bytes: every
damaged or hostile buffer gives the reader's own error, never a struct error nor a read past the end."""

from __future__ import annotations

import struct

import pytest

from zoo._flatbuffer import Reader, Table

# The root offset; a vtable of two fields (a vector, an int32); the table; the vector (1, 2, 3).
GOOD = (struct.pack("<I", 12) + struct.pack("<4H", 8, 12, 4, 8) + struct.pack("<iIi", 8, 8, 7)
        + struct.pack("<I3i", 3, 1, 2, 3))


def _read(data: bytes, reader: type[Reader] = Reader, end: int | None = None) -> tuple[tuple[int, ...], int]:
    root: Table = reader(data, end).root("test")
    return root.ints(0, "the vector"), root.scalar(1, "<i")


def test_a_good_buffer_reads() -> None:
    assert _read(GOOD) == ((1, 2, 3), 7)
    root = Reader(GOOD).root("test")
    assert not root.has(2) and root.scalar(2, "<i", 5) == 5 and root.string(2, "absent") is None


@pytest.mark.parametrize("keep", range(len(GOOD)))
def test_every_truncation_is_named(keep: int) -> None:
    with pytest.raises(ValueError, match=r"not a readable flatbuffer: .* lies outside its"):
        _read(GOOD[:keep])


def test_reads_stop_at_the_end_given_even_with_bytes_beyond() -> None:
    with pytest.raises(ValueError, match=r"the vector at byte 28 \(12 bytes\) lies outside its 32 bytes"):
        _read(GOOD + bytes(8), end=32)


@pytest.mark.parametrize("at", range(len(GOOD)))
def test_any_byte_made_hostile_reads_or_is_refused(at: int) -> None:
    data = bytearray(GOOD)
    data[at] = 0xFF
    try:
        _read(bytes(data))
    except ValueError as exc:
        assert str(exc).startswith("not a readable flatbuffer: "), exc


def test_an_odd_vtable_size_is_refused() -> None:
    data = bytearray(GOOD)
    struct.pack_into("<H", data, 4, 7)
    with pytest.raises(ValueError, match="the test vtable has size 7"):
        _read(bytes(data))


class _Capped(Reader):
    max_vector = 2

    def fail(self, problem: str) -> Exception:
        return KeyError(problem)


def test_a_format_names_its_errors_and_caps_its_vectors() -> None:
    with pytest.raises(KeyError, match="the vector declares 3 elements"):
        _read(GOOD, _Capped)
    with pytest.raises(KeyError, match="lies outside its 20 bytes"):
        _read(GOOD[:20], _Capped)
