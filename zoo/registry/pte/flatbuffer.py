"""The ``.pte`` readers' flatbuffer reader: zoo's bounded one (``zoo._flatbuffer``), whose damaged
reads give a PteFormatError naming what was read."""

from __future__ import annotations

from zoo import _flatbuffer
from zoo._flatbuffer import Table

__all__ = ["PteFormatError", "Reader", "Table"]


class PteFormatError(ValueError):
    """The bytes are not a readable .pte; the message says what is wrong."""


class Reader(_flatbuffer.Reader):
    """Bounds-checked reads of the program flatbuffer in ``data[:end]``."""

    def __init__(self, data: bytes, end: int) -> None:
        super().__init__(data, end)

    def fail(self, problem: str) -> PteFormatError:
        return PteFormatError(f"the program flatbuffer is damaged: {problem}")

    def outside(self, what: str, pos: int, size: int) -> PteFormatError:
        return self.fail(f"{what} at byte {pos} lies outside its {self.end:,} bytes")
