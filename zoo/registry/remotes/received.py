"""What a remote sent, read as data: its manifest without what only zoo may say
about an artifact, each file against its record, and the whole artifact through
the checks every hand-out runs, before any of it is cached."""

from __future__ import annotations

import json
from pathlib import Path

from zoo._errors import IntegrityError
from zoo.registry.store.cache import sha256_file
from zoo.registry.store.manifest import Manifest

ZOO_ONLY = ("signature", "local_build")
"""What only zoo writes under a manifest's ``verification``: who signed it, after zoo checked the
signature itself, and that it was built on this machine. A remote's word on either is dropped."""


def remote_manifest(text: str) -> Manifest:
    """The manifest a remote sent, without what only zoo may say about it (``ZOO_ONLY``),
    whatever its type: a claim is dropped before the schema is checked, so it cannot be kept,
    printed, or make the manifest unreadable later. ValueError if it is no manifest."""
    try:
        data = json.loads(text)
    except RecursionError:
        raise ValueError("it nests too deeply to be a manifest") from None
    verification = data.get("verification") if isinstance(data, dict) else None
    if isinstance(verification, dict):
        data["verification"] = {k: v for k, v in verification.items() if k not in ZOO_ONLY}
    return Manifest.from_json(data)


def check_artifact(manifest: Manifest, folder: Path) -> None:
    """The checks a downloaded artifact passes before it is cached: the same
    torch-free checks every hand-out runs (the structure, and the header against
    the .pte and the manifest), so nothing is cached that could not be handed out."""
    from zoo.registry.pte.program import parse
    from zoo.registry.verify.header_check import (
        check_io_files,
        check_stored_asm,
        check_stored_header,
    )
    from zoo.registry.verify.labels_check import check_labels_header
    from zoo.registry.verify.structure_check import Expected, check_structure

    record = manifest.file("pte")
    header = manifest.file("header")
    assert record is not None and header is not None
    data = (folder / record.name).read_bytes()
    where = f"{manifest.model} for {manifest.target}: {record.name}"
    if data[4:8] != b"ET12":
        raise IntegrityError(f"{where} is not an ExecuTorch program (no ET12 identifier at byte 4)")
    parsed = parse(data)
    checks = check_structure(parsed, Expected.from_manifest(manifest))
    checks.append(check_stored_header(parsed, (folder / header.name).read_bytes(), header.name, manifest))
    asm = manifest.file("model_asm")
    if asm is not None:
        checks.append(check_stored_asm(record.name, len(data), (folder / asm.name).read_bytes(), asm.name, manifest))
    io_check = check_io_files(manifest, lambda name: (folder / name).read_bytes())
    if io_check is not None:
        checks.append(io_check)
    labels = manifest.file("labels_header")
    if labels is not None:
        checks.append(check_labels_header((folder / labels.name).read_bytes(), labels.name, manifest))
    failed = [c for c in checks if not c.passed]
    if failed:
        problems = "; ".join(f"{c.name}: {c.detail}" for c in failed)
        raise IntegrityError(f"{where} fails its structural check: {problems}")


def verify_file(path: Path, *, size: int | None, sha256: str, what: str) -> None:
    actual = path.stat().st_size
    if size is not None and actual != size:
        raise IntegrityError(f"{what} is {actual} bytes, its manifest says {size}: truncated or altered")
    digest = sha256_file(path)
    if digest != sha256:
        raise IntegrityError(f"{what} has sha256 {digest}, expected {sha256}: altered or corrupt")
