"""A user's own evaluations (``--eval-dir``), kept apart from the artifacts they measured.

An artifact's ``verification.numerics`` is its own check, on the model's data, and
every hand-out is gated on it. A user's labelled folders say how the artifact does
on *their* data: that answer belongs to whoever asked, and must not decide whether
anyone else gets the artifact. So a build or verify with ``--eval-dir`` strips its
numerics from the manifest before the cache stores the entry, and records them here,
under the entry's key and the data's identity (which covers every image and the label
mapping). A later run on the same data reads them back without lowering again; a
fetch without ``--eval-dir`` never sees them. Each record is sealed like a manifest
(``seal.py``): one edited, or not sealed under this user's key, is measured again.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from pathlib import Path
from typing import Any

from zoo._fs import write_atomic
from zoo.registry.store import seal
from zoo.registry.store.manifest import Manifest

FOLDER = "evaluations"


def _path(base: Path, key: str, data: str) -> Path:
    return base / FOLDER / key[:2] / key / f"{hashlib.sha256(data.encode()).hexdigest()}.json"


def recorded(base: Path, key: str, data: str) -> dict[str, Any] | None:
    """The numerics recorded for ``key`` on the data whose identity is ``data``; None if
    none (or if the record is unreadable or about other data: it is only measured again)."""
    path = _path(base, key, data)
    try:
        raw = path.read_bytes()
        record = json.loads(raw.decode("utf-8"))
    except (OSError, ValueError):
        return None
    if seal.check(path.with_suffix(".seal"), f"{key} {data}", raw) is not seal.SealState.SEALED:
        return None
    if not isinstance(record, dict) or record.get("key") != key or record.get("data_identity") != data:
        return None
    numerics = record.get("numerics")
    return numerics if isinstance(numerics, dict) else None


def record(base: Path, key: str, data: str, numerics: dict[str, Any]) -> None:
    path = _path(base, key, data)
    text = (json.dumps({"key": key, "data_identity": data, "numerics": numerics}, indent=2, sort_keys=True)
            + "\n").encode()
    sealed = seal.seal_text(f"{key} {data}", text)
    if sealed is not None:  # the seal first: a record is never seen without the one it was written with
        write_atomic(path.with_suffix(".seal"), sealed)
    write_atomic(path, text)


def split(manifest: Manifest, own: dict[str, Any] | None) -> tuple[Manifest, dict[str, Any] | None]:
    """(``manifest`` with ``own`` as its numerics, the numerics it carried): a build on a
    user's data gives the artifact back with the numerics it had before (``own``, None
    for a new one), and the user's result apart."""
    verification = dict(manifest.verification or {})
    measured = verification.get("numerics")
    verification["numerics"] = own
    return dataclasses.replace(manifest, verification=verification), measured
