"""Remotes on object storage, through fsspec: ``s3://BUCKET[/PREFIX]`` (s3fs),
``gs://`` and ``az://`` (fetch only), and ``memory://`` (fsspec's in-process store,
for tests).

The layout is the directory remote's: ``index.json`` at the root, and each
artifact's files under ``MODEL/SLUG/KEY/``. Credentials and the endpoint are
whatever the filesystem's own configuration gives (for S3: the AWS
environment variables, profiles or an instance role, ``AWS_ENDPOINT_URL`` for
an S3-compatible store such as MinIO; fsspec's ``FSSPEC_S3_*`` variables):
zoo never reads or prints them.

Publishing to S3 has no rename and no lock to lean on, so it relies on
conditional writes, which S3 applies atomically per object:

- every artifact file is written once, with ``If-None-Match: *``: a PUT is
  atomic, so a reader never sees part of one, and an object under a key is
  never replaced. One already there with the same bytes counts as written
  (a retry, or another publish of the same artifact); one with other bytes
  stops the publish before the index names it;
- ``index.json`` is written last, after every file of every new artifact,
  with ``If-Match`` on the ETag it was read with (``If-None-Match: *`` if
  there was none). If another publish wrote it in between, S3 answers 412 (or
  409 while that write is in flight): zoo reads the index again, plans again
  (what the other added may now be "already there", or a conflict) and tries
  again, a bounded number of times. A publish's records thus only ever enter
  the index on top of the exact index they were planned against, so none is
  lost.

``memory://`` has no ETags: a publish there holds a process-wide lock (the
store lives in one process). ``gs://`` and ``az://`` are fetch only: zoo
would need a conditional write of their own kind, which it does not make.

fsspec, s3fs and botocore are imported only inside the methods here, so
parsing such a remote, and every light command, costs nothing.
"""

from __future__ import annotations

import dataclasses
import hashlib
import random
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from zoo._env import number
from zoo._errors import (
    IntegrityError,
    PublishConflict,
    RemoteError,
    RemoteUnavailable,
    UsageError,
    ZooError,
)
from zoo.registry.events import ByteProgress, Notice
from zoo.registry.remotes.base import (
    MAX_INDEX_BYTES,
    Deadline,
    PublishReport,
    Remote,
    cache_sink,
    pump,
    with_retries,
)
from zoo.registry.remotes.index import INDEX, Index, check_relative_path

if TYPE_CHECKING:
    from zoo.registry.remotes.publish import PublishItem
    from zoo.registry.store.cache import Entry

DEFAULT_ATTEMPTS = 10
CHUNK = 1 << 20
_MEMORY_LOCK = threading.Lock()


@dataclass(frozen=True)
class Backend:
    """What a URL scheme needs installed, and how to install it."""

    protocol: str
    """fsspec's name for it."""
    module: str
    """The package that implements it (found without importing it)."""
    install: str
    what: str


def publish_attempts() -> int:
    """How often a publish reads, plans and writes the index before it gives up on a busy remote
    (``ZOO_PUBLISH_ATTEMPTS``): with backoff, the default waits about 10 s in all."""
    return int(number("ZOO_PUBLISH_ATTEMPTS", DEFAULT_ATTEMPTS, int, positive=True))


MAX_SIGNATURE = 1 << 20
"""The most bytes read back from a signature left at the remote: model-signing's bundles are a few KiB."""


class Contended(Exception):
    """Another publish got there first: read the index again and retry."""

    def __init__(self, reason: str, *, taken: str | None = None) -> None:
        super().__init__(reason)
        self.taken = taken
        """The folder of an artifact whose key holds other bytes, if that was it."""


