"""Signed artifacts: who made an artifact, not only whether it matches its index.

The signature is OpenSSF model-signing's (PyPI ``model-signing``): a Sigstore
bundle over the artifact's folder, made offline with an elliptic-curve key
(P-256, P-384 or P-521; a PEM file). It covers every file the remote stores
for the artifact (the ``.pte``, the headers and ``manifest.json``) by name and
sha256, so a changed, added or missing file breaks it, whatever the hashes in
the index and the manifest say.

On a remote it is one more file in the artifact's folder (``SIGNATURE``), and
the index record lists it (name, size, sha256, the key's fingerprint and the
format), so readers fetch it with the rest. A remote with trusted keys (zoo.toml
``trusted_keys``, or ``--trusted-key``) refuses any artifact that is unsigned,
signed by another key, or whose files do not match what was signed.

model-signing and its dependencies (cryptography, pyOpenSSL, sigstore) come with
every install (the default remote is signed) and are imported only here, inside the functions that
make or check a signature: they take about half a second to import.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import importlib.util
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from zoo._errors import CacheError, IntegrityError, MissingExtraError, UsageError, ZooError
from zoo.registry.store.cache import MANIFEST, Entry, sha256_file

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ec import (
        EllipticCurvePrivateKey,
        EllipticCurvePublicKey,
    )

SIGNATURE = "signature.sig"
"""The signature's name in the artifact's folder on a remote."""
FORMAT = "model-signing/ec-key"
"""A model-signing bundle made with an elliptic-curve key (the index record's ``format``)."""
MAX_SIGNATURE_BYTES = 1 << 16
"""A key-signed bundle is about 2 KB; anything much bigger is not one."""
PASSWORD_ENV = "ZOO_SIGN_KEY_PASSWORD"
CURVES = ("secp256r1", "secp384r1", "secp521r1")
_EXTRA = ("model_signing", "OpenSSL", "cryptography")
_NEW_KEY = "openssl ecparam -genkey -name prime256v1 -noout -out key.pem"


class MissingSigningExtra(MissingExtraError):
    """Signing or checking signatures where model-signing is not installed."""

    def __init__(self, what: str) -> None:
        ZooError.__init__(
            self, f"{what} needs model-signing, which is not installed. "
            "Install it with: pip install model-signing pyopenssl (dependencies of ethosu-zoo that went missing)"
        )


def require_extra(what: str) -> None:
    """MissingSigningExtra unless the ``signing`` extra is installed. Finds the
    packages without importing them, so it costs nothing on a light command."""
    if any(importlib.util.find_spec(name) is None for name in _EXTRA):
        raise MissingSigningExtra(what)


@dataclass(frozen=True)
class Signature:
    """A signature made for publishing, in a local file."""

    path: Path
    size: int
    sha256: str
    key: str
    """The fingerprint of the public key that checks it (``fingerprint``)."""
    public_key: Path | None = None
    """That public key (PEM), to check a signature a killed publish of this artifact left (``equivalent``)."""
    name: str = SIGNATURE
    format: str = FORMAT


@dataclass
class SignedEntry(Entry):
    """A cache entry about to be published with its signature. ``path`` is a
    private copy of the entry: the files published are the files signed."""

    signature: Signature


def signature_of(entry: Entry) -> Signature | None:
    return entry.signature if isinstance(entry, SignedEntry) else None


def published_signature(entry: Entry, folder: str) -> list[tuple[str, Path]]:
    """(path inside the remote, local file) of ``entry``'s signature, if it is signed:
    what a publish adds to the artifact's folder besides its files and manifest."""
    signature = signature_of(entry)
    return [] if signature is None else [(f"{folder}/{signature.name}", signature.path)]


# --- keys ---------------------------------------------------------------------------------------


def fingerprint(public_key: EllipticCurvePublicKey) -> str:
    """The key's id: the sha256 of its PEM SubjectPublicKeyInfo, in hex. model-signing
    records the same value in each bundle as the key's hint."""
    from cryptography.hazmat.primitives import serialization

    pem = public_key.public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    return hashlib.sha256(pem).hexdigest()


def _read(path: Path, what: str) -> bytes:
    from zoo.registry.remotes.key_files import read_key

    return read_key(path, f"{what} {path}")


def _check_curve(key: object, path: Path, what: str) -> None:
    from cryptography.hazmat.primitives.asymmetric import ec

    curve = key.curve.name if isinstance(key, (ec.EllipticCurvePrivateKey, ec.EllipticCurvePublicKey)) else None
    if curve not in CURVES:
        kind = f"an elliptic-curve key on {curve}" if curve else f"a {type(key).__name__.lstrip('_')}"
        raise UsageError(f"{what} {path} is {kind}; model-signing needs an elliptic-curve key on P-256, P-384 "
                         f"or P-521 (make one with: {_NEW_KEY})")


def load_private_key(path: Path) -> EllipticCurvePrivateKey:
    """The signing key in ``path`` (PEM; encrypted ones take ``ZOO_SIGN_KEY_PASSWORD``)."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec

    what = "--sign-key"
    data = _read(path, what)
    password = os.environ.get(PASSWORD_ENV)
    try:
        key = serialization.load_pem_private_key(data, password.encode() if password else None)
    except TypeError:  # encrypted without a password, or a password for a key that has none
        state = "is encrypted: set" if not password else "is not encrypted: unset"
        raise UsageError(f"{what} {path} {state} {PASSWORD_ENV}") from None
    except ValueError as exc:
        if data.lstrip().startswith(b"-----BEGIN PUBLIC KEY"):
            raise UsageError(f"{what} {path} is a public key; sign with its private key, and give readers this "
                             "one as a trusted key") from None
        raise UsageError(f"{what} {path} is not a PEM private key we can read ({exc}); make one with: {_NEW_KEY}") from None
    _check_curve(key, path, what)
    assert isinstance(key, ec.EllipticCurvePrivateKey)
    return key


def load_public_key(path: Path) -> EllipticCurvePublicKey:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec

    what = "trusted key"
    data = _read(path, what)
    try:
        key = serialization.load_pem_public_key(data)
    except ValueError:
        hint = ("; it holds a private key: trust its public half instead "
                "(openssl ec -in KEY.pem -pubout -out KEY.pub)") if b"PRIVATE KEY" in data else ""
        raise UsageError(f"{what} {path} is not a PEM public key{hint}") from None
    _check_curve(key, path, what)
    assert isinstance(key, ec.EllipticCurvePublicKey)
    return key


def trusted_fingerprints(paths: Sequence[Path]) -> dict[str, Path]:
    """Fingerprint → key file, for every trusted key."""
    return {fingerprint(load_public_key(p)): p for p in paths}


def check_key_files(paths: Sequence[Path], *, remote: str) -> tuple[Path, ...]:
    """The trusted keys of ``remote``, checked before anything is fetched: the
    extra is installed and every file is there. Imports nothing heavy."""
    from zoo.registry.remotes.key_files import absolute, read_key

    if not paths:
        return ()
    require_extra(f"checking signatures (trusted keys for {remote})")
    for path in paths:
        try:
            read_key(path, f"trusted key {path} for {remote}")  # once, now: a pipe (<(…)) cannot be read again
        except UsageError as exc:
            raise UsageError(f"{exc}; fix trusted_keys in zoo.toml or --trusted-key") from None
    # From the root: the signer recorded in the cache names its key file wherever the next fetch runs.
    return tuple(dict.fromkeys(absolute(Path(p)) for p in paths))


# --- signing ------------------------------------------------------------------------------------


def _hashing_config() -> Any:
    """Every file of the folder by name and sha256; nothing ignored, no symlinks."""
    from model_signing import hashing

    config = hashing.Config()  # type: ignore[no-untyped-call]  # model-signing leaves __init__ unannotated
    return (config.set_ignored_paths(paths=[], ignore_git_paths=False)
            .use_file_serialization(hashing_algorithm="sha256", allow_symlinks=False))


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """model-signing prints warnings: they go to stderr, never into zoo's stdout."""
    with contextlib.redirect_stdout(sys.stderr):
        yield


@contextlib.contextmanager
def signed_entries(entries: Sequence[Entry], key_path: Path) -> Iterator[list[Entry]]:
    """``entries`` signed with the private key in ``key_path``, for one publish.

    Each is copied into a private folder (exactly the files the remote will store:
    its files and manifest.json), checked against its manifest again, and signed
    there; the publish then copies from that folder, so what it publishes is what
    was signed. The copies go when the block ends."""
    require_extra("--sign-key")
    key_path = Path(key_path)
    private = load_private_key(key_path)
    key_id = fingerprint(private.public_key())
    from model_signing import signing

    password = os.environ.get(PASSWORD_ENV)
    # model-signing hands the password to cryptography, which takes bytes (its annotation says str).
    secret: Any = password.encode() if password else None
    from cryptography.hazmat.primitives import serialization

    with tempfile.TemporaryDirectory(prefix="zoo-sign-") as work:
        from zoo.registry.remotes.key_files import regular_copy

        # model-signing opens the key by its path: a FIFO or pipe was read once already, so it gets a private copy.
        readable = regular_copy(key_path, _read(key_path, "--sign-key"), Path(work))
        config = signing.Config()  # type: ignore[no-untyped-call]
        config.use_elliptic_key_signer(private_key=readable, password=secret).set_hashing_config(_hashing_config())
        public = Path(work) / "signer.pub"
        public.write_bytes(private.public_key().public_bytes(serialization.Encoding.PEM,
                                                             serialization.PublicFormat.SubjectPublicKeyInfo))
        out: list[Entry] = []
        for n, entry in enumerate(entries):
            folder = Path(work) / str(n) / entry.key
            folder.mkdir(parents=True)
            _copy_checked(entry, folder)
            sig = Path(work) / str(n) / SIGNATURE
            try:
                with _quiet():
                    config.sign(folder, sig)
            except Exception as exc:  # model-signing's own errors have no common base
                m = entry.manifest
                raise ZooError(f"cannot sign {m.model} for {m.target} (key {entry.key[:12]}…) with {key_path}: "
                               f"{type(exc).__name__}: {exc}") from None
            signature = Signature(sig, sig.stat().st_size, sha256_file(sig), key_id, public)
            out.append(SignedEntry(entry.key, folder, entry.manifest, signature))
        yield out


def equivalent(entry: Entry, found: Path) -> bool:
    """Whether the signature in ``found`` (left at the remote by an earlier publish of
    ``entry`` that died before its index write) is as good as the one made now: made
    with the same key, over exactly the files ``entry`` publishes. ECDSA signatures
    differ at every signing, so equal bytes cannot be asked for."""
    signature = signature_of(entry)
    if signature is None or signature.public_key is None:
        return False
    try:
        verify(entry.path, found, {signature.key: signature.public_key}, label=str(found))
    except IntegrityError:
        return False
    return True


def _copy_checked(entry: Entry, folder: Path) -> None:

    m = entry.manifest
    shutil.copyfile(entry.path / MANIFEST, folder / MANIFEST)
    for f in m.files:
        shutil.copyfile(entry.path / f.name, folder / f.name)
        if sha256_file(folder / f.name) != f.sha256:
            raise CacheError(f"{m.model} for {m.target} (key {entry.key[:12]}…): {f.name} changed in the cache "
                             f"while it was being signed; run 'zoo cache verify' and publish again")


# --- checking -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Signer:
    """Who signed an artifact that checked out."""

    key: str
    """The key's fingerprint."""
    key_file: Path
    """The trusted key that matched it."""
    format: str = FORMAT

    def to_json(self) -> dict[str, Any]:
        return {"key": self.key, "key_file": str(self.key_file), "format": self.format}


def check_listed(listed_key: str | None, listed_format: str | None, trusted: dict[str, Path], *, label: str) -> None:
    """Refuse at once what the index already shows cannot pass: an unsigned artifact,
    another format, or a key that is not trusted. (Passing this proves nothing;
    ``verify`` does.)"""
    if listed_format is None:
        raise IntegrityError(f"{label}: it is unsigned, and this remote's artifacts must be signed by "
                             f"{_keys(trusted)}; ask its publisher to publish with 'zoo publish --sign-key', "
                             "or fetch from another source")
    if listed_format != FORMAT:
        raise IntegrityError(f"{label}: it is signed in a format this zoo cannot check ({listed_format!r}); "
                             "upgrade zoo, or fetch from another source")
    if listed_key is not None and listed_key not in trusted:
        raise IntegrityError(_unknown_key(label, listed_key, trusted))


def verify(folder: Path, signature: Path, trusted: dict[str, Path], *, label: str) -> Signer:
    """Check that ``folder`` holds exactly the files ``signature`` signed, with
    one of the ``trusted`` keys; IntegrityError naming what is wrong otherwise."""
    claimed, signed = _read_bundle(signature.read_bytes(), label=label)
    key_file = trusted.get(claimed)
    if key_file is None:
        raise IntegrityError(_unknown_key(label, claimed, trusted))
    present = sorted(p.name for p in folder.iterdir())
    if sorted(signed) != present:
        raise IntegrityError(f"{label}: its signature covers {', '.join(sorted(signed)) or 'no file'}, but the "
                             f"artifact is {', '.join(present)}: not the artifact that was signed")
    from model_signing import verifying

    from zoo.registry.remotes.key_files import regular_copy

    readable = regular_copy(key_file, _read(key_file, "trusted key"), signature.parent)
    try:
        with _quiet():
            config = verifying.Config()  # type: ignore[no-untyped-call]
            config.use_elliptic_key_verifier(public_key=readable).set_hashing_config(_hashing_config())
            config.verify(folder, signature)
    except Exception as exc:  # model-signing's own errors have no common base; any of them refuses it
        changed = [name for name, digest in sorted(signed.items()) if sha256_file(folder / name) != digest]
        if str(exc).startswith("Signature mismatch") and changed:
            raise IntegrityError(f"{label}: {', '.join(changed)} differ{'s' if len(changed) == 1 else ''} from what "
                                 f"{key_file} signed: altered after it was signed") from None
        raise IntegrityError(f"{label}: its signature does not check out with {key_file} ({_reason(exc)}): "
                             "forged or corrupt, or not made with that key") from None
    return Signer(claimed, key_file)


def _read_bundle(data: bytes, *, label: str) -> tuple[str, dict[str, str]]:
    """The key a bundle claims, and the files its statement lists with their sha256.
    Unverified: only used to refuse early and to say why; ``verify`` then checks the bundle."""
    try:
        bundle = json.loads(data)
        hint = bundle["verificationMaterial"]["publicKey"]["hint"]
        statement = json.loads(base64.b64decode(bundle["dsseEnvelope"]["payload"], validate=True))
        signed = {r["name"]: r["digest"] for r in statement["predicate"]["resources"]}
    except (ValueError, TypeError, KeyError, RecursionError) as exc:
        raise IntegrityError(f"{label}: its signature is not a model-signing bundle ({type(exc).__name__}: {exc})") from None
    if not (isinstance(hint, str) and hint and signed and all(isinstance(n, str) for n in signed)):
        raise IntegrityError(f"{label}: its signature names no key or no files; it cannot be checked")
    return hint, signed


def _reason(exc: Exception) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= 300 else text[:300] + "…"


def _keys(trusted: dict[str, Path]) -> str:
    files = ", ".join(str(p) for p in trusted.values())
    return f"one of its trusted keys ({files})" if len(trusted) > 1 else f"its trusted key ({files})"


def _unknown_key(label: str, key: str, trusted: dict[str, Path]) -> str:
    return (f"{label}: it is signed by key {key[:16]}…, which is not {_keys(trusted)}; add that public key to "
            "trusted_keys if you trust it, or fetch from another source")
