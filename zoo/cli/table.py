"""Plain-text tables for listing commands (rich costs ~50 ms to import; listing stays under 0.3 s)."""

from __future__ import annotations

import shutil
from collections.abc import Sequence


def render(headers: Sequence[str], rows: Sequence[Sequence[object]], *, width: int | None = None,
           optional_last: bool = False) -> str:
    """The rows under their headers, fitted to ``width`` (the terminal's by default) by
    cutting the last column short; with ``optional_last`` (a description) that column is
    left out where not even 10 characters of it would fit."""
    cells = [[str(h) for h in headers]] + [["" if c is None else str(c) for c in r] for r in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    total = width or shutil.get_terminal_size((100, 24)).columns
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
    return "\n".join(lines)
