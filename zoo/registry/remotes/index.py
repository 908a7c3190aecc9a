"""``index.json``: the table of contents of a published remote.

    {"schema": 1, "written_by": "0.1.0", "readable_by": ">=0.1.0",
     "models": {MODEL: {TARGET_SLUG: {BUILD_KEY: record}}}}
(``written_by`` and ``readable_by``: which zoo can read it, see ``index_version``.)

Each record names the artifact's ``manifest.json`` (a path relative to the
remote's root) and its sha256, so a downloaded manifest is checked against the
index and every file against the manifest. The record also carries what a
reader needs to choose an artifact without downloading it: the key inputs
(whose sha256 is the key), the build time, the files with their checksums and
Vela's estimates (which the Hub model card shows). A signed artifact's record
also lists its signature (``signature``: name, size, sha256, the key's
fingerprint and the format; see ``zoo.registry.remotes.signing``), a file in the same
folder; an unsigned one has no ``signature``.

A record that cannot be read (a wrong type, an unsafe path) is left out of the
index and kept aside as ``Rejected``: it fails closed for its own artifact
only, and a publish writes it back as it was, since publishing only adds.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import PurePosixPath
from typing import Any

from zoo._errors import IntegrityError, RemoteError
from zoo._version import __version__
from zoo.registry.remotes.index_version import READABLE_BY, SCHEMA, check_readable
from zoo.registry.remotes.signing import MAX_SIGNATURE_BYTES, signature_of
from zoo.registry.request.keys import key_of
from zoo.registry.store.cache import MANIFEST, Entry
from zoo.registry.store.manifest import Manifest

INDEX = "index.json"

_HEX64 = re.compile(r"^[0-9a-f]{64}\Z")
_NAME = re.compile(r"^[a-z0-9][a-z0-9_.-]*\Z")
_FILE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.+-]*\Z")
MAX_DEPTH = 32
"""How deeply a record may nest; zoo's own are 5 deep. Deeper ones would make
the recursive code that compares and copies key inputs fail."""


def check_file_name(name: object, *, where: str) -> str:
    """A manifest's file name: one plain path component inside the artifact folder."""
    if not isinstance(name, str) or not _FILE.match(name) or name in (".", "..") or name == MANIFEST:
        raise IntegrityError(
            f"{where} names the file {name!r}; an artifact file must be a plain name inside its folder "
            "(no '/', '\\', '..' or absolute path)"
        )
    return name


def check_relative_path(path: object, *, where: str) -> str:
    """A path inside the remote: relative, forward slashes, no '..' or empty parts."""
    if not isinstance(path, str) or not path or "\\" in path or "\x00" in path:
        raise IntegrityError(f"{where} names the path {path!r}, which is not a relative path inside the remote")
    parts = path.split("/")
    if path.startswith("/") or re.match(r"^[A-Za-z]:", path) or any(p in ("", ".", "..") for p in parts):
        raise IntegrityError(
            f"{where} names the path {path!r}; paths must stay inside the remote (no '..', no absolute path)"
        )
    return path


@dataclass(frozen=True)
class IndexFile:
    name: str
    kind: str
    size: int
    sha256: str


@dataclass(frozen=True)
class IndexSignature:
    """A signed artifact's signature, a file in the artifact's folder."""

    name: str
    size: int
    sha256: str
    format: str
    key: str | None = None
    """The fingerprint of the key it claims (unverified until the signature is checked)."""


