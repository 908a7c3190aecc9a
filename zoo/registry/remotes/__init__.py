"""Remotes: where prebuilt artifacts are published and fetched from.

    hf://ORG/REPO[@REVISION]   a Hugging Face Hub model repository (hub.py)
    PATH or file://PATH         a directory, e.g. a team share (directory.py)
    http(s)://HOST/PATH         a read-only mirror of a published directory (http.py)
    s3://BUCKET[/PREFIX]        S3 or an S3-compatible store, through s3fs (s3.py)
    gs://, az://                Google Cloud and Azure storage, fetch only (object_store.py)
    memory://NAME[/PREFIX]      fsspec's in-process store, for tests (object_store.py)

Plugins add schemes of their own with ``register_remotes``. Parsing a remote
imports nothing heavy; each kind loads its client on first use.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from urllib.parse import unquote, urlparse

from zoo._errors import UsageError
from zoo.registry.remotes.base import Remote

RemoteFactory = Callable[[str, Path | None], Remote]
"""``factory(url, base)``: the remote for ``url``; ``base`` is the folder relative
paths are taken from (None: the working directory)."""

_REPO = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9][A-Za-z0-9_.-]*\Z")


def _hub(url: str, base: Path | None) -> Remote:
    from zoo.registry.remotes.hub import HubRemote

    repo, at, revision = url[len("hf://"):].partition("@")
    repo = repo.strip("/")
    if not _REPO.match(repo) or (at and not revision):
        raise UsageError(f"remote {url!r}: expected hf://ORG/REPO or hf://ORG/REPO@REVISION")
    return HubRemote(repo, revision or None, url)


def _http(url: str, base: Path | None) -> Remote:
    from zoo.registry.remotes.http import HttpRemote

    if not urlparse(url).netloc:
        raise UsageError(f"remote {url!r}: an http(s) remote needs a host, e.g. https://example.com/zoo")
    return HttpRemote(url)


def _file(url: str, base: Path | None) -> Remote:
    from zoo.registry.remotes.directory import DirectoryRemote

    parsed = urlparse(url)
    if parsed.netloc not in ("", "localhost"):
        raise UsageError(f"remote {url!r}: file:// URLs must name a local path (file:///path)")
    return DirectoryRemote(Path(unquote(parsed.path)), url)


def _object_store(url: str, base: Path | None) -> Remote:
    from zoo.registry.remotes.stores import object_store_remote

    return object_store_remote(url)


def _directory(url: str, base: Path | None) -> Remote:
    from zoo.registry.remotes.directory import DirectoryRemote

    path = Path(url).expanduser()
    if not path.is_absolute():
        path = (base or Path.cwd()) / path
    return DirectoryRemote(path, url)


BUILTIN_SCHEMES: Mapping[str, RemoteFactory] = MappingProxyType({
    "hf": _hub,
    "http": _http,
    "https": _http,
    "file": _file,
    # fsspec's: each checks that its backend is installed (without importing it).
    "s3": _object_store,
    "gs": _object_store,
    "gcs": _object_store,
    "az": _object_store,
    "abfs": _object_store,
    "memory": _object_store,
    "": _directory,  # no scheme: a directory path
})


def canonical_url(text: str, *, base: Path | None = None) -> str:
    """One spelling per remote, to compare remotes by (zoo.toml's ``trusted_keys`` against
    ``--remote``): a directory (a path or ``file://``) is its resolved absolute path, relative
    paths taken from ``base`` (default: cwd); any other URL has its scheme and host in lower
    case and no trailing ``/``. So ``../r``, ``../r/``, ``/abs/r`` and ``file:///abs/r`` agree."""
    url = text.strip()
    scheme = url.split("://", 1)[0].lower() if "://" in url else ""
    if scheme in ("", "file"):
        path = Path(unquote(urlparse(url).path)) if scheme else Path(url).expanduser()
        return str(((base or Path.cwd()) / path).resolve())
    parsed = urlparse(url)
    return parsed._replace(scheme=scheme, netloc=parsed.netloc.lower(), path=parsed.path.rstrip("/")).geturl()


def parse_remote(
    text: str, *, base: Path | None = None, schemes: Mapping[str, RemoteFactory] | None = None,
    trusted_keys: Sequence[Path] = (),
) -> Remote:
    """A remote from its URL, by its scheme: a built-in one or one of ``schemes``
    (the plugins', e.g. ``Registry.remote_schemes``). Relative directory paths
    are taken from ``base`` (default: cwd). With ``trusted_keys`` (public key
    files), every artifact fetched from it must be signed by one of them; that
    needs the ``signing`` extra, which is checked here without importing it."""
    url = text.strip()
    if not url:
        raise UsageError("empty remote: give hf://ORG/REPO, s3://BUCKET/PREFIX, an http(s) URL or a directory")
    scheme = url.split("://", 1)[0].lower() if "://" in url else ""
    # Built-ins last, so nothing passed in can replace them.
    table = {**(schemes or {}), **BUILTIN_SCHEMES}
    factory = table.get(scheme)
    if factory is None:
        known = ", ".join(f"{s}://" for s in sorted(table) if s)
        raise UsageError(f"remote {text!r}: unknown scheme {scheme!r}; known schemes: {known}, or a directory path")
    remote = factory(url, base)
    if trusted_keys:
        from zoo.registry.remotes.signing import check_key_files

        remote.trusted_keys = check_key_files(trusted_keys, remote=url)
    return remote


__all__ = ["BUILTIN_SCHEMES", "Remote", "RemoteFactory", "canonical_url", "parse_remote"]
