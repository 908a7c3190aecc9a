"""Signed artifacts (issue 13). Hashes prove that a download matches its index;
a signature proves who published it. ``zoo publish --sign-key`` signs each
artifact's folder with OpenSSF model-signing and publishes the signature beside
it; a remote with trusted keys refuses what is unsigned, signed by another key,
or changed since it was signed, and caches none of it.

Real keys made with cryptography, a real directory, the loopback HTTP server and
the test Hub; the artifacts are ``add``'s, from the fake compile.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import run_probed
from tests.fake_compile import FakeCompile
from tests.hub_server import HubTestServer
from tests.remotes.conftest import cache_is_clean, run_checked
from tests.remotes.helpers import (
    KeyPair,
    build_unsigning_site,
    directory_files,
    load_index,
    make_key_pair,
    record,
    save_index,
    tamper_pte,
)
from tests.remotes.servers import StaticServer
from zoo import Artifact, IntegrityError, Zoo
from zoo._config import parse_config
from zoo._errors import ConfigError, MissingExtraError, RemoteError, UsageError
from zoo.registry.remotes import parse_remote
from zoo.registry.remotes.base import PublishReport
from zoo.registry.remotes.download import Search, find_prebuilt
from zoo.registry.remotes.signing import FORMAT, SIGNATURE, published_signature, signed_entries
from zoo.registry.store.cache import Cache, Entry

KINDS = ("directory", "http", "hf")
REPO = "team/signed-zoo"
PTE = "add_u55-128.pte"
SIGNING_STACK = ("model_signing", "OpenSSL", "cryptography", "sigstore")

@dataclass
class Keys:
    ci: KeyPair
    """What the build system signs with."""
    other: KeyPair
    """Someone else's."""


@pytest.fixture
def keys(tmp_path: Path) -> Keys:
    return Keys(make_key_pair(tmp_path / "keys", "ci"), make_key_pair(tmp_path / "keys", "other"))


