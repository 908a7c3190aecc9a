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
standard library asks for the tag's ``index.json``, with no retries and a short
timeout: a refused connection or a missing tag costs a few milliseconds and
one line, and the fetch goes on as it would without a remote.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import urlsplit

from zoo._errors import RemoteError, RemoteUnavailable
from zoo._version import __version__
from zoo.registry.remotes.hub import HubRemote
from zoo.registry.remotes.index import INDEX, Index

REPO = "ethosu-zoo/ethos-u-zoo"
KEY_FILE = Path(__file__).resolve().parents[1] / "data" / "release-signing.pub"
PROBE_TIMEOUT_S = 3.0
"""Enough for a Hub across the world; a network that drops packets costs this once per fetch."""
_PROXY_VARS = ("https_proxy", "http_proxy", "all_proxy")


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
        if any(os.environ.get(v) or os.environ.get(v.upper()) for v in _PROXY_VARS):
            return  # the standard library's connection would bypass the proxy; the Hub client honours it
        import http.client

        address = self.public_url(INDEX)
        assert address is not None  # a Hub file always has one
        where = urlsplit(address)
        connection = http.client.HTTPSConnection if where.scheme == "https" else http.client.HTTPConnection
        try:
            conn = connection(where.netloc, timeout=PROBE_TIMEOUT_S)
            try:
                conn.request("HEAD", where.path)
                status = conn.getresponse().status
            finally:
                conn.close()
        except (OSError, http.client.HTTPException) as exc:
            reason = type(exc).__name__ if isinstance(exc, TimeoutError) else f"{type(exc).__name__}: {exc}"
            raise RemoteUnavailable(f"{self.url}: cannot reach {self.endpoint} ({reason})") from None
        if status in (401, 403, 404):  # the Hub answers 401 for a repository it does not show
            raise RemoteError(f"{self.url}: no published catalogue for zoo {self.version} yet")
        if status >= 400:
            raise RemoteUnavailable(f"{self.url}: {self.endpoint} answered HTTP {status}")


def default_remote(trusted_keys: Sequence[Path] = ()) -> DefaultRemote:
    """The default remote, trusting the pinned release key; or only ``trusted_keys`` (``--trusted-key``),
    which then also decide what the cache may hand out, as for any remote."""
    from zoo.registry.signing import MissingSigningExtra, check_key_files

    remote = DefaultRemote()
    try:
        remote.trusted_keys = check_key_files(list(trusted_keys) or [KEY_FILE], remote=remote.url)
    except MissingSigningExtra as exc:  # an install without its dependencies: skip this remote, not the fetch
        remote.unusable = str(exc)
    remote.guards_cache = bool(trusted_keys)
    return remote


__all__ = ["KEY_FILE", "REPO", "DefaultRemote", "default_remote", "tag", "url"]
