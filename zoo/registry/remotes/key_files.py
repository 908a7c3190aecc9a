"""Reading key files (``--sign-key``, ``--trusted-key``, ``trusted_keys``) once,
from a file, a FIFO or a pipe (``--trusted-key <(…)``), without ever hanging.

A pipe can be read only once, and model-signing opens a key by its path again:
so each key is read once per process, kept, and handed to model-signing as a
private file where the original cannot be read twice. A FIFO that nobody
writes to reads as empty instead of blocking forever; one whose writer says
nothing for ``PIPE_TIMEOUT`` seconds is given up on.
"""

from __future__ import annotations

import os
import select
import stat
import time
from pathlib import Path

from zoo._errors import UsageError

MAX_KEY_BYTES = 1 << 16
"""A PEM key is under 1 KB; anything much bigger is not one."""
PIPE_TIMEOUT = 10.0

_read_once: dict[str, bytes] = {}


def absolute(path: Path) -> Path:
    """``path`` from the root, as written otherwise (``/dev/fd/63`` stays itself, not the pipe it links to)."""
    return Path(os.path.abspath(Path(path).expanduser()))


def read_key(path: Path, label: str) -> bytes:
    """The bytes of the key file ``path``; UsageError starting with ``label`` (which names
    the file, e.g. ``trusted key keys/ci.pub``) if it cannot be read."""
    where = str(absolute(path))
    if where not in _read_once:
        _read_once[where] = _read(Path(where), label)
    return _read_once[where]


def regular_copy(path: Path, data: bytes, folder: Path) -> Path:
    """A path model-signing can open for ``path``: itself if it is a regular file, else a
    private copy of ``data`` in ``folder`` (which the caller removes)."""
    try:
        if stat.S_ISREG(os.stat(path).st_mode):
            return path
    except OSError:
        pass
    copy = folder / f"key-{len(list(folder.iterdir()))}.pem"
    fd = os.open(copy, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    return copy


def _read(path: Path, what: str) -> bytes:
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise UsageError(f"{what}: no such file") from None
    except OSError as exc:
        raise UsageError(f"{what}: cannot read it: {exc.strerror or exc}") from None
    if stat.S_ISDIR(mode):
        raise UsageError(f"{what} is a folder; give the key's PEM file")
    try:
        if stat.S_ISREG(mode):
            with path.open("rb") as f:
                data = f.read(MAX_KEY_BYTES + 1)
        else:  # a FIFO, a pipe or a device: opened without blocking, read with a deadline
            data = _read_stream(path, what)
    except OSError as exc:
        raise UsageError(f"{what}: cannot read it: {exc.strerror or exc}") from None
    if len(data) > MAX_KEY_BYTES:
        raise UsageError(f"{what} is more than {MAX_KEY_BYTES // 1024} KiB: not a PEM key")
    if not data.strip():
        kind = "" if stat.S_ISREG(mode) else " (a FIFO or pipe that nothing wrote to)"
        raise UsageError(f"{what} is empty{kind}; give the key's PEM file")
    return data


def _read_stream(path: Path, what: str) -> bytes:
    """Until end of file, or the deadline. A FIFO whose writer has not opened it yet
    reads as end of file too, so an empty read counts only after ``_WRITER_GRACE``."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        chunks: list[bytes] = []
        size = 0
        start = time.monotonic()
        while size <= MAX_KEY_BYTES:
            waited = time.monotonic() - start
            if waited > PIPE_TIMEOUT:
                raise UsageError(f"{what}: nothing more arrived from it within {PIPE_TIMEOUT:.0f} s; "
                                 "give the key's PEM file, or write the whole key into the FIFO")
            select.select([fd], [], [], 0.05)
            try:
                chunk = os.read(fd, 1 << 14)
            except BlockingIOError:  # a writer is there, and has not written yet
                continue
            if chunk:
                chunks.append(chunk)
                size += len(chunk)
            elif chunks or waited > _WRITER_GRACE:
                break
            else:
                time.sleep(0.02)
        return b"".join(chunks)
    finally:
        os.close(fd)


_WRITER_GRACE = 0.5