@pytest.fixture
def source(fake_compile: FakeCompile, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Entry:
    """add for u55-128 in a cache of its own; ZOO_CACHE_DIR is then an empty cache to fetch into."""
    monkeypatch.setenv("ZOO_CACHE_DIR", str(tmp_path / "source-cache"))
    art = Zoo().fetch("add", "u55-128", notice=lambda m: None)
    entry = Cache(tmp_path / "source-cache").get(art.key)
    assert entry is not None
    monkeypatch.setenv("ZOO_CACHE_DIR", str(tmp_path / "cache"))
    return entry


@dataclass
class Place:
    """One remote, as a publisher and a reader see it."""

    to: str
    url: str
    read: Callable[[str], bytes]
    write: Callable[[str, bytes], None]
    server: StaticServer | None = None


PlaceOf = Callable[[str], AbstractContextManager[Place]]


@pytest.fixture
def place_of(tmp_path: Path, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> PlaceOf:
    """``with place_of(kind) as place``: a directory, that directory over HTTP, or the test Hub."""

    @contextmanager
    def place(kind: str) -> Iterator[Place]:
        if kind == "hf":
            import huggingface_hub.constants

            hub: HubTestServer = request.getfixturevalue("hub")
            # The client read these when it was first imported, maybe before this hub existed:
            # hf_hub_url() builds on the template and swaps in the endpoint only where it starts with ENDPOINT.
            constants = huggingface_hub.constants
            monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hf-cache"))
            monkeypatch.setattr(constants, "ENDPOINT", hub.url)
            monkeypatch.setattr(constants, "HUGGINGFACE_CO_URL_TEMPLATE", hub.url + "/{repo_id}/resolve/{revision}/{filename}")
            yield Place(f"hf://{REPO}", f"hf://{REPO}", lambda p: hub.files(REPO)[p],
                        lambda p, data: hub.tamper(REPO, p, data))
            return
        share = tmp_path / "share"
        share.mkdir(exist_ok=True)
        read, write = directory_files(share)
        if kind == "directory":
            yield Place(str(share), f"file://{share}", read, write)
            return
        with StaticServer(share) as server:
            yield Place(str(share), server.url, read, write, server)

    return place


def publish(entry: Entry, to: str, key: Path | None) -> PublishReport:
    """What ``zoo publish --sign-key KEY`` does with one cached entry."""
    remote = parse_remote(to)
    if key is None:
        return remote.publish([entry], say=lambda m: None)
    with signed_entries([entry], key) as signed:
        return remote.publish(signed, say=lambda m: None)


def fetch(url: str, *trusted: Path, cache: Path | None = None) -> tuple[Search, list[str]]:
    """Look for add for u55-128 on ``url`` as ``zoo fetch`` does, trusting ``trusted``."""
    notes: list[str] = []
    search = find_prebuilt(Zoo().request("add", "u55-128"), Cache(cache or Path(os.environ["ZOO_CACHE_DIR"])),
                           [parse_remote(url, trusted_keys=trusted)], say=notes.append)
    return search, notes


def assert_refused(search: Search, notes: list[str], url: str, *reasons: str) -> None:
    """Refused with one line that names the remote, the artifact and why; nothing cached."""
    assert search.found is None, notes
    assert len(search.refused) == 1, search.refused
    [line] = [n for n in notes if "skipping this artifact" in n]
    assert "\n" not in line and line.startswith(f"{url}: add for ethos-u55-128 (key "), line
    assert line.endswith("; nothing of it was cached; skipping this artifact"), line
    for reason in reasons:
        assert reason in line, (reason, line)
    assert cache_is_clean(Path(os.environ["ZOO_CACHE_DIR"]))


# 1. Signed publish and fetch, on every kind of remote.

@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.slow
def test_a_signed_artifact_is_fetched_and_its_signer_recorded(kind: str, source: Entry, keys: Keys,
                                                              place_of: PlaceOf) -> None:
    with place_of(kind) as place:
        [added] = publish(source, place.to, keys.ci.private).added
        assert added.signature is not None and added.signature.key == keys.ci.fingerprint
        index = json.loads(place.read("index.json"))
        listed = index["models"]["add"]["u55-128"][source.key]["signature"]
        signature = place.read(f"{added.folder}/{SIGNATURE}")
        assert listed == {"name": SIGNATURE, "size": len(signature), "sha256": hashlib.sha256(signature).hexdigest(),
                          "key": keys.ci.fingerprint, "format": FORMAT}

        search, notes = fetch(place.url, keys.other.public, keys.ci.public)  # one of several trusted keys

    assert search.found is not None and search.found.source == "remote", notes
    entry = search.found.entry
    assert {f.name: (entry.path / f.name).read_bytes() for f in entry.manifest.files} == {
        f.name: (source.path / f.name).read_bytes() for f in source.manifest.files}
    assert (entry.manifest.verification or {})["signature"] == {
        "key": keys.ci.fingerprint, "key_file": str(keys.ci.public), "format": FORMAT, "remote": place.url,
        "signature_sha256": listed["sha256"],
    }
    assert any(f"every file verified, signed by key {keys.ci.fingerprint[:16]}… ({keys.ci.public})" in n
               for n in notes), notes


# 2. What the hashes cannot catch.

@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.slow
def test_a_tampered_pte_rehashed_to_match_is_refused(kind: str, source: Entry, keys: Keys, tmp_path: Path,
                                                     place_of: PlaceOf) -> None:
    with place_of(kind) as place:
        publish(source, place.to, keys.ci.private)
        tamper_pte(place.read, place.write, "add", "u55-128")

        # Without a trusted key it passes every check (hashes, structure, header): the tamper is consistent.
        accepted, notes = fetch(place.url, cache=tmp_path / "trusting-cache")
        assert accepted.found is not None, notes
        assert (accepted.found.entry.path / PTE).read_bytes() != (source.path / PTE).read_bytes()

        search, notes = fetch(place.url, keys.ci.public)
    assert_refused(search, notes, place.url, f"add_u55-128.h, {PTE}, manifest.json differ from what "
                   f"{keys.ci.public} signed: altered after it was signed")


@pytest.mark.parametrize("kind", ["directory", "http"])
def test_a_signature_by_another_key_is_refused_before_anything_is_downloaded(
        kind: str, source: Entry, keys: Keys, place_of: PlaceOf) -> None:
    with place_of(kind) as place:
        publish(source, place.to, keys.other.private)
        search, notes = fetch(place.url, keys.ci.public)
        if place.server is not None:
            assert place.server.requests == ["/index.json"]
    assert_refused(search, notes, place.url, f"signed by key {keys.other.fingerprint[:16]}…",
                   f"which is not its trusted key ({keys.ci.public})")


def test_a_signature_that_claims_the_trusted_key_is_checked_with_it(source: Entry, keys: Keys,
                                                                    place_of: PlaceOf) -> None:
    """Another key's signature, relabelled with the trusted key's fingerprint in the
    bundle and the index: the key's own check refuses it."""
    with place_of("directory") as place:
        [added] = publish(source, place.to, keys.ci.private).added
        with signed_entries([source], keys.other.private) as [forged]:
            bundle = json.loads(published_signature(forged, "x")[0][1].read_bytes())
        bundle["verificationMaterial"]["publicKey"]["hint"] = keys.ci.fingerprint
        data = json.dumps(bundle).encode()
        place.write(f"{added.folder}/{SIGNATURE}", data)
        index = json.loads(place.read("index.json"))
        index["models"]["add"]["u55-128"][source.key]["signature"].update(
            size=len(data), sha256=hashlib.sha256(data).hexdigest())
        place.write("index.json", json.dumps(index).encode())

        search, notes = fetch(place.url, keys.ci.public)
    assert_refused(search, notes, place.url, f"its signature does not check out with {keys.ci.public} "
                   "(InvalidSignature): forged or corrupt, or not made with that key")


def test_a_signature_that_covers_other_files_is_refused(source: Entry, keys: Keys, place_of: PlaceOf) -> None:
    """A signature of the artifact with one file left out: the files are unchanged, but not all of them were signed."""
    with place_of("directory") as place:
        [added] = publish(source, place.to, keys.ci.private).added
        folder = Path(place.to) / added.folder
        partial = folder.parent / "partial"
        shutil.copytree(folder, partial)
        (partial / SIGNATURE).unlink()
        (partial / "add_u55-128.h").unlink()
        from model_signing import signing

        from zoo.registry.remotes.signing import _hashing_config

        config = signing.Config().use_elliptic_key_signer(private_key=keys.ci.private)
        config.set_hashing_config(_hashing_config()).sign(partial, folder / SIGNATURE)
        data = (folder / SIGNATURE).read_bytes()
        index = load_index(Path(place.to))
        index["models"]["add"]["u55-128"][source.key]["signature"].update(
            size=len(data), sha256=hashlib.sha256(data).hexdigest())
        save_index(Path(place.to), index)

        search, notes = fetch(place.url, keys.ci.public)
    assert_refused(search, notes, place.url, "its signature covers add_u55-128.pte, add_u55-128.s, add_u55-128_io.c, "
                   "add_u55-128_io.h, manifest.json, but the artifact is add_u55-128.h, add_u55-128.pte, add_u55-128.s, "
                   "add_u55-128_io.c, add_u55-128_io.h, manifest.json")


# 3. Unsigned artifacts.

@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.slow
def test_an_unsigned_artifact_is_refused_when_a_key_is_required(kind: str, source: Entry, keys: Keys,
                                                               place_of: PlaceOf) -> None:
    with place_of(kind) as place:
        [added] = publish(source, place.to, None).added
        assert added.signature is None
        assert "signature" not in json.loads(place.read("index.json"))["models"]["add"]["u55-128"][source.key]
        search, notes = fetch(place.url, keys.ci.public)
        if place.server is not None:
            assert place.server.requests == ["/index.json"]
    assert_refused(search, notes, place.url, f"it is unsigned, and this remote's artifacts must be signed by its "
                   f"trusted key ({keys.ci.public})", "zoo publish --sign-key")


def test_an_unsigned_remote_is_skipped_for_a_signed_one(source: Entry, keys: Keys, tmp_path: Path) -> None:
    unsigned, signed = tmp_path / "unsigned", tmp_path / "signed"
    publish(source, str(unsigned), None)
    publish(source, str(signed), keys.ci.private)
    notes: list[str] = []
    search = find_prebuilt(Zoo().request("add", "u55-128"), Cache(Path(os.environ["ZOO_CACHE_DIR"])),
                           [parse_remote(str(r), trusted_keys=[keys.ci.public]) for r in (unsigned, signed)],
                           say=notes.append)
    assert search.found is not None and search.found.remote == str(signed), notes
    assert [n for n in notes if "skipping" in n] == [search.refused[0] + "; skipping this artifact"]
    assert search.refused[0].startswith(f"{unsigned}: add for ethos-u55-128") and "it is unsigned" in search.refused[0]


def test_a_malformed_signature_record_fails_only_its_artifact(source: Entry, keys: Keys, tmp_path: Path) -> None:
    share = tmp_path / "share"
    publish(source, str(share), keys.ci.private)
    index = load_index(share)
    _key, rec = record(share, "add", "u55-128")
    rec["signature"]["name"] = "../../evil.sig"
    index["models"]["add"]["u55-128"] = {_key: rec}
    save_index(share, index)
    search, notes = fetch(str(share))
    assert search.found is None
    assert any("names the file '../../evil.sig'" in n and "skipping this entry" in n for n in notes), notes


# 4. Keys: clear errors before anything is fetched or published.

def test_trusted_keys_are_checked_when_the_remote_is_set_up(keys: Keys, tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=r"trusted key .*missing\.pub for .*: no such file; fix trusted_keys in zoo\.toml"):
        parse_remote(str(tmp_path), trusted_keys=[tmp_path / "missing.pub"])
    remote = parse_remote(str(tmp_path), trusted_keys=[keys.ci.public, keys.ci.public])
    assert remote.trusted_keys == (keys.ci.public,)


@pytest.mark.parametrize("case", ["private key as trusted", "ed25519 trusted", "public key to sign", "ed25519 to sign",
                                  "encrypted, no password", "garbage"])
def test_unusable_keys_say_what_to_do(case: str, source: Entry, keys: Keys, tmp_path: Path) -> None:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec, ed25519

    ed = ed25519.Ed25519PrivateKey.generate()
    files = {
        "ed.pem": ed.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                   serialization.NoEncryption()),
        "ed.pub": ed.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo),
        "locked.pem": ec.generate_private_key(ec.SECP256R1()).private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.BestAvailableEncryption(b"pw")),
        "garbage.pem": b"not a key\n",
    }
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
    trusted, sign = {
        "private key as trusted": (keys.ci.private, None),
        "ed25519 trusted": (tmp_path / "ed.pub", None),
        "public key to sign": (None, keys.ci.public),
        "ed25519 to sign": (None, tmp_path / "ed.pem"),
        "encrypted, no password": (None, tmp_path / "locked.pem"),
        "garbage": (None, tmp_path / "garbage.pem"),
    }[case]
    expected = {
        "private key as trusted": "it holds a private key: trust its public half instead",
        "ed25519 trusted": "needs an elliptic-curve key on P-256, P-384 or P-521",
        "public key to sign": "is a public key; sign with its private key",
        "ed25519 to sign": "needs an elliptic-curve key on P-256, P-384 or P-521",
        "encrypted, no password": "is encrypted: set ZOO_SIGN_KEY_PASSWORD",
        "garbage": "is not a PEM private key",
    }[case]
    with pytest.raises(UsageError) as info:
        if trusted is not None:
            publish(source, str(tmp_path / "share"), keys.ci.private)
            fetch(str(tmp_path / "share"), trusted)
        else:
            assert sign is not None
            publish(source, str(tmp_path / "share"), sign)
    assert expected in str(info.value) and "\n" not in str(info.value)
    assert str(trusted or sign) in str(info.value)
    assert cache_is_clean(Path(os.environ["ZOO_CACHE_DIR"]))


