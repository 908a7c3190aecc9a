"""A content-addressed store of built artifacts.

Layout under the cache root::

    entries/<key[:2]>/<key>/   the artifact files, manifest.json and its seal (never modified)
    locks/<key>.lock           one build per key across processes
    tmp/                       entries being written; renamed into place when complete

An entry appears in one ``rename``, so a reader sees all of it or none of it,
and every hit re-checks each file's sha256 before it is handed out. The manifest's record
of the entry's checks is believed only under its seal (``seal.py``): ``Entry.seal``. A cache that
cannot be written still serves its hits; a write to it fails with one CacheError
naming the folder.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import os
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from zoo._errors import CacheError, UsageError
from zoo._fs import (
    not_a_folder,
    publish_dir,
    remove_dir,
    remove_stale_staging,
    staging_dir,
    uninterrupted,
    write_atomic,
)
from zoo.registry.store.failures import Failure
from zoo.registry.store.manifest import Manifest
from zoo.registry.store.seal import SEAL, SealState, seal_text, state_of

if TYPE_CHECKING:
    from filelock import FileLock

MANIFEST = "manifest.json"
LAYOUT = "v1"
_TRASH = "evicted-"


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


@dataclass
class Entry:
    key: str
    path: Path
    manifest: Manifest
    seal: SealState = field(default=SealState.UNSEALED, kw_only=True)
    """Whether ``manifest`` is the one zoo wrote and sealed here (``seal.py``). Only a sealed
    manifest's ``verification`` record (numerics, signer, local build) is believed."""

    @property
    def sealed(self) -> bool:
        return self.seal is SealState.SEALED

    @property
    def record(self) -> dict[str, Any]:
        """The manifest's ``verification`` record if it is sealed; its structural checks alone
        (which every hand-out runs again) otherwise."""
        recorded = self.manifest.verification or {}
        return dict(recorded) if self.sealed else {k: v for k, v in recorded.items() if k == "structure"}

    @property
    def believed(self) -> Manifest:
        """The manifest with only the record of its checks that zoo believes (``record``): what a
        report or a site shows of the entry."""
        if self.sealed:
            return self.manifest
        return dataclasses.replace(self.manifest, verification=self.record)

    def file(self, kind: str) -> Path | None:
        record = self.manifest.file(kind)
        return self.path / record.name if record else None


class CorruptEntry(CacheError):
    def __init__(self, key: str, path: Path, problem: str) -> None:
        self.key = key
        self.path = path
        self.problem = problem
        super().__init__(f"cache entry {key[:12]} at {path} is corrupt: {problem}")


