"""This user's secret key, kept outside the cache (``snapshot.key`` in the user's state folder),
and the keyed BLAKE2b MAC made with it. A MAC under it says "this zoo, run by this user, wrote
these bytes": the snapshots use it (``zoo/cli/snapshot_seal.py``) and so do the cache's seals of
what an entry records about its checks (``zoo/registry/store/seal.py``). Imports nothing heavy:
it runs on every snapshot replay."""

from __future__ import annotations

import os

__all__ = ["blake2b", "key_id", "key_path", "user_key"]


def blake2b(data: bytes, key: bytes = b"") -> bytes:
    """BLAKE2b-256, keyed when ``key`` is given (a MAC by design). From ``_blake2`` itself where it
    can: ``hashlib`` loads OpenSSL, 3 ms of a replay that costs about 30."""
    try:
        from _blake2 import blake2b
    except ImportError:  # an interpreter without the module hashlib builds on
        from hashlib import blake2b
    return blake2b(data, key=key, digest_size=32).digest()


def key_id(key: bytes) -> str:
    """A name for ``key`` that says nothing of it: which user's key made a MAC."""
    return blake2b(b"zoo key id\0" + key)[:8].hex()


def key_path() -> str:
    from zoo._dirs import user_state_dir

    return os.path.join(user_state_dir(), "snapshot.key")


_KNOWN: dict[str, bytes] = {}
"""The key read at each path: a cache scan checks every entry's seal."""


def user_key() -> bytes | None:
    """This user's key, outside the cache; made on first use. None where it can be neither
    read nor made (what it would seal is then not sealed, and reads as unchecked)."""
    path = key_path()
    if path not in _KNOWN:
        key = _read_or_make(path)
        if key is None:
            return None
        _KNOWN[path] = key
    return _KNOWN[path]


def _read_or_make(path: str) -> bytes | None:
    try:
        with open(path, "rb") as f:
            key = f.read(64)
        if len(key) == 32:
            return key
    except OSError:
        pass
    try:
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # another zoo made it first (or it is unreadable): use what is there
        try:
            with open(path, "rb") as f:
                key = f.read(64)
        except OSError:
            return None
        return key if len(key) == 32 else None
    except OSError:
        return None
    key = os.urandom(32)
    with os.fdopen(fd, "wb") as f:
        f.write(key)
    return key
