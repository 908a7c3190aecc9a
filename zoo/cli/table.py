"""Plain-text tables for listing commands (rich costs ~50 ms to import; listing stays under 0.3 s)."""

from __future__ import annotations

import os
import shutil
import sys
import textwrap
from collections.abc import Sequence

from zoo._text import printable


def terminal_width() -> int | None:
    """The columns to fit: ``COLUMNS`` if set, else the terminal's; None when stdout is not a
    terminal, so that a pipe or a file gets whole lines."""
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    try:
        if not sys.stdout.isatty():
            return None
    except (AttributeError, ValueError):  # a replaced or closed stdout
        return None
    return shutil.get_terminal_size((100, 24)).columns


def render(headers: Sequence[str], rows: Sequence[Sequence[object]], *, width: int | None = None,
           optional_last: bool = False, drop: Sequence[str] = ()) -> str:
    """The rows under their headers, fitted to ``width`` (by default the terminal's; no
    limit when stdout is not a terminal). Too wide, it leaves out the columns named in
    ``drop``, in that order, and says so; then it cuts the last column short. With
    ``optional_last`` (a description) that column is left out where not even 10
    characters of it would fit."""
    cells = [[str(h) for h in headers]] + [["" if c is None else printable(str(c), one_line=True) for c in r] for r in rows]
    total = width if width is not None else terminal_width()
    dropped: list[str] = []
    if total is not None:
        for name in drop:
            if _width(cells) <= total:
                break
            if name in cells[0] and len(cells[0]) > 2:
                i = cells[0].index(name)
                cells = [row[:i] + row[i + 1:] for row in cells]
                dropped.append(name)
    widths = [max(len(row[i]) for row in cells) for i in range(len(cells[0]))]
    if total is not None:
        # Shrink the last column (usually a description) so lines fit the terminal; where not
        # even 10 characters of it would fit, leave it out rather than wrap every line.
        fixed = sum(widths[:-1]) + 2 * (len(widths) - 1)
        if optional_last and total - fixed < 10 and len(widths) > 2:
            cells = [row[:-1] for row in cells]
            widths = widths[:-1]
            fixed = sum(widths[:-1]) + 2 * (len(widths) - 1)
        widths[-1] = max(min(widths[-1], total - fixed), 10)
    lines = []
    for n, row in enumerate(cells):
        parts = []
        for i, cell in enumerate(row):
            if i == len(row) - 1:
                cell = cell if len(cell) <= widths[i] else cell[: widths[i] - 1] + "…"
                parts.append(cell)
            else:
                parts.append(cell.ljust(widths[i]))
        lines.append("  ".join(parts).rstrip())
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    if dropped:
        lines.append(wrap(f"({', '.join(dropped)} left out to fit {total} columns; a wider terminal, a pipe or "
                          "--json shows them)", total))
    return "\n".join(lines)


def wrap(prose: str, width: int | None) -> str:
    """A line of prose under a table, wrapped at ``width`` (None: whole, for a pipe) as the table is fitted,
    its later lines indented; a word longer than the line (a URL) stays whole."""
    if width is None or len(prose) <= width:
        return prose
    return textwrap.fill(prose, width, subsequent_indent="  ", break_long_words=False, break_on_hyphens=False)


def _width(cells: list[list[str]]) -> int:
    return sum(max(len(row[i]) for row in cells) for i in range(len(cells[0]))) + 2 * (len(cells[0]) - 1)