def test_an_encrypted_signing_key_takes_its_password_from_the_environment(
        source: Entry, keys: Keys, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from cryptography.hazmat.primitives import serialization

    key = serialization.load_pem_private_key(keys.ci.private.read_bytes(), None)
    locked = tmp_path / "locked.pem"
    locked.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                         serialization.BestAvailableEncryption(b"s3cret")))
    monkeypatch.setenv("ZOO_SIGN_KEY_PASSWORD", "s3cret")
    publish(source, str(tmp_path / "share"), locked)
    search, notes = fetch(str(tmp_path / "share"), keys.ci.public)
    assert search.found is not None, notes


def test_without_model_signing_a_key_says_how_to_install_it(source: Entry, keys: Keys, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "model_signing", None)  # as if not installed: find_spec gives None
    with pytest.raises(MissingExtraError, match=r"trusted keys for .*needs model-signing, which is not installed\. "
                                                r"Install it with: pip install model-signing pyopenssl"):
        parse_remote(str(tmp_path), trusted_keys=[keys.ci.public])
    with pytest.raises(MissingExtraError, match=r"--sign-key needs model-signing.*pip install model-signing pyopenssl"):
        publish(source, str(tmp_path / "share"), keys.ci.private)
    assert not (tmp_path / "share").exists()
    # The default remote is skipped, saying why, and the fetch goes on without it.
    [default] = Zoo().remotes()
    with pytest.raises(RemoteError, match=r"hf://\S+@v\S+: checking signatures .*needs model-signing"):
        default.read_index()


