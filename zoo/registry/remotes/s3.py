"""S3 and S3-compatible stores as a remote (``s3://BUCKET[/PREFIX]``), through s3fs.

Everything but the client is ``object_store.py``'s. What is S3's own: its
timeouts and retries handed to zoo, streamed GETs with the deadline, and the
conditional PUTs (``If-None-Match: *`` for every file, ``If-Match`` on the
index's ETag) that let concurrent publishes never lose one another.

s3fs and botocore are imported only inside the methods here.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from zoo._errors import IntegrityError, RemoteError, RemoteUnavailable, ZooError
from zoo.registry.events import ByteProgress, Notice
from zoo.registry.remotes.base import (
    RETRY_STATUS,
    Deadline,
    PublishReport,
    pump,
    timeout_s,
    with_retries,
)
from zoo.registry.remotes.index import INDEX
from zoo.registry.remotes.object_store import CHUNK, Contended, ObjectStoreRemote

if TYPE_CHECKING:
    from zoo.registry.store.cache import Entry

_CONTENT_TYPES = {".json": "application/json", ".h": "text/x-c", ".html": "text/html; charset=utf-8",
                  ".css": "text/css; charset=utf-8", ".js": "text/javascript; charset=utf-8", ".png": "image/png"}

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
            chunk: bytes = self._run(body.read, CHUNK, timeout=deadline.remaining())
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
        raise Contended(f"{self._where(path)} already holds other bytes, and index.json does not list that "
                         "artifact", taken=folder)

    def _put_page(self, path: str, data: bytes) -> None:
        self._put(path, data, {})

    def _put_index(self, data: bytes, version: str | None) -> None:
        condition = {"IfMatch": version} if version is not None else {"IfNoneMatch": "*"}
        if not self._put(INDEX, data, condition):
            raise Contended(f"{self._where(INDEX)} changed while publishing (another publish?)")


def _botocore_errors() -> Any:
    import botocore.exceptions  # type: ignore[import-untyped]

    return botocore.exceptions