class ObjectStoreRemote(Remote):
    """An fsspec filesystem, read through fsspec's own calls; publishing is each kind's own."""

    kind: ClassVar[str] = "object store"
    network: ClassVar[bool] = True
    writable: ClassVar[bool] = False

    def __init__(self, url: str, backend: Backend, bucket: str, prefix: str) -> None:
        super().__init__(url)
        self.backend = backend
        self.bucket = bucket
        self.prefix = prefix
        self._fs_: Any = None

    # where things are

    def _rel(self, path: str) -> str:
        """``path`` inside the bucket, checked to stay inside the remote."""
        check_relative_path(path, where=self.url)
        return f"{self.prefix}/{path}" if self.prefix else path

    def _where(self, path: str) -> str:
        return f"{self.url}/{path}"

    def _fs(self) -> Any:
        if self._fs_ is None:
            import fsspec  # type: ignore[import-untyped]

            # A fresh instance: fsspec caches them by their arguments, not by the environment.
            self._fs_ = fsspec.filesystem(self.backend.protocol, skip_instance_cache=True, **self._fs_options())
        return self._fs_

    def _fs_options(self) -> dict[str, Any]:
        return {}

    def _fs_path(self, path: str) -> str:
        return f"{self.bucket}/{self._rel(path)}"

    # reading

    def _transient(self, exc: BaseException) -> str | None:
        if isinstance(exc, (TimeoutError, ConnectionError)):
            return f"{type(exc).__name__}: {exc}"
        return None

    def _errors(self, exc: Exception, where: str, *, missing: str) -> Exception:
        """A zoo error for what the filesystem raised while doing ``where``; ``missing`` says
        what a missing object means there."""
        if isinstance(exc, ZooError):
            return exc
        if isinstance(exc, FileNotFoundError):
            return RemoteError(missing)
        if isinstance(exc, PermissionError):
            return RemoteError(f"{where}: access denied ({exc}); check the credentials the storage's own configuration gives")
        reason = self._transient(exc)
        if reason is not None:
            return RemoteUnavailable(f"{where}: {reason}")
        return RemoteError(f"{where}: {type(exc).__name__}: {exc}")

    def _retrying(self, what: str, attempt: Callable[[], Any], *, missing: str) -> Any:
        try:
            return with_retries(what, attempt, self._transient)
        except Exception as exc:
            raise self._errors(exc, what, missing=missing) from None

    def _stream(self, path: str, sink: Callable[[bytes], object], *, limit: int | None, progress: ByteProgress | None,
                deadline: Deadline, too_long: str) -> str | None:
        """Read the object at ``path`` into ``sink``, at most ``limit`` bytes; its version (ETag) if the store has one."""
        deadline.check()
        with self._fs().open(self._fs_path(path), "rb") as f:
            size = getattr(f, "size", None)
            if limit is not None and size is not None and size > limit:
                raise IntegrityError(too_long)
            pump(iter(lambda: f.read(CHUNK), b""), sink, limit=limit, too_long=too_long, progress=progress,
                 deadline=deadline)
        return None

    def _read_versioned(self) -> tuple[Index, str | None]:
        """The index and its version (None: there is no index yet, or the store has no versions)."""
        what = f"reading {self._where(INDEX)}"
        deadline = Deadline(what)
        parts: list[bytes] = []
        absent = False

        def attempt() -> str | None:
            nonlocal absent
            parts.clear()
            try:
                return self._stream(INDEX, parts.append, limit=MAX_INDEX_BYTES, progress=None, deadline=deadline,
                                    too_long=f"{self._where(INDEX)} is larger than {MAX_INDEX_BYTES >> 20} MiB; not a zoo index")
            except FileNotFoundError:
                absent = True
                return None

        version = self._retrying(what, attempt, missing=f"{self._where(INDEX)} is not there")
        if absent:
            return Index(), None
        return Index.loads(b"".join(parts), source=self.url), version

    def read_index(self) -> Index:
        return self._read_versioned()[0]

    def download(self, path: str, dest: Path, *, size: int | None, progress: ByteProgress | None = None,
                 fresh: bool = False) -> None:
        where = self._where(path)
        self._rel(path)
        deadline = Deadline(f"downloading {where}")

        def attempt() -> None:
            with cache_sink(dest) as write:
                self._stream(path, write, limit=size, progress=progress, deadline=deadline,
                             too_long=f"{where} is longer than the {size} bytes its manifest lists")

        self._retrying(f"downloading {where}", attempt, missing=f"{where} is listed in the index but missing")

    # publishing

    def publish(self, entries: Sequence[Entry], *, say: Notice) -> PublishReport:
        raise UsageError(
            f"{self.url}: zoo does not publish to {self.backend.what}: it updates index.json only with a "
            "conditional write it implements for s3:// (and S3-compatible stores); fetching works"
        )

    def _put_new(self, path: str, data: bytes) -> None:
        """Create the object at ``path``; Contended if one with other bytes is there."""
        raise NotImplementedError

    def _put_index(self, data: bytes, version: str | None) -> None:
        """Replace the index if it is still at ``version`` (None: create it); Contended if not."""
        raise NotImplementedError

    def _put_page(self, path: str, data: bytes) -> None:
        """Write (or overwrite) one page of the site: a single PUT, whole or not at all."""
        raise NotImplementedError

    def put_site(self, folder: str, files: Mapping[str, bytes], *, say: Notice) -> None:
        if not self.writable or type(self)._put_page is ObjectStoreRemote._put_page:
            super().put_site(folder, files, say=say)
        # Each page is one PUT; the index page goes last, so it never links to a page not yet there.
        for name in sorted(files, key=lambda n: (n == "index.html", n)):
            self._put_page(f"{folder}/{name}", files[name])

    def _publish(self, entries: Sequence[Entry], say: Notice) -> PublishReport:
        from zoo.registry.remotes.publish import plan

        report = PublishReport(self.url)
        placed: set[str] = set()  # paths known to hold exactly this publish's bytes
        attempts = publish_attempts()
        for attempt in range(1, attempts + 1):
            index, version = self._read_versioned()
            items, already = plan(index, entries, remote=self.url)
            report.already = already
            if not items:
                return report
            taken: list[Contended] = []
            for n, item in enumerate(items):
                # Every file of every new artifact, the manifest last; an artifact whose key holds
                # other bytes is left, and its files after that one are not written.
                try:
                    for remote_path, local in item.files():
                        if remote_path not in placed:
                            items[n] = item = self._put_or_adopt(item, remote_path, local)
                            placed.add(remote_path)
                except Contended as exc:
                    taken.append(exc)
            try:
                if taken:
                    raise taken[0]
                for item in items:
                    index.add(item.record)
                self._put_index(index.dumps().encode(), version)
            except Contended as exc:
                if attempt == attempts:
                    raise self._gave_up(exc, attempts) from None
                delay = min(0.05 * 2**attempt, 2.0) * random.uniform(0.5, 1.5)
                say(f"{exc}; reading index.json again in {delay:.1f} s (attempt {attempt + 1} of {attempts})")
                time.sleep(delay)
                continue
            report.added = [item.record for item in items]
            return report
        raise AssertionError("unreachable")

    def _put_or_adopt(self, item: PublishItem, remote_path: str, local: Path) -> PublishItem:
        """Write one object of ``item``; the item, with the signature it now lists.

        A signed publish that died before its index write left a signature no index lists.
        Its bytes differ from ours (ECDSA signs anew each time), but if it checks out with
        the same key over exactly these files it is as good: it is kept, and listed.
        Anything else that differs still stops the publish (Contended)."""
        try:
            self._put_new(remote_path, local.read_bytes())
            return item
        except Contended:
            from zoo.registry.remotes.publish import PublishItem
            from zoo.registry.remotes.signing import equivalent, signature_of

            ours = item.record.signature
            if signature_of(item.entry) is None or ours is None or remote_path != f"{item.record.folder}/{ours.name}":
                raise
            with tempfile.TemporaryDirectory(prefix="zoo-adopt-") as tmp:
                found = Path(tmp) / ours.name
                try:
                    self.download(remote_path, found, size=MAX_SIGNATURE)
                except (ZooError, OSError):
                    raise Contended(f"{self._where(remote_path)} already holds other bytes that cannot be read back, "
                                    "and index.json does not list that artifact",
                                    taken=item.record.folder) from None
                if not equivalent(item.entry, found):
                    raise
                data = found.read_bytes()
            signature = dataclasses.replace(ours, size=len(data), sha256=hashlib.sha256(data).hexdigest())
            return PublishItem(item.entry, dataclasses.replace(item.record, signature=signature))

    def _gave_up(self, exc: Contended, attempts: int) -> PublishConflict:
        if exc.taken is not None:
            return PublishConflict(
                f"{exc}; nothing was listed in index.json after {attempts} tries. Another publish of "
                "the same artifact may still be running, or one died half way: run the publish again later, "
                f"and if no other publish is running, delete {self._where(exc.taken)}/ (no index lists it)"
            )
        return PublishConflict(
            f"{self.url}: index.json changed under this publish {attempts} times (many publishes at once?); "
            "the new artifacts' files are in place but not listed; run the publish again"
        )


