"""An HTTP(S) remote: a read-only mirror of a published directory, as served
by any static web server. Downloads stream with httpx2 (which huggingface_hub
already depends on); transient failures are retried with backoff."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from zoo._errors import IntegrityError, RemoteError
from zoo.registry.events import ByteProgress
from zoo.registry.remotes.base import RETRY_STATUS, Remote, timeout_s, with_retries
from zoo.registry.remotes.index import INDEX, Index, check_relative_path

if TYPE_CHECKING:
    import httpx2

MAX_INDEX_BYTES = 64 << 20


class _Status(Exception):
    def __init__(self, status: int, url: str) -> None:
        super().__init__(f"{url} answered HTTP {status}")
        self.status = status


class HttpRemote(Remote):
    kind = "http"
    network = True
    writable = False

    def __init__(self, url: str) -> None:
        super().__init__(url.rstrip("/"))
        self._client_: httpx2.Client | None = None

    def _client(self) -> httpx2.Client:
        if self._client_ is None:
            import httpx2

            t = timeout_s()
            self._client_ = httpx2.Client(timeout=httpx2.Timeout(t), follow_redirects=True)
        return self._client_

    def _url(self, path: str) -> str:
        check_relative_path(path, where=self.url)
        return f"{self.url}/{path}"

    def _transient(self, exc: BaseException) -> str | None:
        import httpx2

        if isinstance(exc, httpx2.TimeoutException):
            return f"timed out after {timeout_s():g} s (ZOO_HTTP_TIMEOUT)"
        if isinstance(exc, httpx2.ConnectError):
            return f"cannot connect ({exc})"
        if isinstance(exc, httpx2.TransportError):
            return f"the connection broke ({type(exc).__name__}: {exc})"
        if isinstance(exc, _Status) and exc.status in RETRY_STATUS:
            return f"server error: HTTP {exc.status}"
        return None

    def _stream(self, url: str, sink: Any, *, limit: int | None, progress: ByteProgress | None, too_long: str) -> None:
        with self._client().stream("GET", url) as response:
            if response.status_code != 200:
                raise _Status(response.status_code, url)
            done = 0
            for chunk in response.iter_bytes(1 << 16):
                done += len(chunk)
                if limit is not None and done > limit:
                    raise IntegrityError(too_long)
                sink(chunk)
                if progress:
                    progress(done, limit)

    def read_index(self) -> Index:
        url = self._url(INDEX)
        parts: list[bytes] = []

        def attempt() -> None:
            parts.clear()
            try:
                self._stream(url, parts.append, limit=MAX_INDEX_BYTES, progress=None,
                             too_long=f"{url} is larger than {MAX_INDEX_BYTES >> 20} MiB; not a zoo index")
            except _Status as exc:
                if exc.status == 404:
                    raise RemoteError(f"{url} does not exist (HTTP 404): is {self.url} the root of a published directory?") from None
                _permanent(exc)

        with_retries(f"reading {url}", attempt, self._transient)
        return Index.loads(b"".join(parts), source=self.url)

    def download(self, path: str, dest: Path, *, size: int | None, progress: ByteProgress | None = None, fresh: bool = False) -> None:
        url = self._url(path)

        def attempt() -> None:
            with dest.open("wb") as f:
                try:
                    self._stream(url, f.write, limit=size, progress=progress,
                                 too_long=f"{url} sends more than the {size} bytes its manifest lists")
                except _Status as exc:
                    if exc.status == 404:
                        raise RemoteError(f"{url} is listed in the index but missing (HTTP 404)") from None
                    _permanent(exc)

        with_retries(f"downloading {url}", attempt, self._transient)


def _permanent(exc: _Status) -> None:
    """Re-raise a status worth retrying; turn any other into a RemoteError."""
    if exc.status in RETRY_STATUS:
        raise exc
    raise RemoteError(str(exc)) from None
