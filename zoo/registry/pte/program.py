"""A ``.pte`` parsed once: its bytes and their structure, handed from check to check.

A hand-out reads the file, parses it here, and passes the ``Program`` down: the structure
check, the memory figures, the header's macros and the fetch summary read it, none parses
the bytes again. Each further reading (the Vela payloads, a method's layout) is made the
first time it is asked for and kept, failure included.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeAlias, TypeVar

from zoo.registry.pte.method_layout import MethodLayout, read_method
from zoo.registry.pte.pte_structure import Delegate, PteFormatError, PteInfo, read_pte
from zoo.registry.pte.vela_payload import VelaPayload, find_payloads, parse_payload

__all__ = ["Parsed", "Program", "Unreadable", "parse", "read_program"]

_T = TypeVar("_T")


@dataclass(frozen=True, eq=False)
class Program:
    data: bytes
    info: PteInfo
    _readings: dict[tuple[str, object], object] = field(default_factory=dict, init=False, repr=False)

    def payloads(self) -> list[VelaPayload]:
        """Every Vela payload in the file, in file order (``find_payloads``); PayloadError for a damaged one."""
        return self._once(("payloads", None), lambda: find_payloads(self.data))

    def delegate_payload(self, delegate: Delegate) -> VelaPayload:
        """The Vela payload in ``delegate``'s processed bytes (``parse_payload``); PayloadError for a damaged one."""
        start, end = delegate.offset, delegate.offset + delegate.size
        return self._once(("payload", (start, end)), lambda: parse_payload(self.data, start, end))

    def method(self, name: str = "forward") -> MethodLayout:
        """Every value, delegate and call of method ``name`` (``method_layout``); PteFormatError if unreadable."""
        header = self.info.extended_header
        end = header.program_size if header else len(self.data)
        return self._once(("method", name), lambda: read_method(self.data, end, name))

    def _once(self, key: tuple[str, object], read: Callable[[], _T]) -> _T:
        if key not in self._readings:
            try:
                self._readings[key] = read()
            except ValueError as exc:  # PteFormatError, PayloadError: the same bytes fail the same way
                self._readings[key] = exc
        found = self._readings[key]
        if isinstance(found, ValueError):
            raise found
        return found  # type: ignore[return-value]


@dataclass(frozen=True, eq=False)
class Unreadable:
    """Bytes that are no readable .pte, and why: what the checks report instead of a ``Program``."""

    data: bytes
    error: PteFormatError


Parsed: TypeAlias = Program | Unreadable


def read_program(data: bytes) -> Program:
    """Parse ``data`` once; PteFormatError naming the first problem."""
    return Program(data, read_pte(data))


def parse(data: bytes) -> Parsed:
    """``read_program``, or what failed, for checks that report an unreadable file rather than stop."""
    try:
        return read_program(data)
    except PteFormatError as exc:
        return Unreadable(data, exc)