class GcsRemote(ObjectStoreRemote):
    """Google Cloud Storage through gcsfs: fetch only."""

    kind: ClassVar[str] = "gs"


class AzureRemote(ObjectStoreRemote):
    """Azure Blob Storage through adlfs: fetch only."""

    kind: ClassVar[str] = "az"


class MemoryRemote(ObjectStoreRemote):
    """fsspec's memory store: one per process, so publishes hold one process-wide lock."""

    kind: ClassVar[str] = "memory"
    network: ClassVar[bool] = False
    writable: ClassVar[bool] = True

    def _fs_path(self, path: str) -> str:
        return f"/{self.bucket}/{self._rel(path)}"

    def publish(self, entries: Sequence[Entry], *, say: Notice) -> PublishReport:
        # The store has no versions to write against: one publish at a time, from read to write.
        with _MEMORY_LOCK:
            return self._publish(entries, say)

    def _put_new(self, path: str, data: bytes) -> None:
        fs, key = self._fs(), self._fs_path(path)
        if fs.exists(key):
            if fs.cat_file(key) != data:
                folder = path.rpartition("/")[0]
                raise Contended(f"{self._where(path)} already holds other bytes, and index.json does not list "
                                 "that artifact", taken=folder)
            return
        fs.pipe_file(key, data)  # one assignment in the store: whole or not at all

    def _put_index(self, data: bytes, version: str | None) -> None:
        self._fs().pipe_file(self._fs_path(INDEX), data)

    def _put_page(self, path: str, data: bytes) -> None:
        self._fs().pipe_file(self._fs_path(path), data)


__all__ = ["AzureRemote", "Backend", "GcsRemote", "MemoryRemote", "ObjectStoreRemote", "publish_attempts"]
