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

import hashlib
import importlib.util
import random
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar
from urllib.parse import urlsplit

from zoo._env import number
from zoo._errors import (
    IntegrityError,
    MissingExtraError,
    PublishConflict,
    RemoteError,
    RemoteUnavailable,
    UsageError,
    ZooError,
)
from zoo.registry.events import ByteProgress, Notice
from zoo.registry.remotes.base import (
    RETRY_STATUS,
    Deadline,
    PublishReport,
    Remote,
    pump,
    timeout_s,
    with_retries,
)
from zoo.registry.remotes.index import INDEX, Index, check_relative_path

if TYPE_CHECKING:
    from zoo.registry.cache import Entry

MAX_INDEX_BYTES = 64 << 20
DEFAULT_ATTEMPTS = 10
_CHUNK = 1 << 20
_MEMORY_LOCK = threading.Lock()
_CONTENT_TYPES = {".json": "application/json", ".h": "text/x-c"}


@dataclass(frozen=True)
class Backend:
    """What a URL scheme needs installed, and how to install it."""

    protocol: str
    """fsspec's name for it."""
    module: str
    """The package that implements it (found without importing it)."""
    install: str
    what: str


BACKENDS = {
    "s3": Backend("s3", "s3fs", "pip install 'ethosu-zoo[s3]'", "Amazon S3 or an S3-compatible store"),
    "gs": Backend("gs", "gcsfs", "pip install 'fsspec[gcs]'", "Google Cloud Storage"),
    "gcs": Backend("gs", "gcsfs", "pip install 'fsspec[gcs]'", "Google Cloud Storage"),
    "az": Backend("az", "adlfs", "pip install 'fsspec[abfs]'", "Azure Blob Storage"),
    "abfs": Backend("az", "adlfs", "pip install 'fsspec[abfs]'", "Azure Blob Storage"),
    "memory": Backend("memory", "fsspec", "pip install fsspec", "fsspec's in-process memory store"),
}


class MissingRemoteExtra(MissingExtraError):
    """A remote whose fsspec backend is not installed."""

    def __init__(self, url: str, backend: Backend) -> None:
        ZooError.__init__(
            self, f"remote {url}: {backend.what} needs {backend.module}, which is not installed. "
            f"Install it with: {backend.install}"
        )


def object_store_remote(url: str) -> ObjectStoreRemote:
    """The remote for ``SCHEME://BUCKET[/PREFIX]``; its backend must be installed
    (checked without importing it)."""
    scheme = url.partition("://")[0].lower()
    backend = BACKENDS[scheme]
    parts = urlsplit(url)
    bucket = parts.netloc
    if "@" in bucket:
        # Never echo what stands before the '@': it may be a key and a secret.
        raise UsageError(f"remote {scheme}://…@{bucket.rpartition('@')[2]}{parts.path}: credentials do not belong "
                         "in the URL; zoo leaves them to the storage's own configuration (e.g. AWS_PROFILE)")
    if not bucket:
        raise UsageError(f"remote {url!r}: expected {scheme}://BUCKET or {scheme}://BUCKET/PREFIX")
    if parts.query or parts.fragment:
        raise UsageError(f"remote {url!r}: a remote URL takes no '?' or '#' part")
    prefix = parts.path.strip("/")
    if prefix:
        try:
            check_relative_path(prefix, where=f"remote {url!r}")
        except IntegrityError as exc:
            raise UsageError(str(exc)) from None
    clean = f"{scheme}://{bucket}" + (f"/{prefix}" if prefix else "")
    if importlib.util.find_spec(backend.module) is None:
        raise MissingRemoteExtra(clean, backend)
    kind = {"s3": S3Remote, "memory": MemoryRemote, "gs": GcsRemote, "az": AzureRemote}[backend.protocol]
    return kind(clean, backend, bucket, prefix)


def publish_attempts() -> int:
    """How often a publish reads, plans and writes the index before it gives up on a busy remote
    (``ZOO_PUBLISH_ATTEMPTS``): with backoff, the default waits about 10 s in all."""
    return int(number("ZOO_PUBLISH_ATTEMPTS", DEFAULT_ATTEMPTS, int, positive=True))