@dataclass(frozen=True)
class IndexRecord:
    """One published artifact, as listed in the index."""

    key: str
    model: str
    slug: str
    target: str
    manifest: str
    manifest_sha256: str
    key_inputs: dict[str, Any]
    built_at: str
    weights: str
    files: tuple[IndexFile, ...]
    target_options: dict[str, Any] = field(default_factory=dict)
    vela: dict[str, Any] | None = None
    accuracy: Any = None
    weights_info: dict[str, Any] | None = None
    delegation: dict[str, Any] | None = None
    """Operators on the NPU and the CPU, and partitions: the catalogue's columns."""
    memory: dict[str, Any] | None = None
    """The runtime's memory (the manifest's ``memory``): planned buffers, the allocators; for the site."""
    signature: IndexSignature | None = None
    """None: published unsigned."""

    @property
    def tools(self) -> dict[str, Any]:
        return dict(self.key_inputs.get("tools") or {})

    @property
    def folder(self) -> str:
        return str(PurePosixPath(self.manifest).parent)

    def file(self, kind: str) -> IndexFile | None:
        return next((f for f in self.files if f.kind == kind), None)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        for k in ("key", "model", "slug"):
            del data[k]
        data["files"] = [asdict(f) for f in self.files]
        if self.signature is None:
            del data["signature"]  # an unsigned record reads as it did before signatures
        if self.weights_info is None:
            del data["weights_info"]  # as records read before zoo recorded the weights' licence
        return data

    def same_files(self, other: IndexRecord) -> bool:
        return {(f.name, f.sha256) for f in self.files} == {(f.name, f.sha256) for f in other.files}


def artifact_folder(model: str, slug: str, key: str) -> str:
    return f"{model}/{slug}/{key}"


def record_for(entry: Entry, slug: str, manifest_sha256: str) -> IndexRecord:
    """The index record that publishing ``entry`` adds."""
    m = entry.manifest
    total = m.vela_total
    vela = None
    if total is not None:
        vela = {
            "inference_time_ms": total.inference_time_ms,
            "inferences_per_second": total.inferences_per_second,
            "sram_bytes": total.sram_bytes,
            "flash_bytes": total.flash_bytes or 0,
            "dram_bytes": total.dram_bytes,
        }
    target = m.target_options
    return IndexRecord(
        key=m.key,
        model=m.model,
        slug=slug,
        target=m.target,
        manifest=f"{artifact_folder(m.model, slug, m.key)}/{MANIFEST}",
        manifest_sha256=manifest_sha256,
        key_inputs=m.key_inputs,
        built_at=m.built_at or "",
        weights=m.weights or "",
        files=tuple(IndexFile(f.name, f.kind, f.size, f.sha256) for f in m.files),
        target_options={"accelerator": target.accelerator, "system_config": target.system_config,
                        "memory_mode": target.memory_mode},
        vela=vela,
        accuracy=_accuracy_of(m),
        weights_info=m.weights_info,
        delegation={k: m.delegation[k] for k in ("npu_ops", "cpu_ops", "partitions", "cpu_op_names")
                    if k in m.delegation} or None,
        memory=m.memory,
        signature=_signature_of(entry),
    )


def _signature_of(entry: Entry) -> IndexSignature | None:
    signature = signature_of(entry)
    if signature is None:
        return None
    return IndexSignature(signature.name, signature.size, signature.sha256, signature.format, signature.key)


@dataclass(frozen=True)
class Rejected:
    """A part of index.json that could not be read, at ``path`` under ``models``."""

    path: tuple[str, ...]
    """(model), (model, slug) or (model, slug, key), as written in the file."""
    raw: Any
    error: RemoteError

    def concerns(self, model: str, slug: str) -> bool:
        """Whether the artifact for ``model``/``slug`` may be the one that was lost."""
        return self.path[0] == model and (len(self.path) == 1 or self.path[1] == slug)


