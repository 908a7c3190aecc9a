"""Reading and editing published directories in tests."""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from zoo.registry.request.keys import canonical_json
from zoo.registry.store.cache import Cache, Entry
from zoo.registry.store.manifest import Manifest


def load_index(root: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((root / "index.json").read_text())
    return data


def save_index(root: Path, data: dict[str, Any]) -> None:
    (root / "index.json").write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")


def record(root: Path, model: str, slug: str) -> tuple[str, dict[str, Any]]:
    """(key, index record) of the only artifact published for model/slug."""
    keys = load_index(root)["models"][model][slug]
    assert len(keys) == 1, keys
    key, rec = next(iter(keys.items()))
    return key, rec


def artifact_dir(root: Path, rec: dict[str, Any]) -> Path:
    return root / Path(rec["manifest"]).parent


def rewrite_manifest(root: Path, model: str, slug: str, change: Any) -> None:
    """Apply ``change(manifest_dict)`` and re-record its digest in the index, so only
    the change itself can be what a fetch rejects."""
    key, rec = record(root, model, slug)
    path = root / rec["manifest"]
    manifest = json.loads(path.read_text())
    change(manifest)
    data = (json.dumps(manifest, indent=2, sort_keys=True) + "\n").encode()
    path.write_bytes(data)
    index = load_index(root)
    index["models"][model][slug][key]["manifest_sha256"] = hashlib.sha256(data).hexdigest()
    save_index(root, index)


def cached_entry(cache_root: Path, model: str, target: str) -> Entry:
    for _key, entry, _problem in Cache(cache_root).scan():
        if entry is not None and entry.manifest.model == model and entry.manifest.target == target:
            return entry
    raise AssertionError(f"{model} for {target} is not in {cache_root}")


def store_variant(source: Entry, dest_cache: Path, *, tools: dict[str, Any] | None = None,
                  built_at: str | None = None, header_suffix: bytes | None = None) -> Entry:
    """Store a copy of ``source`` in another cache, with other tool versions
    (a different key) or other header bytes (the same key)."""
    m = source.manifest
    files = {f.name: (source.path / f.name).read_bytes() for f in m.files}
    inputs = copy.deepcopy(m.key_inputs)
    if tools:
        inputs["tools"].update(tools)
    key = hashlib.sha256(canonical_json(inputs)).hexdigest()
    records = list(m.files)
    if header_suffix is not None:
        h = m.file("header")
        assert h is not None
        files[h.name] += header_suffix
        records = [replace(f, size=len(files[f.name]), sha256=hashlib.sha256(files[f.name]).hexdigest())
                   if f.name == h.name else f for f in m.files]
    build = {**m.build, "tools": inputs["tools"], "built_at": built_at or m.build["built_at"]}
    manifest = replace(m, key=key, key_inputs=inputs, files=records, build=build)
    header = m.file("header")
    if tools and header is not None:  # the header names the key and the tools: render it as that build would
        manifest = _rendered_again(manifest, files, header.name)
    return Cache(dest_cache).put(manifest, files)


def _rendered_again(m: Manifest, files: dict[str, bytes], header_name: str) -> Manifest:
    from zoo.registry.firmware.c_header import DEFINE, pte_header, stored_options
    from zoo.registry.pte.program import read_program
    from zoo.registry.verify.header_check import manifest_macros

    pte_record = m.file("pte")
    assert pte_record is not None
    pte = files[pte_record.name]
    options = stored_options(m.header)
    order = [name for name, _ in DEFINE.findall(files[header_name].decode())]
    derived = manifest_macros(read_program(pte), m)
    macros = {**m.header["macros"], "build_key": derived["build_key"], "tools": derived["tools"]}
    macros = dict(sorted(macros.items(), key=lambda kv: order.index(f"{options.prefix}_{kv[0].upper()}")
                         if f"{options.prefix}_{kv[0].upper()}" in order else len(order)))
    files[header_name] = pte_header(pte, file_name=header_name, options=options, macros=macros).encode()
    records = [replace(f, size=len(files[f.name]), sha256=hashlib.sha256(files[f.name]).hexdigest())
               if f.name == header_name else f for f in m.files]
    return replace(m, files=records, header={**m.header, "macros": macros})


# --- signed artifacts (tests/remotes/test_signing.py) ----------------------------------------------


@dataclass(frozen=True)
class KeyPair:
    private: Path
    """PEM, PKCS#8, unencrypted: what ``zoo publish --sign-key`` takes."""
    public: Path
    """PEM SubjectPublicKeyInfo: what ``trusted_keys`` and ``--trusted-key`` take."""
    fingerprint: str
    """sha256 of the public PEM, as model-signing records it in a bundle."""


def make_key_pair(folder: Path, name: str, curve: str = "secp256r1") -> KeyPair:
    """A fresh elliptic-curve key pair, made with cryptography."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec

    key = ec.generate_private_key(getattr(ec, curve.upper())())
    folder.mkdir(parents=True, exist_ok=True)
    private, public = folder / f"{name}.pem", folder / f"{name}.pub"
    private.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                          serialization.NoEncryption()))
    pem = key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    public.write_bytes(pem)
    return KeyPair(private, public, hashlib.sha256(pem).hexdigest())


def tamper_pte(read: Callable[[str], bytes], write: Callable[[str, bytes], None], model: str, slug: str) -> None:
    """Flip one bit of the published .pte, and make everything else agree with it: the
    header's array and sha256 macro, the manifest's records and macro, and the index's
    digests. Only a signature can tell that this is not what was published."""
    from zoo.registry.firmware.c_header import _hex_lines

    index_text = read("index.json").decode()
    key, rec = next(iter(json.loads(index_text)["models"][model][slug].items()))
    folder = str(Path(rec["manifest"]).parent)
    manifest_text = read(rec["manifest"]).decode()
    files = {f["kind"]: f["name"] for f in json.loads(manifest_text)["files"]}
    pte_path, header_path = f"{folder}/{files['pte']}", f"{folder}/{files['header']}"

    def sha(data: bytes) -> str:
        return hashlib.sha256(data).hexdigest()

    old_pte = read(pte_path)
    new_pte = old_pte[:-1] + bytes([old_pte[-1] ^ 1])
    old_header = read(header_path)
    new_header = (old_header.decode().replace(_hex_lines(old_pte), _hex_lines(new_pte))
                  .replace(sha(old_pte), sha(new_pte)).encode())
    assert new_header != old_header and len(new_header) == len(old_header)
    new_manifest = manifest_text.replace(sha(old_pte), sha(new_pte)).replace(sha(old_header), sha(new_header)).encode()
    old_manifest = read(rec["manifest"])
    new_index = (index_text.replace(sha(old_pte), sha(new_pte)).replace(sha(old_header), sha(new_header))
                 .replace(sha(old_manifest), sha(new_manifest)).encode())
    assert key in new_index.decode()
    for path, data in ((pte_path, new_pte), (header_path, new_header), (rec["manifest"], new_manifest),
                       ("index.json", new_index)):
        write(path, data)


def directory_files(root: Path) -> tuple[Callable[[str], bytes], Callable[[str, bytes], None]]:
    """(read, write) of the files of a directory remote, by path inside it."""
    return (lambda path: (root / path).read_bytes()), (lambda path, data: (root / path).write_bytes(data))


def build_extra_site(dest: Path, *roots: str) -> Path:
    """A light install plus an extra: ``build_light_site`` and links to the top-level
    packages of ``roots`` (distributions) and their own dependencies."""
    from tests.remotes.light_site import build_light_site, light_dependencies

    build_light_site(dest)
    for root in roots:
        for dist in light_dependencies(root).values():
            tops = {Path(str(f)).parts[0] for f in dist.files or [] if Path(str(f)).parts}
            for top in tops:
                if top in ("..", "__pycache__") or top.endswith(".pth"):
                    continue
                src, link = Path(str(dist.locate_file(top))), dest / top
                if src.exists() and not link.exists():
                    link.symlink_to(src)
    return dest


def build_unsigning_site(dest: Path) -> Path:
    """A light install whose model-signing went missing (e.g. ``pip install --no-deps``)."""
    from tests.remotes.light_site import build_light_site

    return build_light_site(dest, without=("model-signing", "pyopenssl"))


# --- S3 buckets (tests/remotes/test_object_store.py) ----------------------------------------------


@dataclass
class S3Bucket:
    """A bucket on the tests' moto server, and the remote at ``prefix`` in it."""

    client: Any
    """A boto3 client, for the tests' own setup and tampering."""
    name: str
    prefix: str

    @property
    def url(self) -> str:
        return f"s3://{self.name}/{self.prefix}"

    def read(self, path: str) -> bytes:
        data: bytes = self.client.get_object(Bucket=self.name, Key=f"{self.prefix}/{path}")["Body"].read()
        return data

    def write(self, path: str, data: bytes) -> None:
        self.client.put_object(Bucket=self.name, Key=f"{self.prefix}/{path}", Body=data)

    def etag(self, path: str) -> str:
        return str(self.client.head_object(Bucket=self.name, Key=f"{self.prefix}/{path}")["ETag"])

    def objects(self) -> list[str]:
        """Every object under the prefix, relative to it."""
        pages = self.client.get_paginator("list_objects_v2").paginate(Bucket=self.name, Prefix=f"{self.prefix}/")
        return sorted(o["Key"][len(self.prefix) + 1:] for page in pages for o in page.get("Contents", []))

    def index(self) -> dict[str, Any]:
        data: dict[str, Any] = json.loads(self.read("index.json"))
        return data

    def save_index(self, data: dict[str, Any]) -> None:
        self.write("index.json", (json.dumps(data, indent=2, sort_keys=True) + "\n").encode())


def build_s3_site(dest: Path) -> Path:
    """A light install plus the ``s3`` extra (s3fs and what it needs)."""
    return build_extra_site(dest, "s3fs")
