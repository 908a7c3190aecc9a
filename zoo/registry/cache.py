"""A content-addressed store of built artifacts.

Layout under the cache root::

    entries/<key[:2]>/<key>/   the artifact files and manifest.json (never modified)
    locks/<key>.lock           one build per key across processes
    tmp/                       entries being written; renamed into place when complete

An entry appears in one ``rename``, so a reader sees all of it or none of it,
and every hit re-checks each file's sha256 before it is handed out.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from zoo._errors import CacheError
from zoo._fs import publish_dir, remove_dir, staging_dir, write_atomic
from zoo.registry.failures import Failure
from zoo.registry.manifest import Manifest

if TYPE_CHECKING:
    from filelock import FileLock

MANIFEST = "manifest.json"
LAYOUT = "v1"


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

    def entry_path(self, key: str) -> Path:
        return self.base / "entries" / key[:2] / key

    def lock(self, key: str, timeout: float = -1) -> FileLock:
        from filelock import FileLock  # 20 ms to import; only builds need it
        locks = self.base / "locks"
        locks.mkdir(parents=True, exist_ok=True)
        return FileLock(str(locks / f"{key}.lock"), timeout=timeout)

    def get(self, key: str) -> Entry | None:
        """The verified entry for ``key``, None if absent; CorruptEntry if it fails its checks."""
        path = self.entry_path(key)
        if not path.is_dir():
            return None
        return self._verified(key, path)

    def _verified(self, key: str, path: Path) -> Entry:
        try:
            manifest = Manifest.loads((path / MANIFEST).read_text(encoding="utf-8"))
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
        return Entry(key, path, manifest)

    def put(self, manifest: Manifest, files: Mapping[str, bytes], *, replace: bool = False) -> Entry:
        """Store a complete entry atomically. ``files`` maps names to bytes.

        With ``replace`` (the caller holds the key's lock) an existing entry is
        moved out of sight first; a reader sees the old entry, none, or the new one.
        """
        final = self.entry_path(manifest.key)
        with staging_dir(self.base / "tmp", manifest.key[:12]) as staging:
            for name, data in files.items():
                if os.sep in name or name in ("", ".", "..", MANIFEST):
                    raise CacheError(f"refusing to store a file named {name!r}")
                write_atomic(staging / name, data)
            write_atomic(staging / MANIFEST, manifest.dumps().encode())
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
        write_atomic(self.failure_path(failure.key), failure.dumps().encode())

    def forget_failure(self, key: str) -> None:
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
        trash = self.base / "tmp" / f"evicted-{key[:12]}-{os.getpid()}-{time.monotonic_ns()}"
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
                    manifest = Manifest.loads((path / MANIFEST).read_text(encoding="utf-8"))
                    yield key, Entry(key, path, manifest), None
            except CorruptEntry as exc:
                yield key, None, exc.problem
            except (OSError, ValueError, TypeError, KeyError) as exc:
                yield key, None, f"manifest.json is unreadable ({exc})"

    def clean_tmp(self, older_than_s: float = 3600) -> int:
        """Remove staging leftovers of processes that died mid-write."""
        tmp = self.base / "tmp"
        if not tmp.is_dir():
            return 0
        removed = 0
        now = time.time()
        for p in tmp.iterdir():
            if now - p.stat().st_mtime > older_than_s:
                shutil.rmtree(p, ignore_errors=True) if p.is_dir() else p.unlink(missing_ok=True)
                removed += 1
        return removed
