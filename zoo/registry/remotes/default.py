"""The default remote: the catalogue the project publishes for this version of zoo.

A release publishes every model for every target to the Hub repository ``REPO``
under the tag ``v<version>``, signed with the release key whose public half is
pinned in the package (``zoo/registry/data/release-signing.pub``). An install
reads the tag of its own version only, so what it fetches was built by the
code it runs, and a tag is never moved once published.

zoo.toml without a ``remotes`` key uses it; ``remotes = []``, ``--offline``,
``ZOO_OFFLINE`` and ``--remote`` leave it out.

Until a version is released, its tag does not exist. So before the Hub client
(and httpx, about 80 ms to import) is loaded, one HEAD request through the
standard library asks for the tag's ``index.json``, with no retries and one
deadline for the whole request, through the proxy the environment names if any:
a refused connection or a missing tag costs a few milliseconds and one line, a
server or proxy that answers slowly or never costs the deadline, and the fetch
goes on as it would without a remote.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from zoo._errors import RemoteError, RemoteUnavailable
from zoo._version import __version__
from zoo.registry.remotes.hub import HubRemote
from zoo.registry.remotes.index import INDEX, Index

REPO = "ethosu-zoo/ethos-u-zoo"
KEY_FILE = Path(__file__).resolve().parents[1] / "data" / "release-signing.pub"
PROBE_TIMEOUT_S = 3.0
"""The probe's deadline, the whole request's and not each read's (a server may send a byte every
2 s): enough for a Hub across the world; a network that drops packets costs this once per fetch."""


def tag(version: str = __version__) -> str:
    return f"v{version}"


def url(version: str = __version__) -> str:
    return f"hf://{REPO}@{tag(version)}"


class DefaultRemote(HubRemote):
    """``hf://REPO@v<version>``, trusting only the pinned release key."""

    def __init__(self, version: str = __version__) -> None:
        super().__init__(REPO, tag(version), url(version))
        self.version = version
        self.unusable: str | None = None

    def read_index(self) -> Index:
        if self.unusable is not None:
            raise RemoteError(f"{self.url}: {self.unusable}")
        self._probe()
        return super().read_index()

    def _probe(self) -> None:
        """Return if the tag has an index; else RemoteError saying why, in one line."""
        from http.client import HTTPException
        from urllib.parse import urlsplit

        address = self.public_url(INDEX)
        assert address is not None  # a Hub file always has one
        endpoint = shown(self.endpoint)
        proxy = _proxy_for(address)
        if proxy is not None:
            scheme = urlsplit(address).scheme
            problem = _unusable(proxy)
            if problem is not None:
                raise RemoteUnavailable(f"{self.url}: the proxy {_variable(scheme)} names cannot be used: {problem}; "
                                        "correct it (e.g. http://HOST:PORT) or unset it")
            if urlsplit(proxy).scheme not in ("http", "https"):
                return  # a SOCKS proxy: the standard library cannot speak it, the Hub client does
        via = f" through the proxy {shown(proxy)}" if proxy else ""
        outcome = _within(PROBE_TIMEOUT_S, lambda: _head(address, proxy))
        # The socket's own timeout (the same 3 s) may fire just before the deadline: one answer either way.
        if outcome is None or _timed_out(outcome):
            raise RemoteUnavailable(f"{self.url}: cannot reach {endpoint} (no answer within {PROBE_TIMEOUT_S:g} s{via})")
        if isinstance(outcome, BaseException):
            if not isinstance(outcome, (OSError, HTTPException, ValueError)):  # ValueError: a malformed proxy URL
                raise outcome
            raise RemoteUnavailable(f"{self.url}: cannot reach {endpoint}{via} ({_reason(outcome)})") from None
        if outcome in (401, 403, 404):  # the Hub answers 401 for a repository it does not show
            raise RemoteError(f"{self.url}: no published catalogue for zoo {self.version} yet")
        if outcome >= 400:
            raise RemoteUnavailable(f"{self.url}: {endpoint} answered HTTP {outcome}")


def _proxy_for(address: str) -> str | None:
    """The proxy the environment names for ``address``, as the Hub client reads it: HTTPS_PROXY or
    HTTP_PROXY by scheme, else ALL_PROXY, and none for a host NO_PROXY names."""
    import urllib.request
    from urllib.parse import urlsplit

    where = urlsplit(address)
    proxies = urllib.request.getproxies()
    proxy = proxies.get(where.scheme) or proxies.get("all")
    if not proxy or urllib.request.proxy_bypass(where.netloc):
        return None
    return proxy if "://" in proxy else f"http://{proxy}"


PROXY_SCHEMES = ("http", "https", "socks4", "socks4a", "socks5", "socks5h")


