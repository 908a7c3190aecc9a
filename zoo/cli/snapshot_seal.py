"""What makes a snapshot safe to keep in a shared cache: its key is stored only as a hash,
credentials are never keyed, and each snapshot is sealed with a MAC (keyed BLAKE2b) under a
per-user key kept outside the cache (``snapshot.key`` in the user's state folder), so one that
was edited, or that came from another machine, does not verify. Imports nothing heavy: it runs
on every replay."""

from __future__ import annotations

import os
from typing import Any

SECRET_WORDS = ("TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "PRIVATE", "API_KEY", "APIKEY",
                 "ACCESS_KEY", "AUTH", "SESSION", "COOKIE")
"""Words in a variable's name that mark it as a credential: never keyed, so never stored in any form."""


def secret(name: str) -> bool:
    upper = name.upper()
    return any(word in upper for word in SECRET_WORDS)


def blake2b(data: bytes, key: bytes = b"") -> bytes:
    """BLAKE2b-256, keyed when ``key`` is given (a MAC by design). From ``_blake2`` itself where it
    can: ``hashlib`` loads OpenSSL, 3 ms of a replay that costs about 30."""
    try:
        from _blake2 import blake2b
    except ImportError:  # an interpreter without the module hashlib builds on
        from hashlib import blake2b
    return blake2b(data, key=key, digest_size=32).digest()


def digest(key: tuple[Any, ...]) -> str:
    """What a snapshot stores of its key: the environment and paths are in it only as a hash."""
    # repr, not marshal: marshal's bytes depend on which objects happen to be shared.
    return blake2b(repr(key).encode("utf-8", "surrogateescape")).hex()


def seal_key() -> bytes | None:
    """This user's key for sealing snapshots, outside the cache; made on first use. None
    (snapshots off) where it can be neither read nor made."""
    from zoo._dirs import user_state_dir

    path = os.path.join(user_state_dir(), "snapshot.key")
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


def seal(key: bytes, body: bytes) -> bytes:
    return blake2b(body, key)