class Index:
    """Models → target slugs → build keys → records."""

    def __init__(self, records: dict[str, dict[str, dict[str, IndexRecord]]] | None = None) -> None:
        self.models: dict[str, dict[str, dict[str, IndexRecord]]] = records or {}
        self.rejected: list[Rejected] = []
        self.readable_by = READABLE_BY
        """Kept from the index this one was read from: a writer may have narrowed it."""

    def __iter__(self) -> Iterator[IndexRecord]:
        for targets in self.models.values():
            for keys in targets.values():
                yield from keys.values()

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def candidates(self, model: str, slug: str) -> list[IndexRecord]:
        return list(self.models.get(model, {}).get(slug, {}).values())

    def get(self, key: str) -> IndexRecord | None:
        return next((r for r in self if r.key == key), None)

    def add(self, record: IndexRecord) -> None:
        self.models.setdefault(record.model, {}).setdefault(record.slug, {})[record.key] = record

    def to_json(self) -> dict[str, Any]:
        models: dict[str, Any] = {
            model: {slug: {key: r.to_json() for key, r in sorted(keys.items())} for slug, keys in sorted(targets.items())}
            for model, targets in sorted(self.models.items())
        }
        for rejected in self.rejected:
            node = models
            for part in rejected.path[:-1]:
                node = node.setdefault(part, {})
            node.setdefault(rejected.path[-1], rejected.raw)  # a record added in its place wins
        return {"schema": SCHEMA, "written_by": __version__, "readable_by": self.readable_by, "models": models}

    def dumps(self) -> str:
        return json.dumps(self.to_json(), indent=2, sort_keys=True) + "\n"

    @classmethod
    def loads(cls, text: str | bytes, *, source: str) -> Index:
        """Parse and validate. RemoteError if the file as a whole is unusable; a
        record that is not (RemoteError, or IntegrityError for an unsafe path)
        goes to ``rejected`` instead."""
        try:
            data = json.loads(text)
        except (ValueError, UnicodeDecodeError) as exc:
            raise RemoteError(f"{source}: index.json is not valid JSON ({exc})") from None
        except RecursionError:
            raise RemoteError(f"{source}: index.json is nested too deeply to be a zoo index") from None
        if not isinstance(data, dict) or not isinstance(data.get("models"), dict):
            raise RemoteError(f"{source}: index.json has no 'models' table; is this a zoo remote?")
        index = cls()
        index.readable_by = check_readable(data, source)
        for model, targets in data["models"].items():
            if not (_NAME.match(model) and isinstance(targets, dict)):
                index._reject((model,), targets, RemoteError(f"{source}: index.json is malformed at model {model!r}"))
                continue
            for slug, keys in targets.items():
                if not (_NAME.match(slug) and isinstance(keys, dict)):
                    index._reject((model, slug), keys, RemoteError(f"{source}: index.json is malformed at {model}/{slug!r}"))
                    continue
                for key, raw in keys.items():
                    try:
                        index.add(_record(model, slug, key, raw, source))
                    except RemoteError as exc:
                        index._reject((model, slug, key), raw, exc)
        return index

    def _reject(self, path: tuple[str, ...], raw: Any, error: RemoteError) -> None:
        self.rejected.append(Rejected(path, raw, error))


def _record(model: str, slug: str, key: str, raw: object, source: str) -> IndexRecord:
    where = f"{source}: index.json entry {model}/{slug}/{key}"
    if not (_HEX64.match(key) and isinstance(raw, dict)):
        raise RemoteError(f"{source}: index.json is malformed at {model}/{slug}/{key!r}")
    if _too_deep(raw):
        raise RemoteError(f"{where} is malformed (nested more than {MAX_DEPTH} levels deep)")
    try:
        record = IndexRecord(
            key=key,
            model=model,
            slug=slug,
            target=_string(raw, "target"),
            manifest=check_relative_path(raw["manifest"], where=where),
            manifest_sha256=_string(raw, "manifest_sha256"),
            key_inputs=_key_inputs(raw["key_inputs"]),
            built_at=_string(raw, "built_at"),
            weights=_string(raw, "weights"),
            files=tuple(_file(f, where) for f in _list(raw["files"], "files")),
            target_options=_target_options(raw.get("target_options")),
            vela=_optional_dict(raw.get("vela"), "vela"),
            accuracy=raw.get("accuracy"),
            weights_info=_optional_dict(raw.get("weights_info"), "weights_info"),
            delegation=_optional_dict(raw.get("delegation"), "delegation"),
            memory=_optional_dict(raw.get("memory"), "memory"),
            signature=_signature(raw.get("signature"), where),
        )
        digest = key_of(record.key_inputs)
    except (KeyError, TypeError, ValueError, RecursionError) as exc:
        reason = f"no {exc}" if isinstance(exc, KeyError) else str(exc) or type(exc).__name__
        raise RemoteError(f"{where} is malformed ({reason})") from None
    if not _HEX64.match(record.manifest_sha256):
        raise RemoteError(f"{where} is malformed: manifest_sha256 must be 64 lower-case hex digits")
    if digest != key:
        raise IntegrityError(f"{where}: its key inputs do not hash to its key")
    if not record.manifest.endswith(f"/{MANIFEST}"):
        raise IntegrityError(f"{where} names {record.manifest!r} as its manifest; expected a path ending in /{MANIFEST}")
    return record


