"""Untrusted text made safe to print: a remote's index, a manifest, a model file's metadata or a
plugin's message may hold escape sequences that would retitle the window or clear the screen."""

from __future__ import annotations

import re

# C0 controls but tab and newline, DEL, C1 controls (0x9b alone starts a CSI sequence).
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_CONTROLS_IN_A_LINE = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def printable(text: str, *, one_line: bool = False) -> str:
    """``text`` with each control character written as its Python escape (ESC as ``\\x1b``), so
    that it is shown, never obeyed; ``one_line`` escapes newlines and tabs too (a table cell)."""
    pattern = _CONTROLS_IN_A_LINE if one_line else _CONTROLS
    return pattern.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)