def _unusable(proxy: str) -> str | None:
    """Why ``proxy`` (a URL from the environment) cannot be a proxy; None if it can. Its
    credentials are never in the answer."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(proxy)
        port = parts.port  # raises for a port that is no number, or out of range
        host = parts.hostname
    except ValueError as exc:
        return f"{shown(proxy)} is not a URL ({exc})"
    if parts.scheme not in PROXY_SCHEMES:
        return f"{shown(proxy)}: its scheme is {parts.scheme}://, and a proxy's is http://, https:// or socks5://"
    if not host or any(c.isspace() or not c.isprintable() for c in proxy):
        return f"{shown(proxy)} names no host" if not host else f"{shown(proxy)} holds spaces or control characters"
    if port == 0:
        return f"{shown(proxy)} names port 0"
    return None


def _variable(scheme: str) -> str:
    """The environment variable that named the proxy for ``scheme``, as urllib reads them (the
    lower-case name first)."""
    import os

    for name in (f"{scheme}_proxy", f"{scheme.upper()}_PROXY", "all_proxy", "ALL_PROXY"):
        if os.environ.get(name):
            return name
    return f"{scheme.upper()}_PROXY"


def shown(url: str) -> str:
    """``url`` as a message shows it: its scheme, host and port only, never a user, password,
    path or query (where a token may sit), nor a control character."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url)
        host, port = parts.hostname, parts.port
    except ValueError:
        host, port, parts = None, None, None
    if parts is None or not host or any(c.isspace() or not c.isprintable() for c in host):
        scheme = url.partition("://")[0] if "://" in url else ""
        return f"{scheme}://(unreadable address)" if scheme.isalnum() else "(unreadable address)"
    host = f"[{host}]" if ":" in host else host
    return f"{parts.scheme}://{host}" + (f":{port}" if port is not None else "")


def _head(address: str, proxy: str | None) -> int:
    """The HTTP status of a HEAD request for ``address``, through ``proxy``, redirects not followed:
    a redirect (a file stored elsewhere) says that the file exists."""
    import urllib.request
    from urllib.error import HTTPError

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args: Any, **kwargs: Any) -> None:
            return None

    opener = urllib.request.build_opener(urllib.request.ProxyHandler({"http": proxy, "https": proxy} if proxy else {}),
                                         NoRedirect)
    try:
        with opener.open(urllib.request.Request(address, method="HEAD"), timeout=PROBE_TIMEOUT_S) as response:
            return int(response.status)
    except HTTPError as exc:
        return int(exc.code)


def _within(seconds: float, work: Callable[[], int]) -> int | BaseException | None:
    """What ``work()`` returned or raised, or None if it is still running after ``seconds``. It runs
    in a daemon thread, left to end on its socket's timeout: a socket timeout bounds each read, not
    a server that trickles a byte at a time, nor a proxy that takes the connection and never answers."""
    done: list[int | BaseException] = []

    def run() -> None:
        try:
            done.append(work())
        except BaseException as exc:  # handed to the caller's thread
            done.append(exc)

    thread = threading.Thread(target=run, name="zoo-default-remote-probe", daemon=True)
    thread.start()
    thread.join(seconds)
    return done[0] if done else None


def _timed_out(outcome: int | BaseException) -> bool:
    from urllib.error import URLError

    if isinstance(outcome, URLError) and isinstance(outcome.reason, BaseException):
        outcome = outcome.reason
    return isinstance(outcome, TimeoutError)


def _reason(exc: BaseException) -> str:
    from urllib.error import URLError

    if isinstance(exc, URLError) and isinstance(exc.reason, BaseException):
        exc = exc.reason  # the connection's own error, e.g. ConnectionRefusedError
    return type(exc).__name__ if isinstance(exc, TimeoutError) else f"{type(exc).__name__}: {exc}"


def default_remote(trusted_keys: Sequence[Path] = ()) -> DefaultRemote:
    """The default remote, trusting the pinned release key; or only ``trusted_keys`` (``--trusted-key``),
    which then also decide what the cache may hand out, as for any remote."""
    from zoo.registry.remotes.signing import MissingSigningExtra, check_key_files

    remote = DefaultRemote()
    try:
        remote.trusted_keys = check_key_files(list(trusted_keys) or [KEY_FILE], remote=remote.url)
    except MissingSigningExtra as exc:  # an install without its dependencies: skip this remote, not the fetch
        remote.unusable = str(exc)
    remote.guards_cache = bool(trusted_keys)
    return remote


__all__ = ["KEY_FILE", "REPO", "DefaultRemote", "default_remote", "shown", "tag", "url"]
