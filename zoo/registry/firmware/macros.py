"""The grammar of what zoo writes into a C header: macro names and values, and labels.

A header is code that firmware compiles, and its macros and labels come from
manifests, which a remote may have written. So everything that reaches a header
is data of a strict grammar, checked where manifests are read (``manifest.py``)
and again where headers are rendered (``c_header.py``):

- a macro name is a lower-case C identifier (``model``, ``input0_scale``); the
  header writes it upper-case after the array's prefix, so case cannot make two
  names collide, and ``len`` and ``alignment`` are zoo's own;
- a macro value is an integer within 64 bits, a finite number, or a string of
  printable ASCII (rendered as a C string literal with ``"``, ``\\`` and ``?``
  escaped), or null (left out);
- a label is a string of printable characters (no newline or other control
  character), rendered the same way.
"""

from __future__ import annotations

import math
import re
import struct
from collections.abc import Mapping, Sequence

MAX_TEXT = 4096
"""Longer than any macro or label zoo writes (the longest, ``tools``, is about 200)."""
MAX_LABELS = 1 << 16
FLT_MAX = 3.4028234663852886e38
"""Float macros are C ``float`` literals (``c_number``)."""
RESERVED = frozenset({"len", "alignment"})
"""Macros every header defines itself, from the .pte."""

_NAME = re.compile(r"[a-z_][a-z0-9_]{0,63}\Z")
_PRINTABLE_ASCII = re.compile(r"[ -~]*\Z")


def macro_problem(name: object, value: object) -> str | None:
    """Why ``name = value`` cannot be a header macro; None if it can."""
    if not isinstance(name, str) or not _NAME.match(name):
        return f"macro name {str(name)[:40]!r} is not a lower-case C identifier"
    if name in RESERVED:
        return f"macro name {name!r} is zoo's own (it comes from the .pte)"
    if value is None:
        return None
    if isinstance(value, bool):
        return f"macro {name}: a boolean is not a C value"
    if isinstance(value, int):
        return None if -(1 << 63) <= value < (1 << 64) else f"macro {name}: {value} does not fit in 64 bits"
    if isinstance(value, float):
        if not math.isfinite(value):
            return f"macro {name}: {value} is not a finite number"
        return None if abs(value) <= FLT_MAX else f"macro {name}: {value} is beyond a C float's range"
    if isinstance(value, str):
        return _text_problem(f"macro {name}", value, ascii_only=True)
    return f"macro {name}: a {type(value).__name__} is not a number or a string"


def macros_problem(macros: object) -> str | None:
    """The first macro of ``macros`` that breaks the grammar; None if all keep it."""
    if not isinstance(macros, Mapping):
        return "the macros are not an object"
    return next((p for name, value in macros.items() if (p := macro_problem(name, value))), None)


def label_problem(index: int, label: object) -> str | None:
    if not isinstance(label, str):
        return f"label {index} is not a string"
    return _text_problem(f"label {index}", label, ascii_only=False)


def labels_problem(labels: object) -> str | None:
    if not isinstance(labels, Sequence) or isinstance(labels, str):
        return "the labels are not a list"
    if len(labels) > MAX_LABELS:
        return f"{len(labels)} labels are more than {MAX_LABELS}"
    return next((p for i, label in enumerate(labels) if (p := label_problem(i, label))), None)


def _text_problem(what: str, text: str, *, ascii_only: bool) -> str | None:
    if len(text) > MAX_TEXT:
        return f"{what} is {len(text)} characters long, more than {MAX_TEXT}"
    printable = _PRINTABLE_ASCII.match(text) is not None if ascii_only else text.isprintable()
    if not printable:
        bad = next(c for c in text if not (" " <= c <= "~" if ascii_only else c.isprintable()))
        kind = "printable ASCII" if ascii_only else "printable characters"
        return f"{what} holds {bad!r}: only {kind} may go into a C string"
    return None


def c_string(text: str) -> str:
    """``text`` as a C string literal. ``?`` is escaped too: ``??/`` is a backslash
    to a compiler that reads trigraphs, and would end the literal early."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("?", "\\?") + '"'


def c_escaped(text: str) -> str:
    """Any ``text`` as the inside of a C string literal, in printable ASCII: ``\\``, ``"`` and ``?``
    escaped (no trigraph), a newline as ``\\n``, and every other control character or non-ASCII
    character as the octal escapes of its UTF-8 bytes (three digits, so no digit after one is read
    into it). Also safe inside a ``//`` comment that goes on after it: it holds no line break."""
    out = []
    for char in text:
        if char in '\\"?':
            out.append("\\" + char)
        elif char == "\n":
            out.append("\\n")
        elif " " <= char <= "~":
            out.append(char)
        else:
            out.extend(f"\\{byte:03o}" for byte in char.encode("utf-8", "surrogatepass"))
    return "".join(out)


def c_number(value: int | float, name: str = "", *, legacy: bool = False) -> str:
    """A number as C source. A float is an ``f``-suffixed single-precision literal: a
    bare literal is a double, which ``-Wdouble-promotion`` rejects and which pulls
    software double arithmetic into a Cortex-M build. It is the shortest that gives
    the same float32 (``float32_bits``); where rounding matters the header has the
    exact bits too, as a ``*_bits`` integer, written in hex. ``legacy``: zoo's
    rendering before that (``repr``), only to check headers cached then."""
    if legacy or isinstance(value, bool):
        return repr(value)
    if isinstance(value, float):
        return float_literal(value)
    if name.endswith("_bits") and 0 <= value < (1 << 32):
        return f"0x{value:08x}u"
    if name.endswith("_bits") and 0 <= value < (1 << 64):  # a double's bits (a sensor's mean and std)
        return f"0x{value:016x}u"
    if value >= 1 << 63:  # no signed type holds it: a bare literal draws "so large that it is unsigned"
        return f"{value}ull"
    if value == -(1 << 63):  # a bare -9223372036854775808 negates a literal that no signed type holds
        return "(-9223372036854775807ll - 1)"
    return repr(value)


def float32_bits(value: float) -> int:
    """The IEEE-754 single-precision bits of ``value`` rounded to float32 (to nearest, even)."""
    return int.from_bytes(struct.pack("<f", value), "little")


def float_literal(value: float) -> str:
    """``value`` rounded to float32, as the shortest C ``float`` literal that reads back to
    those bits (at most 9 significant digits always do)."""
    bits = float32_bits(value)
    for digits in range(1, 10):
        text = f"{value:.{digits}g}"
        if float32_bits(float(text)) == bits:
            text = repr(float(text))  # "1e+02" reads as "100.0"
            break
    return text + "f"
