"""Reading and editing published directories in tests."""

from __future__ import annotations

import copy
import hashlib
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from zoo.registry.cache import Cache, Entry
from zoo.registry.keys import canonical_json


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
    return Cache(dest_cache).put(manifest, files)
