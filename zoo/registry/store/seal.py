"""The seal on a cache entry's manifest: a MAC under this user's key (``zoo._user_key``, kept
outside the cache) over the entry's key and its ``manifest.json`` bytes, in ``manifest.seal``
beside it. The file digests prove the artifact's bytes; nothing but this seal proves that the
manifest's record of its checks (``verification``: the numerics, who signed it, that zoo built
it) is the one zoo wrote. So a record whose seal does not check is never shown as a result nor
trusted: a numerical check runs again, trusted keys pass the entry over (docs/verification.md,
"What zoo believes of a record")."""

from __future__ import annotations

import hmac
from enum import Enum
from pathlib import Path

from zoo._user_key import blake2b, key_id, key_path, user_key

__all__ = ["SEAL", "SealState", "check", "seal_text", "state_of"]

SEAL = "manifest.seal"
_FORMAT = "zoo-seal-v1"


class SealState(Enum):
    SEALED = "sealed"
    """Sealed under this user's key, and the manifest is the one sealed."""
    EDITED = "edited"
    """Sealed under this user's key, and the manifest has changed since."""
    UNSEALED = "unsealed"
    """No seal this zoo can check: none (an older zoo), or another user's key."""
    NO_KEY = "no key"
    """This user has no key that zoo can read or make: nothing is sealed, nor checked."""

    def why(self) -> str:
        """Why a record in this state is not believed (empty for SEALED)."""
        return {
            SealState.SEALED: "",
            SealState.EDITED: "manifest.json was changed after zoo wrote it (its seal no longer matches)",
            SealState.UNSEALED: "manifest.json is not sealed under this user's key (written by an older zoo, by "
                                "another user, or its seal was removed)",
            SealState.NO_KEY: f"zoo can neither read nor make this user's key ({key_path()}), so it seals and checks "
                              "no record: make that folder writable, or set XDG_STATE_HOME to a folder you can write",
        }[self]


def _mac(key: bytes, name: str, data: bytes) -> str:
    return blake2b(b"zoo cache record\0" + name.encode("utf-8", "replace") + b"\0" + data, key).hex()


def seal_text(name: str, data: bytes) -> bytes | None:
    """The seal of ``data`` (exact bytes: a manifest) under ``name`` (its entry's key); None without a user key."""
    key = user_key()
    if key is None:
        return None
    return f"{_FORMAT} {key_id(key)} {_mac(key, name, data)}\n".encode("ascii")


def state_of(folder: Path, entry_key: str, manifest: bytes) -> SealState:
    """Whether the manifest in ``folder`` (its bytes: ``manifest``) is the one zoo sealed there."""
    return check(folder / SEAL, entry_key, manifest)


def check(seal: Path, name: str, data: bytes) -> SealState:
    """Whether ``seal`` (a file ``seal_text(name, data)`` wrote) seals ``data`` under ``name``."""
    key = user_key()
    if key is None:
        return SealState.NO_KEY
    try:
        fields = seal.read_bytes()[:256].decode("ascii").split()
    except (OSError, UnicodeDecodeError):
        return SealState.UNSEALED
    if len(fields) != 3 or fields[0] != _FORMAT or fields[1] != key_id(key):
        return SealState.UNSEALED
    return SealState.SEALED if hmac.compare_digest(fields[2], _mac(key, name, data)) else SealState.EDITED
