"""An HTTP(S) remote: a read-only mirror of a published directory, as served
by any static web server. Downloads stream with httpx2 (which huggingface_hub
already depends on); transient failures are retried with backoff.

A transfer stops at the size its manifest declares and at its overall deadline
(``ZOO_HTTP_DEADLINE``); redirects are followed only to http(s) URLs, and
only so far.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urljoin, urlsplit

from zoo._errors import RemoteError
from zoo.registry.events import ByteProgress
from zoo.registry.remotes.base import (
    MAX_INDEX_BYTES,
    RETRY_STATUS,
    Deadline,
    Remote,
    cache_sink,
    pump,
    timeout_s,
    with_retries,
)
from zoo.registry.remotes.index import INDEX, Index, check_relative_path

if TYPE_CHECKING:
    import httpx2

MAX_REDIRECTS = 10
_SCHEMES = ("http", "https")


class _Status(Exception):
    def __init__(self, status: int, url: str) -> None:
        super().__init__(f"{url} answered HTTP {status}")
        self.status = status


def _refuse_other_schemes(response: httpx2.Response) -> None:
    """A mirror has no business sending zoo to file:// or any other scheme;
    left to httpx2, that fails as a broken connection and is retried."""
    if not response.has_redirect_location:
        return
    location = response.headers["Location"]
    if urlsplit(urljoin(str(response.request.url), location)).scheme.lower() not in _SCHEMES:
        raise RemoteError(
            f"{response.request.url} redirects to {location}; zoo follows redirects to http(s) URLs only, so it refuses this one"
        )


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

            self._client_ = httpx2.Client(
                timeout=httpx2.Timeout(timeout_s()), follow_redirects=True, max_redirects=MAX_REDIRECTS,
                event_hooks={"response": [_refuse_other_schemes]},
            )
        return self._client_

    def _url(self, path: str) -> str:
        check_relative_path(path, where=self.url)
        return f"{self.url}/{path}"

    def public_url(self, path: str) -> str | None:
        return f"{self.url}/{quote(check_relative_path(path, where=self.url))}"

    def _transient(self, exc: BaseException) -> str | None:
        import httpx2

        if isinstance(exc, httpx2.TimeoutException):
            return f"timed out after {timeout_s():g} s (ZOO_HTTP_TIMEOUT)"
        if isinstance(exc, httpx2.ConnectError):
            return f"cannot connect ({exc})"
        if isinstance(exc, httpx2.UnsupportedProtocol):
            return None
        if isinstance(exc, httpx2.TransportError):
            return f"the connection broke ({type(exc).__name__}: {exc})"
        if isinstance(exc, _Status) and exc.status in RETRY_STATUS:
            return f"server error: HTTP {exc.status}"
        return None

    def _retrying(self, what: str, attempt: Callable[[], None]) -> None:
        """``attempt`` with retries; what httpx2 raises that no retry can mend becomes a RemoteError."""
        import httpx2

        try:
            with_retries(what, attempt, self._transient)
        except httpx2.TooManyRedirects:
            raise RemoteError(f"{what}: more than {MAX_REDIRECTS} redirects (a redirect loop?); giving up") from None
        except (httpx2.HTTPError, httpx2.InvalidURL) as exc:
            raise RemoteError(f"{what}: {type(exc).__name__}: {exc}") from None

    def _stream(self, url: str, sink: Any, *, limit: int | None, progress: ByteProgress | None, too_long: str,
                deadline: Deadline) -> None:
        deadline.check()
        with self._client().stream("GET", url) as response:
            if response.status_code != 200:
                raise _Status(response.status_code, url)
            # No chunk size: httpx2 would otherwise wait for a whole chunk, and a trickle never fills one.
            pump(response.iter_bytes(), sink, limit=limit, too_long=too_long, progress=progress, deadline=deadline)

    def read_index(self) -> Index:
        url = self._url(INDEX)
        what = f"reading {url}"
        deadline = Deadline(what)
        parts: list[bytes] = []

        def attempt() -> None:
            parts.clear()
            try:
                self._stream(url, parts.append, limit=MAX_INDEX_BYTES, progress=None, deadline=deadline,
                             too_long=f"{url} is larger than {MAX_INDEX_BYTES >> 20} MiB; not a zoo index")
            except _Status as exc:
                if exc.status == 404:
                    raise RemoteError(f"{url} does not exist (HTTP 404): is {self.url} the root of a published directory?") from None
                _permanent(exc)

        self._retrying(what, attempt)
        return Index.loads(b"".join(parts), source=self.url)

    def download(self, path: str, dest: Path, *, size: int | None, progress: ByteProgress | None = None, fresh: bool = False) -> None:
        url = self._url(path)
        what = f"downloading {url}"
        deadline = Deadline(what)

        def attempt() -> None:
            with cache_sink(dest) as write:
                try:
                    self._stream(url, write, limit=size, progress=progress, deadline=deadline,
                                 too_long=f"{url} sends more than the {size} bytes its manifest lists")
                except _Status as exc:
                    if exc.status == 404:
                        raise RemoteError(f"{url} is listed in the index but missing (HTTP 404)") from None
                    _permanent(exc)

        self._retrying(what, attempt)


def _permanent(exc: _Status) -> None:
    """Re-raise a status worth retrying; turn any other into a RemoteError."""
    if exc.status in RETRY_STATUS:
        raise exc
    raise RemoteError(str(exc)) from None