class _Contended(Exception):
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
            pump(iter(lambda: f.read(_CHUNK), b""), sink, limit=limit, too_long=too_long, progress=progress,
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
            with dest.open("wb") as f:
                self._stream(path, f.write, limit=size, progress=progress, deadline=deadline,
                             too_long=f"{where} is longer than the {size} bytes its manifest lists")

        self._retrying(f"downloading {where}", attempt, missing=f"{where} is listed in the index but missing")

    # publishing

    def publish(self, entries: Sequence[Entry], *, say: Notice) -> PublishReport:
        raise UsageError(
            f"{self.url}: zoo does not publish to {self.backend.what}: it updates index.json only with a "
            "conditional write it implements for s3:// (and S3-compatible stores); fetching works"
        )

    def _put_new(self, path: str, data: bytes) -> None:
        """Create the object at ``path``; _Contended if one with other bytes is there."""
        raise NotImplementedError

    def _put_index(self, data: bytes, version: str | None) -> None:
        """Replace the index if it is still at ``version`` (None: create it); _Contended if not."""
        raise NotImplementedError

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
            taken: list[_Contended] = []
            for item in items:
                # Every file of every new artifact, the manifest last; an artifact whose key holds
                # other bytes is left, and its files after that one are not written.
                try:
                    for remote_path, local in item.files():
                        if remote_path not in placed:
                            self._put_new(remote_path, local.read_bytes())
                            placed.add(remote_path)
                except _Contended as exc:
                    taken.append(exc)
            try:
                if taken:
                    raise taken[0]
                for item in items:
                    index.add(item.record)
                self._put_index(index.dumps().encode(), version)
            except _Contended as exc:
                if attempt == attempts:
                    raise self._gave_up(exc, attempts) from None
                delay = min(0.05 * 2**attempt, 2.0) * random.uniform(0.5, 1.5)
                say(f"{exc}; reading index.json again in {delay:.1f} s (attempt {attempt + 1} of {attempts})")
                time.sleep(delay)
                continue
            report.added = [item.record for item in items]
            return report
        raise AssertionError("unreachable")

    def _gave_up(self, exc: _Contended, attempts: int) -> PublishConflict:
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
                raise _Contended(f"{self._where(path)} already holds other bytes, and index.json does not list "
                                 "that artifact", taken=folder)
            return
        fs.pipe_file(key, data)  # one assignment in the store: whole or not at all

    def _put_index(self, data: bytes, version: str | None) -> None:
        self._fs().pipe_file(self._fs_path(INDEX), data)


class S3Remote(ObjectStoreRemote):
    """S3 and S3-compatible stores, through s3fs; publishes with conditional writes."""

    kind: ClassVar[str] = "s3"
    writable: ClassVar[bool] = True

    def _fs_options(self) -> dict[str, Any]:
        timeout = timeout_s()
        # zoo retries itself (ZOO_HTTP_RETRIES, with a notice), so neither s3fs nor botocore does.
        return {"config_kwargs": {"connect_timeout": timeout, "read_timeout": timeout,
                                  "retries": {"mode": "standard", "total_max_attempts": 1}}}

    def _fs(self) -> Any:
        fs = super()._fs()
        fs.retries = 1
        return fs

    def _run(self, func: Callable[..., Any], *args: Any, timeout: float | None = None, **kwargs: Any) -> Any:
        from fsspec.asyn import sync  # type: ignore[import-untyped]

        fs = self._fs()
        return sync(fs.loop, func, *args, timeout=timeout, **kwargs)

    def _call(self, method: str, *, timeout: float | None = None, **kwargs: Any) -> Any:
        fs = self._fs()
        return self._run(fs._call_s3, method, Bucket=self.bucket, timeout=timeout, **kwargs)

    @staticmethod
    def _client_error(exc: BaseException) -> tuple[str, int] | None:
        """(error code, HTTP status) of the S3 error behind ``exc`` (s3fs wraps it), if it is one."""
        client_error = _botocore_errors().ClientError
        cause = exc if isinstance(exc, client_error) else exc.__cause__
        if not isinstance(cause, client_error):
            return None
        error = cause.response.get("Error", {})
        status = cause.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0)
        return str(error.get("Code", "")), int(status or 0)

    def _transient(self, exc: BaseException) -> str | None:
        import asyncio

        from fsspec.exceptions import FSTimeoutError  # type: ignore[import-untyped]

        errors = _botocore_errors()
        if isinstance(exc, (FSTimeoutError, asyncio.TimeoutError)):
            return f"timed out after {timeout_s():g} s (ZOO_HTTP_TIMEOUT)"
        if isinstance(exc, errors.SSLError):
            return None
        if isinstance(exc, errors.ConnectionError):
            return f"cannot reach the endpoint ({type(exc).__name__}: {exc})"
        if isinstance(exc, (errors.HTTPClientError, errors.IncompleteReadError)):
            return f"the connection broke ({type(exc).__name__}: {exc})"
        error = self._client_error(exc)
        if error is not None and (error[1] in RETRY_STATUS or error[0] in ("SlowDown", "RequestTimeout", "InternalError")):
            return f"the store answered HTTP {error[1]} ({error[0]})"
        return None

    def _errors(self, exc: Exception, where: str, *, missing: str) -> Exception:
        errors = _botocore_errors()
        if isinstance(exc, errors.NoCredentialsError):
            return RemoteError(f"{where}: no AWS credentials found; set them as boto does (AWS_PROFILE, "
                               "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or an instance role)")
        if isinstance(exc, errors.NoRegionError):
            return RemoteError(f"{where}: no AWS region set; set AWS_DEFAULT_REGION or a profile's region")
        error = self._client_error(exc)
        if error is not None:
            code, status = error
            if code == "NoSuchBucket":
                return self._no_bucket()
            if code in ("NoSuchKey", "404"):
                return RemoteError(missing)
            if status == 403 or code in ("AccessDenied", "InvalidAccessKeyId", "SignatureDoesNotMatch"):
                return RemoteError(f"{where}: access denied ({code}); check the credentials boto finds "
                                   "(AWS_PROFILE, AWS_ACCESS_KEY_ID, …) and that they may s3:GetObject, "
                                   "s3:ListBucket (else a missing index.json reads as denied) and, to publish, s3:PutObject")
            kind = RemoteUnavailable if status in RETRY_STATUS else RemoteError
            return kind(f"{where}: the store answered HTTP {status} ({code})")
        return super()._errors(exc, where, missing=missing)

    def _stream(self, path: str, sink: Callable[[bytes], object], *, limit: int | None, progress: ByteProgress | None,
                deadline: Deadline, too_long: str) -> str | None:
        deadline.check()
        try:
            response = self._call("get_object", Key=self._rel(path), timeout=deadline.remaining())
        except Exception as exc:
            code = (self._client_error(exc) or ("", 0))[0]
            if code == "NoSuchKey":
                raise FileNotFoundError(path) from None
            if code == "NoSuchBucket":
                raise self._no_bucket() from None
            raise
        body = response["Body"]
        try:
            length = response.get("ContentLength")
            if limit is not None and length is not None and length > limit:
                raise IntegrityError(too_long)
            pump(iter(lambda: self._read(body, deadline), b""), sink, limit=limit, too_long=too_long,
                 progress=progress, deadline=deadline)
        finally:
            self._run(body.aclose)
        return str(response["ETag"])

    def _read(self, body: Any, deadline: Deadline) -> bytes:
        """The next bytes of a response body; at the deadline, the deadline's error."""
        from fsspec.exceptions import FSTimeoutError

        try:
            chunk: bytes = self._run(body.read, _CHUNK, timeout=deadline.remaining())
        except FSTimeoutError:
            deadline.check()
            raise
        return chunk

    def _no_bucket(self) -> RemoteError:
        return RemoteError(f"{self.url}: the bucket {self.bucket!r} does not exist (zoo never creates one; "
                           "create it, or check AWS_ENDPOINT_URL)")

    def publish(self, entries: Sequence[Entry], *, say: Notice) -> PublishReport:
        try:
            return self._publish(entries, say)
        except ZooError:
            raise
        except Exception as exc:
            raise self._errors(exc, f"publishing to {self.url}", missing=f"{self.url}: an object vanished while publishing") from None

    def _put(self, path: str, data: bytes, condition: dict[str, str]) -> bool:
        """PUT ``data`` at ``path`` if ``condition`` holds; False if it did not (412, or 409 while another
        conditional write of it is in flight)."""
        suffix = Path(path).suffix
        what = f"writing {self._where(path)}"

        def attempt() -> bool:
            request: dict[str, Any] = {"Key": self._rel(path), "Body": data, **condition,
                                       "ContentType": _CONTENT_TYPES.get(suffix, "application/octet-stream")}
            try:
                self._call("put_object", **request)
            except Exception as exc:
                error = self._client_error(exc)
                if error is not None and (error[1] in (409, 412) or error[0] in ("PreconditionFailed", "ConditionalRequestConflict")):
                    return False
                raise
            return True

        result: bool = with_retries(what, attempt, self._transient)
        return result

    def _same(self, path: str, data: bytes) -> bool:
        digest = hashlib.sha256()
        try:
            self._retrying(f"reading {self._where(path)}", lambda: self._hash_into(path, digest, len(data)),
                           missing=f"{self._where(path)} vanished while publishing")
        except IntegrityError:
            return False  # longer than ours
        return digest.digest() == hashlib.sha256(data).digest()

    def _hash_into(self, path: str, digest: Any, limit: int) -> None:
        self._stream(path, digest.update, limit=limit, progress=None, deadline=Deadline(f"reading {self._where(path)}"),
                     too_long="longer")

    def _put_new(self, path: str, data: bytes) -> None:
        if self._put(path, data, {"IfNoneMatch": "*"}) or self._same(path, data):
            return
        folder = path.rpartition("/")[0]
        raise _Contended(f"{self._where(path)} already holds other bytes, and index.json does not list that "
                         "artifact", taken=folder)

    def _put_index(self, data: bytes, version: str | None) -> None:
        condition = {"IfMatch": version} if version is not None else {"IfNoneMatch": "*"}
        if not self._put(INDEX, data, condition):
            raise _Contended(f"{self._where(INDEX)} changed while publishing (another publish?)")


def _botocore_errors() -> Any:
    import botocore.exceptions  # type: ignore[import-untyped]

    return botocore.exceptions


__all__ = ["BACKENDS", "MissingRemoteExtra", "ObjectStoreRemote", "S3Remote", "object_store_remote"]
