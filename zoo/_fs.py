"""Stage, then rename: the one way zoo writes anything a reader may see.

Every file or folder is written under a fresh, unique temporary name in the
folder it will live in (so a rename never crosses file systems, a planted
symlink is never written through, and concurrent writers never share a name),
then renamed into place. A reader sees the old thing, nothing, or the whole
new thing; never part of one. A Ctrl-C that lands while a set of renames runs
waits until the last of them (``uninterrupted``): a set is swapped in whole or not at all.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import stat
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

_CHUNK = 1 << 20
_LOCK_SUFFIX = ".lock"


@contextlib.contextmanager
def uninterrupted() -> Iterator[None]:
    """Hold a Ctrl-C that arrives inside the block until it ends, then raise it as it would have
    been: for the renames that swap a set of files in, which must all happen or none. Only the
    main thread receives one (Python runs signal handlers there), and only a Python handler is held."""
    previous = signal.getsignal(signal.SIGINT) if threading.current_thread() is threading.main_thread() else None
    if not callable(previous):
        yield
        return
    held: list[tuple[int, Any]] = []
    signal.signal(signal.SIGINT, lambda signum, frame: held.append((signum, frame)))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        if held:
            previous(*held[0])


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
                # On the open file, not its name: the name may have been swapped for a symlink by now.
                os.fchmod(out.fileno(), _default_mode() if mode is None else mode)
        with uninterrupted():
            for tmp, final in staged:
                os.replace(tmp, final)
    finally:
        for tmp, _ in staged:
            tmp.unlink(missing_ok=True)


@contextlib.contextmanager
def staging_dir(parent: Path, prefix: str) -> Iterator[Path]:
    """A fresh private folder under ``parent``, removed on exit unless it was
    moved into place with ``publish_dir``.

    Its writer holds a lock on ``<folder>.lock`` beside it for the folder's whole
    life, taken before the folder exists and let go after it is gone, so
    ``remove_stale_staging`` can tell a dead writer's leftovers from a live one's."""
    parent.mkdir(parents=True, exist_ok=True)
    fd, lock, staging = _locked_staging(parent, prefix)
    try:
        yield staging
    finally:
        shutil.rmtree(staging, ignore_errors=True)
        lock.unlink(missing_ok=True)  # before letting go, so a waiting cleaner finds the name gone
        os.close(fd)


def _locked_staging(parent: Path, prefix: str) -> tuple[int, Path, Path]:
    while True:
        fd, name = tempfile.mkstemp(prefix=f"{prefix}.", suffix=_LOCK_SUFFIX, dir=parent)
        lock = Path(name)
        _lock(fd, wait=True)
        if not _still_named(fd, lock):
            os.close(fd)  # a cleaner found the name unlocked and removed it before we locked it
            continue
        staging = lock.with_name(lock.name.removesuffix(_LOCK_SUFFIX))
        try:
            os.mkdir(staging, 0o700)
        except FileExistsError:  # a leftover from before the locks has this name
            lock.unlink()
            os.close(fd)
            continue
        return fd, lock, staging


def _lock(fd: int, *, wait: bool) -> bool:
    if sys.platform == "win32":  # no flock: a cleaner takes every staging folder for a live one
        return wait
    import fcntl

    try:
        fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
    except BlockingIOError:
        return False
    return True


def _still_named(fd: int, path: Path) -> bool:
    """Whether the locked file is still the one at ``path`` (not unlinked or replaced)."""
    try:
        named = os.stat(path, follow_symlinks=False)
    except FileNotFoundError:
        return False
    held = os.fstat(fd)
    return held.st_nlink > 0 and (held.st_dev, held.st_ino) == (named.st_dev, named.st_ino)


def not_a_folder(path: Path) -> Path | None:
    """The first of ``path`` and its parents that exists but is not a folder (so
    nothing can be made under it), or None. Raises OSError if one cannot be looked at.

    Each name is looked at once, with a second look only at what the first could not
    follow, so a folder that another process creates meanwhile is never taken for a
    blocker."""
    for folder in (path, *path.parents):
        try:
            mode = folder.stat().st_mode
        except (FileNotFoundError, NotADirectoryError):
            try:
                mode = folder.lstat().st_mode
            except (FileNotFoundError, NotADirectoryError):
                continue
            if stat.S_ISLNK(mode):  # a symlink to nothing: mkdir cannot go through it
                return folder
        if stat.S_ISDIR(mode):
            return None
        return folder
    return None


def remove_stale_staging(parent: Path, *, trash_prefix: str | None = None,
                         unlocked_older_than_s: float = 3600) -> tuple[int, int]:
    """Remove what dead writers left in ``parent``: (how many leftovers, how many bytes).

    A staging folder whose lock this process can take is a dead writer's, since a
    live writer holds it. Folders named ``trash_prefix…`` are on their way out
    anyway; other folders without a lock (made before the locks) go once they are
    older than ``unlocked_older_than_s``."""
    if not parent.is_dir():
        return 0, 0
    count = freed = 0
    for name in sorted({p.name.removesuffix(_LOCK_SUFFIX) for p in parent.iterdir()}):
        folder, lock = parent / name, parent / f"{name}{_LOCK_SUFFIX}"
        try:
            if lock.exists():
                size = _remove_if_unlocked(lock, folder)
            elif (trash_prefix and name.startswith(trash_prefix)) or \
                    time.time() - folder.lstat().st_mtime > unlocked_older_than_s:
                size = _remove(folder)
            else:
                size = None
        except FileNotFoundError:
            size = None  # its writer finished meanwhile
        if size is not None:
            count += 1
            freed += size
    return count, freed


def _remove_if_unlocked(lock: Path, folder: Path) -> int | None:
    try:
        fd = os.open(lock, os.O_RDWR | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None  # gone (its writer finished) or not a lock file of ours
    try:
        if not (_lock(fd, wait=False) and _still_named(fd, lock)):
            return None
        size = _remove(folder) if folder.exists() else 0
        lock.unlink()
        return size
    finally:
        os.close(fd)


def _remove(path: Path) -> int:
    """Delete a file or folder; its size in bytes."""
    if not path.is_dir() or path.is_symlink():
        size = path.lstat().st_size
        path.unlink(missing_ok=True)
        return size
    size = sum(f.lstat().st_size for f in path.rglob("*") if f.is_file())
    shutil.rmtree(path, ignore_errors=True)
    return size


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


def replace_folder(final: Path, files: Mapping[str, bytes], *, mode: int | None = None) -> None:
    """Make ``final`` a folder holding exactly ``files`` (relative ``/`` paths → bytes), in place of
    whatever folder is there: built complete under a temporary name beside it, then swapped in by
    two renames, so a reader sees the old folder, none for an instant, or the whole new one."""
    final.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{final.name}.", suffix=".zoo-tmp", dir=final.parent))
    trash: Path | None = None
    try:
        for name, data in files.items():
            parts = name.split("/")
            if not name or name.startswith("/") or any(p in ("", ".", "..") for p in parts):
                raise ValueError(f"refusing to write {name!r}: not a relative path inside {final}")
            path = staging.joinpath(*parts)
            path.parent.mkdir(parents=True, exist_ok=True)
            with path.open("xb") as out:
                out.write(data)
                out.flush()
                os.fsync(out.fileno())
                os.fchmod(out.fileno(), _default_mode())
        if mode is None:  # what mkdir would have made; mkdtemp makes it private
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o777 & ~umask
        os.chmod(staging, mode)
        with uninterrupted():  # between the two renames there is no folder: the old one must not be lost
            if final.exists() or final.is_symlink():
                trash = Path(tempfile.mkdtemp(prefix=f".{final.name}.", suffix=".zoo-old", dir=final.parent))
                os.rename(final, trash / final.name)
            try:
                os.rename(staging, final)
            except OSError:
                if trash is not None:
                    os.rename(trash / final.name, final)
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
        if trash is not None:
            shutil.rmtree(trash, ignore_errors=True)


class SymlinkInTheWay(OSError):
    """``replace_all_beneath`` met a symlink where it wanted a folder: it wrote nothing through it."""


_BENEATH = os.open in os.supports_dir_fd and os.rename in os.supports_dir_fd and os.mkdir in os.supports_dir_fd
_FOLDER_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


def replace_all_beneath(folder: Path, plan: Sequence[tuple[str, bytes]], *, remove: Sequence[str] = (),
                        mode: int | None = None) -> None:
    """``replace_all`` for relative ``/`` paths inside ``folder`` that never follows a symlink, even one
    swapped in after the caller checked: ``folder`` (made if missing) and each folder below it are
    opened without following a symlink, relative to their parent's descriptor, and every file is
    staged, renamed and removed through those descriptors, so no path is looked up again. Then each
    file of ``remove`` that is there goes. SymlinkInTheWay names a symlink met on the way."""
    if not _BENEATH:  # no descriptor-relative calls here (Windows): the caller's check is all there is
        replace_all([(folder.joinpath(*name.split("/")), data) for name, data in plan], mode=mode)
        for name in remove:
            stale = folder.joinpath(*name.split("/"))
            if stale.is_file():
                stale.unlink()
        return
    folder.mkdir(parents=True, exist_ok=True)
    fds: dict[str, int] = {}
    staged: list[tuple[int, str, str]] = []
    try:
        fds[""] = _open_folder(str(folder), None, folder)
        for name, data in plan:
            parent, _, base = name.rpartition("/")
            fd = _folder_fd(fds, folder, parent, create=True)
            assert fd is not None
            staged.append((fd, _stage(fd, base, data, mode), base))
        with uninterrupted():
            for fd, tmp, base in staged:
                os.replace(tmp, base, src_dir_fd=fd, dst_dir_fd=fd)
            staged.clear()
            for name in remove:
                parent, _, base = name.rpartition("/")
                fd = _folder_fd(fds, folder, parent, create=False)
                with contextlib.suppress(FileNotFoundError):
                    if fd is not None and not stat.S_ISDIR(os.stat(base, dir_fd=fd, follow_symlinks=False).st_mode):
                        os.unlink(base, dir_fd=fd)
    finally:
        for fd, tmp, _ in staged:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=fd)
        for fd in fds.values():
            os.close(fd)


def _open_folder(name: str, parent_fd: int | None, shown: Path) -> int:
    try:
        return os.open(name, _FOLDER_FLAGS, dir_fd=parent_fd)
    except OSError as exc:
        if os.path.islink(shown):
            raise SymlinkInTheWay(exc.errno, f"{shown} is a symlink", str(shown)) from None
        raise


def _folder_fd(fds: dict[str, int], folder: Path, relative: str, *, create: bool) -> int | None:
    """The descriptor of ``folder/relative``, each part opened below the last; None if it is missing and not ``create``."""
    parts = relative.split("/") if relative else []
    for i, part in enumerate(parts):
        key = "/".join(parts[:i + 1])
        if key in fds:
            continue
        parent = fds["/".join(parts[:i])]
        if create:
            with contextlib.suppress(FileExistsError):
                os.mkdir(part, dir_fd=parent)
        try:
            fds[key] = _open_folder(part, parent, folder.joinpath(*parts[:i + 1]))
        except FileNotFoundError:
            if create:
                raise
            return None
    return fds[relative]


def _stage(folder_fd: int, name: str, data: bytes, mode: int | None) -> str:
    """``data`` in a fresh file beside ``name`` in the folder ``folder_fd``: its name there."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    while True:
        tmp = f".{name}.{os.urandom(6).hex()}.zoo-tmp"
        try:
            fd = os.open(tmp, flags, 0o600, dir_fd=folder_fd)
            break
        except FileExistsError:
            continue
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
            os.fchmod(out.fileno(), _default_mode() if mode is None else mode)
    except BaseException:
        os.unlink(tmp, dir_fd=folder_fd)
        raise
    return tmp
