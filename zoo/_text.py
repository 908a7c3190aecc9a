"""Untrusted text made safe to print: a remote's index, a manifest, a model file's metadata or a
plugin's message may hold escape sequences that would retitle the window or clear the screen, or
bidirectional controls and other invisible format characters that make it read as other text."""

from __future__ import annotations

import re
import unicodedata

# C0 controls but tab and newline, DEL, C1 controls (0x9b alone starts a CSI sequence), and any
# character outside ASCII, which is escaped only if it is a format character (below).
_UNSAFE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]|[^\x00-\x7f]")
_UNSAFE_IN_A_LINE = re.compile(r"[\x00-\x1f\x7f-\x9f]|[^\x00-\x7f]")
# Cf: bidi embeddings, overrides and isolates (U+202A-E, U+2066-9), the marks U+200E/F and
# U+061C, zero-width characters, the BOM; Zl/Zp: U+2028 and U+2029 break lines like a newline.
_INVISIBLE = frozenset({"Cc", "Cf", "Zl", "Zp"})


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    if char > "\x9f" and unicodedata.category(char) not in _INVISIBLE:
        return char
    return char.encode("unicode_escape").decode("ascii")


def printable(text: str, *, one_line: bool = False) -> str:
    """``text`` with each control or format character written as its Python escape (ESC as
    ``\\x1b``, RIGHT-TO-LEFT OVERRIDE as ``\\u202e``), so that it is shown, never obeyed;
    ``one_line`` escapes newlines and tabs too (a table cell)."""
    pattern = _UNSAFE_IN_A_LINE if one_line else _UNSAFE
    return pattern.sub(_escape, text)