# 5. zoo.toml: a remote may be a table with its trusted keys.

def test_zoo_toml_gives_a_remote_its_trusted_keys(tmp_path: Path) -> None:
    path = tmp_path / "conf" / "zoo.toml"
    cfg = parse_config({"remotes": [
        "hf://team/plain",
        {"url": "share", "trusted_keys": ["keys/ci.pub", "/abs/other.pub"]},
        {"url": "hf://team/signed"},
        {"url": "share", "trusted_keys": ["keys/ci2.pub"]},
    ]}, path)
    assert cfg.remotes == ("hf://team/plain", "share", "hf://team/signed", "share")
    assert dict(cfg.trusted_keys) == {"share": (tmp_path / "conf" / "keys" / "ci.pub", Path("/abs/other.pub"),
                                                tmp_path / "conf" / "keys" / "ci2.pub")}


@pytest.mark.parametrize(("remotes", "message"), [
    ([{"url": "share", "trusted": ["k.pub"]}], "unknown key 'remotes[0].trusted'; expected one of: trusted_keys, url"),
    ([{"trusted_keys": ["k.pub"]}], "key 'remotes[0].url' must be a remote URL or directory, got None"),
    (["ok", {"url": "share", "trusted_keys": "k.pub"}], "key 'remotes[1].trusted_keys' must be a list of strings"),
    ([{"url": "share", "trusted_keys": [""]}], "key 'remotes[0].trusted_keys[0]' must be the path of a public key file"),
    ([5], "key 'remotes[0]' must be a URL or a table"),
    ("share", "key 'remotes' must be a list of remotes"),
])
def test_zoo_toml_remote_tables_are_validated(remotes: object, message: str, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=message.replace("[", r"\[").replace("]", r"\]").replace("(", r"\(")
                       .replace(")", r"\)")):
        parse_config({"remotes": remotes}, tmp_path / "zoo.toml")


