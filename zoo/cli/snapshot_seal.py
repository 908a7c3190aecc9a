"""What makes a snapshot safe to keep in a shared cache: its key is stored only as a hash,
credentials are never keyed, and each snapshot is sealed with a MAC (keyed BLAKE2b) under a
per-user key kept outside the cache (``zoo._user_key``), so one that
was edited, or that came from another machine, does not verify. Imports nothing heavy: it runs
on every replay."""

from __future__ import annotations

from typing import Any

from zoo._user_key import blake2b, user_key

SECRET_WORDS = ("TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "PRIVATE", "API_KEY", "APIKEY",
                 "ACCESS_KEY", "AUTH", "SESSION", "COOKIE")
"""Words in a variable's name that mark it as a credential: never keyed, so never stored in any form."""


def secret(name: str) -> bool:
    upper = name.upper()
    return any(word in upper for word in SECRET_WORDS)


def digest(key: tuple[Any, ...]) -> str:
    """What a snapshot stores of its key: the environment and paths are in it only as a hash."""
    # repr, not marshal: marshal's bytes depend on which objects happen to be shared.
    return blake2b(repr(key).encode("utf-8", "surrogateescape")).hex()


def seal_key() -> bytes | None:
    """This user's key for sealing snapshots, outside the cache (``zoo._user_key``)."""
    return user_key()


def seal(key: bytes, body: bytes) -> bytes:
    return blake2b(body, key)