def _too_deep(value: object) -> bool:
    todo = [(value, 1)]
    while todo:
        item, depth = todo.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else ()
        for child in children:
            if isinstance(child, (dict, list)):
                if depth >= MAX_DEPTH:
                    return True
                todo.append((child, depth + 1))
    return False


def _string(raw: dict[str, Any], name: str) -> str:
    value = raw[name]
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a string, not {type(value).__name__}")
    return value


def _list(value: object, name: str) -> list[Any]:
    if not isinstance(value, list):
        raise TypeError(f"{name} must be a list, not {type(value).__name__}")
    return value


def _key_inputs(value: object) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise TypeError(f"key_inputs must be an object, not {type(value).__name__}")
    tools = value.get("tools")
    if tools is not None and not (
        isinstance(tools, dict) and all(v is None or isinstance(v, str) for v in tools.values())
    ):
        raise TypeError("key_inputs.tools must map each tool to its version")
    return value


def _target_options(value: object) -> dict[str, Any]:
    options = _optional_dict(value, "target_options") or {}
    if not all(v is None or isinstance(v, str) for v in options.values()):
        raise TypeError("target_options must map each option to a string or null")
    return options


def _file(f: object, where: str) -> IndexFile:
    if not isinstance(f, dict):
        raise TypeError(f"each of files must be an object, not {type(f).__name__}")
    size = f["size"]
    if not isinstance(size, int) or isinstance(size, bool) or size < 0:
        raise TypeError(f"a file's size must be a whole number of bytes, not {size!r}")
    sha256 = _string(f, "sha256")
    if not _HEX64.match(sha256):
        raise ValueError("a file's sha256 must be 64 lower-case hex digits")
    return IndexFile(check_file_name(f["name"], where=where), _string(f, "kind"), size, sha256)


def _signature(value: object, where: str) -> IndexSignature | None:
    """A record's ``signature``: None, or a file with its size, sha256, format and
    (for key signatures) the key's fingerprint."""
    raw = _optional_dict(value, "signature")
    if raw is None:
        return None
    size = raw["size"]
    if not isinstance(size, int) or isinstance(size, bool) or not 0 < size <= MAX_SIGNATURE_BYTES:
        raise TypeError(f"the signature's size must be a whole number of bytes up to {MAX_SIGNATURE_BYTES}, not {size!r}")
    sha256 = _string(raw, "sha256")
    key = raw.get("key")
    if not _HEX64.match(sha256) or not (key is None or (isinstance(key, str) and _HEX64.match(key))):
        raise ValueError("the signature's sha256 and key must be 64 lower-case hex digits")
    return IndexSignature(check_file_name(raw["name"], where=where), size, sha256, _string(raw, "format"), key)


def _optional_dict(value: object, name: str) -> dict[str, Any] | None:
    if value is not None and not isinstance(value, dict):
        raise TypeError(f"{name} must be an object or null, not {type(value).__name__}")
    return value


def _accuracy_of(m: Manifest) -> dict[str, Any] | None:
    """Each declared metric, float and program, beside the declared figure (or an older check's top-1)."""
    if m.metrics:  # {"metrics": [...]}; a manifest from before them: {"float_top1": …, "int8_top1": …}
        return {"metrics": [{**{k: x.get(k) for k in ("name", "unit", "float", "program", "program_kind", "passed")},
                             "reference": m.reference.get(str(x.get("name")))} for x in m.metrics]}
    acc = ((m.verification or {}).get("numerics") or {}).get("accuracy") or {}
    return {k: v for k, v in acc.items() if k.endswith("_top1")} or None
