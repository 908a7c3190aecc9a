"""A file opened for reading only if it is a regular file: a FIFO would block the read forever, and
a device (/dev/zero, or a link to it) never ends. Opened non-blocking so that neither can hang the
open itself; the type is read from the open file, not the name. Below every layer that reads
files a user or a remote names (a recipe, a directory remote)."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import BinaryIO


def open_regular(path: Path) -> BinaryIO | None:
    """``path`` opened for reading in binary, or None if it is not a regular file. OSError as ``os.open``."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            return None
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
