"""Stage, then rename: the one way zoo writes anything a reader may see.

Every file or folder is written under a fresh, unique temporary name in the
folder it will live in (so a rename never crosses file systems, a planted
symlink is never written through, and concurrent writers never share a name),
then renamed into place. A reader sees the old thing, nothing, or the whole
new thing; never part of one.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path

_CHUNK = 1 << 20


def _default_mode() -> int:
    # What open() would have made: temporary files start private (0600).
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def _temp_file(folder: Path, name: str) -> tuple[int, Path]:
    # mkstemp opens with O_CREAT | O_EXCL: a fresh inode, never an existing file or symlink.
    fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".zoo-tmp", dir=folder)
    return fd, Path(tmp)


def write_atomic(path: Path, data: bytes, *, mode: int | None = None) -> None:
    """Write ``data`` to ``path`` so that no reader ever sees a partial file."""
    replace_all([(path, data)], mode=mode)


def replace_all(plan: Sequence[tuple[Path, bytes | Path]], *, mode: int | None = None) -> None:
    """Write every ``(final path, bytes or source file)`` in ``plan``: all staged
    first, then renamed into place, so a failure leaves none of them changed."""
    staged: list[tuple[Path, Path]] = []
    try:
        for final, source in plan:
            final.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = _temp_file(final.parent, final.name)
            staged.append((tmp, final))
            with os.fdopen(fd, "wb") as out:
                if isinstance(source, Path):
                    with source.open("rb") as src:
                        shutil.copyfileobj(src, out, _CHUNK)
                else:
                    out.write(source)
                out.flush()
                os.fsync(out.fileno())
            os.chmod(tmp, _default_mode() if mode is None else mode)
        for tmp, final in staged:
            os.replace(tmp, final)
    finally:
        for tmp, _ in staged:
            tmp.unlink(missing_ok=True)


@contextlib.contextmanager
def staging_dir(parent: Path, prefix: str) -> Iterator[Path]:
    """A fresh private folder under ``parent``, removed on exit unless it was
    moved into place with ``publish_dir``."""
    parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f"{prefix}.", dir=parent))
    try:
        yield staging
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def publish_dir(staging: Path, final: Path, *, mode: int | None = None) -> bool:
    """Rename the complete folder ``staging`` to ``final`` in one step.

    Returns False (and leaves ``final`` as it is) if another writer put a
    folder there first; the caller decides whether that one is acceptable.
    """
    if mode is not None:
        os.chmod(staging, mode)  # mkdtemp makes it private
    final.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.rename(staging, final)
    except OSError:
        if not final.is_dir():
            raise
        return False
    return True


def remove_dir(path: Path, trash: Path) -> None:
    """Move ``path`` out of sight (to ``trash``, on the same file system), then delete it."""
    if not path.exists():
        return
    trash.parent.mkdir(parents=True, exist_ok=True)
    os.rename(path, trash)
    shutil.rmtree(trash, ignore_errors=True)