# 6. Light commands never load the signing stack.

@pytest.mark.slow
def test_light_commands_never_import_the_signing_stack(keys: Keys, tmp_path: Path) -> None:
    (tmp_path / "zoo.toml").write_text(f'remotes = [{{url = "share", trusted_keys = ["{keys.ci.public}"]}}]\n')
    listed = run_probed("list", watch=SIGNING_STACK, cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert listed.loaded == []
    # Every zoo module on the way to a fetch or a publish, loaded at once.
    code = ("import sys, zoo.registry.remotes.signing, zoo.registry.remotes.download, zoo.registry.remotes.index, "
            "zoo.registry.remotes.publish, zoo.cli.publishing, zoo.cli.fetching; "
            f"print(sorted({{m.split('.')[0] for m in sys.modules}} & {set(SIGNING_STACK)!r}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out


# 7. The command line, end to end (needs zoo/_api/publishing.py).

@pytest.mark.slow
def test_cli_publish_signed_then_fetch_trusting_zoo_toml_or_the_flag(source: Entry, keys: Keys, tmp_path: Path) -> None:
    share = tmp_path / "share"
    published = run_checked("publish", "add", "-t", "u55-128", "--to", str(share), "--sign-key", str(keys.ci.private),
                            "--json", env={"ZOO_CACHE_DIR": str(source.path.parents[3])})
    assert published.returncode == 0, published.stderr
    [added] = json.loads(published.stdout)["added"]
    assert added["signature"] == {"file": f"{Path(added['manifest']).parent}/{SIGNATURE}", "key": keys.ci.fingerprint}

    project = tmp_path / "project"
    (project / "keys").mkdir(parents=True)
    shutil.copy(keys.ci.public, project / "keys" / "ci.pub")
    (project / "zoo.toml").write_text(f'remotes = [{{url = "{share}", trusted_keys = ["keys/ci.pub"]}}]\n')
    cache = tmp_path / "fetched"
    ok = run_checked("fetch", "add", "-t", "u55-128", "--no-build", "--json",
                     env={"ZOO_CACHE_DIR": str(cache), "ZOO_CONFIG": str(project / "zoo.toml")})
    assert ok.returncode == 0, ok.stderr
    signer = json.loads(ok.stdout)["manifest"]["verification"]["signature"]
    assert signer["key"] == keys.ci.fingerprint and signer["key_file"] == str(project / "keys" / "ci.pub")

    # --trusted-key applies to every remote, zoo.toml's or --remote's.
    refused = run_checked("fetch", "add", "-t", "u55-128", "--no-build", "--remote", str(share),
                          "--trusted-key", str(keys.other.public),
                          env={"ZOO_CACHE_DIR": str(tmp_path / "refused")})
    assert refused.returncode == 1
    assert f"which is not its trusted key ({keys.other.public})" in refused.stderr, refused.stderr
    assert "building was ruled out (--no-build)" in refused.stderr
    assert cache_is_clean(tmp_path / "refused")


@pytest.mark.slow
def test_a_light_install_checks_signatures(source: Entry, keys: Keys, tmp_path: Path, light: Path) -> None:
    share = tmp_path / "share"
    publish(source, str(share), keys.ci.private)
    args = ("fetch", "add", "-t", "u55-128", "--no-build", "--json", "--remote", str(share),
            "--trusted-key", str(keys.ci.public))
    ok = run_checked(*args, env={"ZOO_CACHE_DIR": str(tmp_path / "a")}, light_site=light)
    assert ok.returncode == 0, ok.stderr
    assert ok.loaded == []  # no torch
    assert json.loads(ok.stdout)["manifest"]["verification"]["signature"]["key"] == keys.ci.fingerprint

    unsigning = build_unsigning_site(tmp_path / "unsigning-site")
    missing = run_checked(*args, env={"ZOO_CACHE_DIR": str(tmp_path / "b")}, light_site=unsigning)
    assert missing.returncode == 1
    assert "needs model-signing, which is not installed. Install it with: pip install model-signing pyopenssl" in missing.stderr
    assert "Traceback" not in missing.stderr


@pytest.mark.slow
def test_a_cached_fetch_with_a_trusted_key_stays_light(source: Entry, keys: Keys, tmp_path: Path) -> None:
    cache = source.path.parents[3]
    hit = run_probed("fetch", "add", "-t", "u55-128", "--remote", str(tmp_path / "nowhere"), "--trusted-key",
                     str(keys.ci.public), watch=SIGNING_STACK, env={"ZOO_CACHE_DIR": str(cache)})
    assert hit.returncode == 0, hit.stderr
    assert hit.loaded == []


# 7. Trusted keys hold on a cache hit too, and only zoo records a signer (issue 20).

def _fetch_add(*remotes: Path, trusted: tuple[Path, ...] = (), build: bool = False) -> tuple[Artifact, list[str]]:
    notes: list[str] = []
    art = Zoo().fetch("add", "u55-128", remotes=tuple(str(r) for r in remotes), trusted_keys=trusted, build=build,
                      notice=notes.append)
    return art, notes


@pytest.mark.slow
def test_a_cached_unsigned_download_is_not_handed_out_under_a_trusted_key(source: Entry, keys: Keys,
                                                                           tmp_path: Path) -> None:
    unsigned, signed = tmp_path / "unsigned", tmp_path / "signed"
    publish(source, str(unsigned), None)
    publish(source, str(signed), keys.ci.private)
    first, _ = _fetch_add(unsigned)
    assert first.source == "remote" and "signature" not in (first.manifest.verification or {})

    # The signed remote's artifact takes the unsigned one's place in the cache.
    art, notes = _fetch_add(signed, trusted=(keys.ci.public,))
    assert art.source == "remote", notes
    assert (art.manifest.verification or {})["signature"]["key"] == keys.ci.fingerprint
    assert any("not handing out the cached artifact" in n and "zoo never checked a signature for it" in n
               for n in notes), notes
    again, notes = _fetch_add(signed, trusted=(keys.ci.public,))
    assert again.source == "cache" and not any("not handing out" in n for n in notes), notes

    # Signed by a key that is not in force: looked past too.
    with pytest.raises(IntegrityError, match=r"the cached artifact is not handed out: it is signed by key "
                                             rf"{keys.ci.fingerprint[:16]}… \({keys.ci.public}\), which is not one "
                                             rf"of the trusted keys in force \({keys.other.public}\);.*--no-build"):
        _fetch_add(signed, trusted=(keys.other.public,))


@pytest.mark.slow
def test_under_a_trusted_key_an_unsigned_cached_download_fails_plainly_without_a_build(
        source: Entry, keys: Keys, tmp_path: Path) -> None:
    unsigned = tmp_path / "unsigned"
    publish(source, str(unsigned), None)
    _fetch_add(unsigned)
    cli = run_checked("fetch", "add", "-t", "u55-128", "--remote", str(unsigned), "--trusted-key",
                      str(keys.ci.public), "--no-build", env={"ZOO_CACHE_DIR": os.environ["ZOO_CACHE_DIR"]})
    assert cli.returncode != 0 and cli.stdout == ""
    assert "add for ethos-u55-128: the cached artifact is not handed out: zoo never checked a signature for it" \
        in cli.stderr, cli.stderr
    assert "building was ruled out (--no-build)" in cli.stderr
    # Without trusted keys in force, the cache hands it out as before.
    assert _fetch_add(unsigned)[0].source == "cache"


def test_under_a_trusted_key_a_local_build_is_handed_out_and_a_download_is_rebuilt(
        source: Entry, keys: Keys, tmp_path: Path, fake_compile: FakeCompile) -> None:
    # A build of zoo's own is not a prebuilt artifact: the cache hands it out.
    mine, notes = _fetch_add(tmp_path / "nowhere", trusted=(keys.ci.public,), build=True)
    assert mine.source in ("build", "cache") and (mine.manifest.verification or {})["local_build"] is True
    assert _fetch_add(tmp_path / "nowhere", trusted=(keys.ci.public,))[0].source == "cache"

    # An unsigned download is replaced by a build when building is allowed.
    unsigned = tmp_path / "unsigned"
    publish(source, str(unsigned), None)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ZOO_CACHE_DIR", str(tmp_path / "other-cache"))
        assert _fetch_add(unsigned)[0].source == "remote"
        calls = len(fake_compile.calls)
        art, notes = _fetch_add(unsigned, trusted=(keys.ci.public,), build=True)
        assert art.source == "build" and len(fake_compile.calls) == calls + 1, notes
        assert (art.manifest.verification or {}).get("local_build") is True


def test_the_signers_key_file_is_recorded_from_the_root(source: Entry, keys: Keys, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    share = tmp_path / "share"
    publish(source, str(share), keys.ci.private)
    monkeypatch.chdir(keys.ci.public.parent)
    art, _ = _fetch_add(share, trusted=(Path(keys.ci.public.name),))
    assert (art.manifest.verification or {})["signature"]["key_file"] == str(keys.ci.public)


@pytest.mark.slow
def test_a_trusted_key_from_a_pipe_or_a_fifo_is_read_once(source: Entry, keys: Keys, tmp_path: Path) -> None:
    share = tmp_path / "share"
    publish(source, str(share), keys.ci.private)
    env = {**os.environ, "ZOO_CACHE_DIR": str(tmp_path / "piped")}
    zoo = f"{sys.executable} -m zoo"
    piped = subprocess.run(["bash", "-c", f'{zoo} fetch add -t u55-128 --no-build --remote "{share}" '
                            f'--trusted-key <(cat "{keys.ci.public}")'], env=env, capture_output=True, text=True,
                           timeout=120)
    assert piped.returncode == 0, piped.stderr
    assert "no such file" not in piped.stderr

    fifo = tmp_path / "ci.fifo"
    os.mkfifo(fifo)
    writer = subprocess.Popen(["bash", "-c", f'cat "{keys.ci.public}" > "{fifo}"'])
    try:
        fed = run_checked("fetch", "add", "-t", "u55-128", "--no-build", "--remote", str(share),
                          "--trusted-key", str(fifo), env={"ZOO_CACHE_DIR": str(tmp_path / "fifo")})
    finally:
        writer.wait(30)
    assert fed.returncode == 0, fed.stderr

    # Nobody writes to it: an error at once, not a hang.
    quiet = run_checked("fetch", "add", "-t", "u55-128", "--no-build", "--remote", str(share),
                        "--trusted-key", str(fifo), env={"ZOO_CACHE_DIR": str(tmp_path / "quiet")})
    assert quiet.returncode == 2 or quiet.returncode == 1
    assert f"trusted key {fifo} for {share} is empty (a FIFO or pipe that nothing wrote to)" in quiet.stderr


@pytest.mark.slow
def test_a_sign_key_fifo_nobody_writes_to_is_an_error_not_a_hang(source: Entry, tmp_path: Path) -> None:
    fifo = tmp_path / "key.fifo"
    os.mkfifo(fifo)
    published = run_checked("publish", "add", "-t", "u55-128", "--to", str(tmp_path / "share"), "--sign-key", str(fifo),
                            env={"ZOO_CACHE_DIR": str(source.path.parents[3])})
    assert published.returncode in (1, 2)
    assert f"--sign-key {fifo} is empty (a FIFO or pipe that nothing wrote to)" in published.stderr
