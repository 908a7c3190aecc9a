"""How the engine reports back while it works: stage progress and one-line notices.

The engine never prints. It calls these; the CLI (or any caller) decides how
they look. Without a caller's notice, notices go to stderr as ``zoo: …``.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

from zoo._text import printable

Progress = Callable[[str, int | None, int | None], None]
"""``progress(stage, done, total)``: a stage starts (``done`` and ``total`` None) or advances."""

ByteProgress = Callable[[int, int | None], None]
"""``progress(done_bytes, total_bytes)`` during a download."""

Notice = Callable[[str], None]

DOWNLOAD_STAGE = "download"
"""Stages named ``download FILE`` count bytes, not samples."""
"""One line for the user: a skipped remote, a rebuilt entry, a substituted toolchain."""


def stderr_notice(message: str) -> None:
    print(f"zoo: {printable(message)}", file=sys.stderr)


def silent_progress(stage: str, done: int | None, total: int | None) -> None:
    pass
