"""Remotes: where prebuilt artifacts are published and fetched from.

    hf://ORG/REPO[@REVISION]   a Hugging Face Hub model repository (hub.py)
    PATH or file://PATH         a directory, e.g. a team share (directory.py)
    http(s)://HOST/PATH         a read-only mirror of a published directory (http.py)

Parsing a remote imports nothing heavy; each kind loads its client on first use.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote, urlparse

from zoo._errors import UsageError
from zoo.registry.remotes.base import Remote

_REPO = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9][A-Za-z0-9_.-]*$")


def parse_remote(text: str, *, base: Path | None = None) -> Remote:
    """A remote from its URL; relative directory paths are taken from ``base`` (default: cwd)."""
    url = text.strip()
    scheme = url.split("://", 1)[0].lower() if "://" in url else ""
    if scheme == "hf":
        from zoo.registry.remotes.hub import HubRemote

        rest = url[len("hf://"):]
        repo, at, revision = rest.partition("@")
        repo = repo.strip("/")
        if not _REPO.match(repo) or (at and not revision):
            raise UsageError(f"remote {text!r}: expected hf://ORG/REPO or hf://ORG/REPO@REVISION")
        return HubRemote(repo, revision or None, url)
    if scheme in ("http", "https"):
        from zoo.registry.remotes.http import HttpRemote

        if not urlparse(url).netloc:
            raise UsageError(f"remote {text!r}: an http(s) remote needs a host, e.g. https://example.com/zoo")
        return HttpRemote(url)
    from zoo.registry.remotes.directory import DirectoryRemote

    if scheme == "file":
        parsed = urlparse(url)
        if parsed.netloc not in ("", "localhost"):
            raise UsageError(f"remote {text!r}: file:// URLs must name a local path (file:///path)")
        return DirectoryRemote(Path(unquote(parsed.path)), url)
    if scheme:
        raise UsageError(f"remote {text!r}: unknown scheme {scheme!r}; use hf://, http(s)://, file:// or a directory path")
    if not url:
        raise UsageError("empty remote: give hf://ORG/REPO, an http(s) URL or a directory")
    path = Path(url).expanduser()
    if not path.is_absolute():
        path = (base or Path.cwd()) / path
    return DirectoryRemote(path, url)


__all__ = ["Remote", "parse_remote"]
