"""Which cached artifacts the trusted keys in force allow to be handed out.

``--trusted-key`` (and zoo.toml's ``trusted_keys``) say: only prebuilt artifacts
signed with these keys. That holds for the cache too, or an unsigned artifact
downloaded earlier would be handed out on the next fetch without a word. When
every remote of a fetch has trusted keys, a cached entry is handed out only if

- zoo checked its signature against one of those keys as it downloaded it
  (``verification.signature``, which only zoo writes), or
- zoo built it (``verification.local_build``): trusted keys govern prebuilt
  artifacts, and a local build is what a fetch falls back on anyway;

and in either case only if the manifest is the one zoo sealed (``store/seal.py``): a
``local_build`` written into a cached manifest by hand is no local build.

Anything else cached is passed over with a notice saying why: the remotes are
asked for a signed one, then it is built here; with ``--no-build`` the fetch
fails and says what is cached and why it was not handed out. When some remote
has no trusted keys, unsigned artifacts are acceptable from it, so the cache is
not restricted either.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from zoo.registry.remotes.base import Remote
    from zoo.registry.store.cache import Entry


@dataclass
class CachePolicy:
    """The trusted keys in force for a fetch's cache hits."""

    keys: tuple[Path, ...]
    _fingerprints: dict[str, Path] | None = field(default=None, repr=False)

    @classmethod
    def for_remotes(cls, remotes: Sequence[Remote]) -> CachePolicy | None:
        """The policy when every remote has trusted keys; None (anything cached goes) otherwise.
        The default remote does not count: the user never asked that the cache be signed."""
        remotes = [r for r in remotes if r.guards_cache]
        if not remotes or not all(r.trusted_keys for r in remotes):
            return None
        return cls(tuple(dict.fromkeys(k for r in remotes for k in r.trusted_keys)))

    def refusal(self, entry: Entry) -> str | None:
        """Why ``entry`` may not be handed out under these keys; None if it may."""
        if not entry.sealed:
            return (f"its record of who built or signed it cannot be believed: {entry.seal.why()}; the trusted keys "
                    f"in force ({self._names()}) accept only artifacts zoo built or checked the signature of")
        recorded = entry.record
        if recorded.get("local_build") is True:
            return None
        signer = recorded.get("signature")
        if not isinstance(signer, dict):
            return (f"zoo never checked a signature for it (it was downloaded unsigned, or before zoo recorded "
                    f"signers), and the trusted keys in force ({self._names()}) accept only signed artifacts")
        if signer.get("key") in self._trusted():
            return None
        return (f"it is signed by key {str(signer.get('key'))[:16]}… ({signer.get('key_file')}), "
                f"which is not one of the trusted keys in force ({self._names()})")

    def _trusted(self) -> dict[str, Path]:
        if self._fingerprints is None:
            from zoo.registry.remotes.signing import trusted_fingerprints

            self._fingerprints = trusted_fingerprints(self.keys)
        return self._fingerprints

    def _names(self) -> str:
        return ", ".join(str(k) for k in self.keys)
