"""The fenced code blocks of the README and docs/, read as the docs tests read them.

A block that no test runs says so, and why, on the line directly above its fence:

    <!-- not run: needs an Arm Corstone FVP, which this machine does not have -->

(an HTML comment: neither MkDocs nor GitHub shows it). tests/test_docs_blocks.py holds every
Python and shell block to that.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from tests.conftest import ROOT

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
PYTHON = ("python", "py")
SHELL = ("sh", "bash", "shell", "console")
LIGHT = ("list", "targets", "info", "plugins", "--help", "--version")
"""What a docs line may run here: commands that compile nothing and touch no network."""

_FENCE = re.compile(r"^ *(`{3,}|~{3,})\s*([\w+-]*)")
MARKER = re.compile(r"^\s*<!--\s*not run\b(.*?)-->\s*$")
"""``<!-- not run: REASON -->``; group 1 is ``: REASON`` (anything else is a malformed marker)."""


@dataclass(frozen=True)
class Block:
    where: str
    """``docs/page.md:LINE``, the line of the opening fence."""
    lang: str
    text: str
    """The lines between the fences, each ending in a newline, as written (indentation kept)."""
    marker: str | None
    """The ``<!-- not run ... -->`` line directly above the fence, if there is one."""

    @property
    def reason(self) -> str:
        """The marker's reason; "" where there is no marker, or it gives none."""
        m = MARKER.match(self.marker or "")
        rest = m.group(1).strip() if m else ""
        return rest[1:].strip() if rest.startswith(":") else ""

    def lines(self) -> list[str]:
        """Its command lines, trailing ``  # comments`` cut (a console block's only after a ``$ `` prompt)."""
        out = []
        for line in self.text.splitlines():
            if self.lang == "console":
                if not line.lstrip().startswith("$ "):
                    continue
                line = line.lstrip()[2:]
            command = line.split(" #")[0].strip()
            if command and not command.startswith("#"):
                out.append(command)
        return out


def _name(page: Path) -> str:
    return str(page.relative_to(ROOT)) if page.is_relative_to(ROOT) else str(page)


def blocks(page: Path) -> list[Block]:
    lines = page.read_text(encoding="utf-8").splitlines()
    out, i = [], 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if m is None:
            i += 1
            continue
        fence, end = m.group(1), i + 1
        while end < len(lines) and not re.fullmatch(rf" *{re.escape(fence[0])}{{{len(fence)},}}\s*", lines[end]):
            end += 1
        above = lines[i - 1] if i else ""
        out.append(Block(f"{_name(page)}:{i + 1}", m.group(2), "".join(f"{x}\n" for x in lines[i + 1:end]),
                         above if MARKER.match(above) else None))
        i = end + 1
    return out


def stray_markers(page: Path) -> list[str]:
    """``FILE:LINE`` of each marker that is not directly above a fence, where it marks nothing."""
    lines = page.read_text(encoding="utf-8").splitlines()
    return [f"{_name(page)}:{n + 1}" for n, line in enumerate(lines)
            if MARKER.match(line) and not (n + 1 < len(lines) and _FENCE.match(lines[n + 1]))]


def light(command: str) -> bool:
    """A ``zoo`` line that compiles nothing and reaches no network: tests/test_docs_python.py runs it."""
    words = command.split()
    return len(words) > 1 and words[0] == "zoo" and words[1] in LIGHT