class Cache:
    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.base = self.root / LAYOUT
        _check_folder(self.root)

    def entry_path(self, key: str) -> Path:
        return self.base / "entries" / key[:2] / key

    @contextlib.contextmanager
    def _writing(self) -> Iterator[None]:
        """Turn a failed write (read-only, full, not ours) into one line that names the cache."""
        try:
            yield
        except OSError as exc:
            blocker = _blocker(exc)
            if blocker is not None:
                raise CacheError(f"cannot write to the cache at {self.root}: {blocker} is a file where zoo keeps a "
                                 "folder; move it away (zoo does not delete what it did not write), or set "
                                 "ZOO_CACHE_DIR to another folder") from None
            where = f" ({exc.filename})" if exc.filename else ""
            raise CacheError(
                f"cannot write to the cache at {self.root}: {exc.strerror or exc}{where}. Make it writable "
                "(or free some space), or set ZOO_CACHE_DIR to a folder you can write"
            ) from None

    def staging_parent(self) -> Path:
        """The folder that entries (and downloads) are staged in, made if need be."""
        tmp = self.base / "tmp"
        with self._writing():
            tmp.mkdir(parents=True, exist_ok=True)
        return tmp

    def lock(self, key: str, timeout: float = -1) -> FileLock:
        from filelock import FileLock  # 20 ms to import; only builds need it
        path = self.base / "locks" / f"{key}.lock"
        with self._writing():  # here, where the cache is first written, rather than deep in the lock
            path.parent.mkdir(parents=True, exist_ok=True)
            os.close(os.open(path, os.O_RDWR | os.O_CREAT, 0o644))
        return FileLock(str(path), timeout=timeout)

    def get(self, key: str) -> Entry | None:
        """The verified entry for ``key``, None if absent; CorruptEntry if it fails its checks."""
        path = self.entry_path(key)
        if not path.is_dir():
            return None
        return self._verified(key, path)

    def _verified(self, key: str, path: Path) -> Entry:
        try:
            raw = (path / MANIFEST).read_bytes()
            manifest = Manifest.loads(raw.decode("utf-8"))
        except FileNotFoundError:
            raise CorruptEntry(key, path, "manifest.json is missing") from None
        except (ValueError, TypeError, KeyError) as exc:
            raise CorruptEntry(key, path, f"manifest.json is unreadable ({exc})") from None
        if manifest.key != key:
            raise CorruptEntry(key, path, f"manifest names key {manifest.key[:12]}")
        for record in manifest.files:
            f = path / record.name
            if not f.is_file():
                raise CorruptEntry(key, path, f"{record.name} is missing")
            size = f.stat().st_size
            if size != record.size:
                raise CorruptEntry(key, path, f"{record.name} is {size} bytes, the manifest says {record.size}")
            digest = sha256_file(f)
            if digest != record.sha256:
                raise CorruptEntry(key, path, f"{record.name} has sha256 {digest[:12]}…, the manifest says {record.sha256[:12]}…")
        return Entry(key, path, manifest, seal=state_of(path, key, raw))

    def put(self, manifest: Manifest, files: Mapping[str, bytes], *, replace: bool = False) -> Entry:
        """Store a complete entry atomically. ``files`` maps names to bytes.

        With ``replace`` (the caller holds the key's lock) an existing entry is
        moved out of sight first; a reader sees the old entry, none, or the new one.
        """
        final = self.entry_path(manifest.key)
        with self._writing(), staging_dir(self.base / "tmp", manifest.key[:12]) as staging:
            for name, data in files.items():
                if os.sep in name or name in ("", ".", "..", MANIFEST, SEAL):
                    raise CacheError(f"refusing to store a file named {name!r}")
                write_atomic(staging / name, data)
            text = manifest.dumps().encode()
            write_atomic(staging / MANIFEST, text)
            sealed = seal_text(manifest.key, text)
            if sealed is not None:
                write_atomic(staging / SEAL, sealed)
            with uninterrupted():  # a Ctrl-C here would leave neither the old entry nor the new one
                if replace:
                    self.evict(manifest.key)
                publish_dir(staging, final)  # False: another process stored the same key first
        self.forget_failure(manifest.key)
        return self._verified(manifest.key, final)

    def failure_path(self, key: str) -> Path:
        return self.base / "failures" / key[:2] / f"{key}.json"

    def failure(self, key: str) -> Failure | None:
        """The recorded failure of ``key``'s build, None if none; CorruptEntry if unreadable."""
        path = self.failure_path(key)
        try:
            failure = Failure.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError, TypeError) as exc:
            raise CorruptEntry(key, path, f"the failure record is unreadable ({exc})") from None
        if failure.key != key:
            raise CorruptEntry(key, path, f"the failure record names key {failure.key[:12]}")
        return failure

    def record_failure(self, failure: Failure) -> None:
        """Keep a failed build's record (the caller holds the key's lock)."""
        with self._writing():
            write_atomic(self.failure_path(failure.key), failure.dumps().encode())

    def forget_failure(self, key: str) -> None:
        with self._writing():
            self.failure_path(key).unlink(missing_ok=True)

    def failures(self) -> Iterator[tuple[str, Failure | None, str | None]]:
        """Every recorded failure as (key, failure, problem)."""
        root = self.base / "failures"
        for path in sorted(root.glob("*/*.json")) if root.is_dir() else ():
            key = path.stem
            try:
                yield key, self.failure(key), None
            except CorruptEntry as exc:
                yield key, None, exc.problem

    def evict(self, key: str) -> None:
        """Remove an entry: move it out of sight first, then delete it."""
        trash = self.base / "tmp" / f"{_TRASH}{key[:12]}-{os.getpid()}-{time.monotonic_ns()}"
        with self._writing():
            remove_dir(self.entry_path(key), trash)

    def keys(self) -> Iterator[str]:
        entries = self.base / "entries"
        if not entries.is_dir():
            return
        for shard in sorted(entries.iterdir()):
            if shard.is_dir():
                for entry in sorted(shard.iterdir()):
                    if entry.is_dir():
                        yield entry.name

    def scan(self, *, verify: bool = False) -> Iterator[tuple[str, Entry | None, str | None]]:
        """Every entry as (key, entry, problem). Without ``verify`` only manifests are read."""
        for key in self.keys():
            path = self.entry_path(key)
            try:
                if verify:
                    yield key, self._verified(key, path), None
                else:
                    raw = (path / MANIFEST).read_bytes()
                    manifest = Manifest.loads(raw.decode("utf-8"))
                    yield key, Entry(key, path, manifest, seal=state_of(path, key, raw)), None
            except CorruptEntry as exc:
                yield key, None, exc.problem
            except (OSError, ValueError, TypeError, KeyError) as exc:
                yield key, None, f"manifest.json is unreadable ({exc})"

    def clean_tmp(self) -> tuple[int, int]:
        """Remove what writers that died mid-write left in ``tmp/``: (how many, bytes).
        A live writer holds its staging folder's lock, so this never races one."""
        with self._writing():
            return remove_stale_staging(self.base / "tmp", trash_prefix=_TRASH)


def _blocker(exc: OSError) -> Path | None:
    """The file that stands where a folder of the cache must be, if that is why ``exc`` was raised."""
    if not isinstance(exc, (FileExistsError, NotADirectoryError)) or not exc.filename:
        return None
    try:
        return not_a_folder(Path(exc.filename))
    except OSError:
        return None


def _check_folder(root: Path) -> None:
    """A cache root that is (or lies under) a file is a usage error, found before any write."""
    try:
        blocker = not_a_folder(root)
    except OSError as exc:
        raise CacheError(
            f"cannot use the cache folder {root}: {exc.strerror or exc} ({exc.filename}). "
            "Make it accessible, or set ZOO_CACHE_DIR to a folder you can write"
        ) from None
    if blocker is not None:
        raise UsageError(
            f"the cache folder {root} cannot be used: {'it' if blocker == root else blocker} is not a folder. "
            "Point ZOO_CACHE_DIR (or cache_dir in zoo.toml) at a folder"
        )
