"""The driver's side of a build: check what a unit returned, then store it.

Nothing a unit sends is trusted unchecked, wherever it ran: the key must be
the one the driver computed (same model, data, target, options and tools),
the key inputs must hash to it, every file must match its manifest record,
and the structural checks must come out as the unit recorded them.
"""

from __future__ import annotations

import platform
from typing import Any

from zoo._errors import BuildError
from zoo.registry.build_units.unit import BuiltArtifact, UnitTarget
from zoo.registry.request.keys import key_of
from zoo.registry.store.cache import Cache, Entry, sha256_bytes


def accept(built: BuiltArtifact, wanted: UnitTarget, cache: Cache, *, previous: Entry | None = None) -> Entry:
    """Check ``built`` against ``wanted`` and store it. The caller holds the key's lock.

    ``previous`` is a cached entry of the same key being rebuilt to add numerics
    or a bundle: the new .pte must be byte-identical, then it replaces it.
    """
    m = built.manifest
    where = f"the build of {m.model} for {wanted.target.name}"
    if m.key != wanted.key:
        raise BuildError(f"{where} came back with key {m.key[:12]}…, expected {wanted.key[:12]}…: "
                         f"{key_difference(wanted.key_inputs, m.key_inputs)}")
    if key_of(m.key_inputs) != m.key:
        raise BuildError(f"{where} came back with key inputs that do not hash to its key")
    listed = {f.name: f for f in m.files}
    if set(listed) != set(built.files):
        raise BuildError(f"{where} came back with files {sorted(built.files)}, its manifest lists {sorted(listed)}")
    for name, data in built.files.items():
        record = listed[name]
        if record.size != len(data) or record.sha256 != sha256_bytes(data):
            raise BuildError(f"{where}: {name} does not match its manifest record")
    _check_structure(built, where)
    if previous is not None:
        _same_pte(previous, built)
    # Only zoo says this (a download drops it): trusted keys govern prebuilt artifacts, not our own builds.
    m.verification = {**(m.verification or {}), "local_build": True}
    return cache.put(m, built.files, replace=previous is not None)


def _check_structure(built: BuiltArtifact, where: str) -> None:
    from zoo.registry.pte.program import parse
    from zoo.registry.verify.structure_check import Expected, check_structure

    m = built.manifest
    record = m.file("pte")
    if record is None:
        raise BuildError(f"{where} came back without a .pte")
    parsed = parse(built.files[record.name])
    checks = [c.to_json() for c in check_structure(parsed, Expected.from_manifest(m))]
    recorded = ((m.verification or {}).get("structure") or {}).get("checks")
    if checks != recorded:
        raise BuildError(f"{where}: the structural checks of its .pte differ from the ones it recorded")
    header = m.file("header")
    if header is not None:  # checked in full here, once: a cache hit then relies on its sha256
        from zoo.registry.verify.header_check import check_stored_header

        check = check_stored_header(parsed, built.files[header.name], header.name, m)
        asm = m.file("model_asm")
        if check.passed and asm is not None:
            from zoo.registry.verify.header_check import check_stored_asm

            check = check_stored_asm(record.name, len(built.files[record.name]), built.files[asm.name], asm.name, m)
        if check.passed:
            from zoo.registry.verify.header_check import check_io_files

            check = check_io_files(m, lambda name: built.files[name]) or check
        if not check.passed:
            raise BuildError(f"{where}: {check.detail}")
    failed = [c for c in checks if not c["passed"]]
    if failed:  # a unit reports these as failures; one that sends an artifact anyway is refused
        raise BuildError(f"{where} came back failing its structure check {failed[0]['name']}: {failed[0]['detail']}")


def _same_pte(previous: Entry, built: BuiltArtifact) -> None:
    record = previous.manifest.file("pte")
    new = built.manifest.file("pte")
    if record is not None and new is not None and record.sha256 != new.sha256:
        build = previous.manifest.build
        where = f"{build.get('machine', 'an unrecorded machine')} python {build.get('python', '?')}"
        raise BuildError(
            f"lowering {previous.manifest.model} for {previous.manifest.target} again to add numerics gave a .pte with "
            f"sha256 {new.sha256[:16]}…, but the cached one has {record.sha256[:16]}… (built on {where}, here "
            f"{platform.machine()} python {platform.python_version()}): the numerical check ran on this host's "
            "program, not on the cached artifact, so nothing is recorded for it. The cached entry is kept. zoo's "
            "builds give the same bytes on every x86_64 host with the same tools (a reproducible numerics mode); "
            "another architecture, or an artifact changed after it was built, does not"
        )


def key_difference(here: dict[str, Any], there: dict[str, Any]) -> str:
    """The key inputs that differ, e.g. ``tools.torch is 2.14.1 here, 2.13.0 in the build``."""
    a, b = _flat(here), _flat(there)
    diffs = [f"{k} is {a.get(k)!r} here, {b.get(k)!r} in the build" for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]
    if not diffs:
        return "the key inputs are equal, but their key differs"
    return "; ".join(diffs[:5]) + (f" (and {len(diffs) - 5} more)" if len(diffs) > 5 else "")


def _flat(data: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(data, dict):
        out: dict[str, Any] = {}
        for k, v in data.items():
            out.update(_flat(v, f"{prefix}{k}."))
        return out
    return {prefix.rstrip("."): data}
