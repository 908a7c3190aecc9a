"""Put an artifact's checks together and decide whether it may be handed out.

The structural checks run afresh every time (they are cheap and torch-free);
the numerical results are the ones recorded in the manifest at build time,
because they need the lowered program, which only exists during a build. A
recorded result is shown only where zoo can check the record: a cache entry's
sealed manifest (``store/seal.py``), about exactly the bytes checked. Where it
cannot, ``not_checked`` says why, and nothing of the record is repeated.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from zoo._errors import UsageError, VerificationError
from zoo.registry.checks import Check
from zoo.registry.npu.memory_fit import BUDGET_FLAGS, check_budget
from zoo.registry.pte.program import Parsed, Program, parse
from zoo.registry.store.manifest import Manifest
from zoo.registry.verify.header_check import (
    check_asm_file,
    check_header,
    check_io_files,
    check_stored_asm,
    check_stored_header,
)
from zoo.registry.verify.labels_check import check_labels_header
from zoo.registry.verify.structure_check import (
    Expected,
    check_file_record,
    check_structure,
    check_target,
)

if TYPE_CHECKING:
    from zoo.registry.npu.targets import Target
    from zoo.registry.store.cache import Cache, Entry


@dataclass
class Verification:
    subject: str
    checks: list[Check]
    numerics: dict[str, Any] | None = None
    bundle: dict[str, Any] | None = None
    notes: list[str] = field(default_factory=list)
    artifact: bool = True
    """A zoo artifact (with a manifest), which may have numerics recorded."""
    numerics_by: str | None = None
    """Who ran the numerics shown: ``here`` (this zoo built the artifact and checked it) or
    ``publisher`` (a remote's record, kept as it was received: zoo checked the bytes, not this)."""
    not_checked: str | None = None
    """Why no numerics are shown, where a reason is more than "none were recorded"."""
    _program: Program | None = field(default=None, repr=False, compare=False)
    """The .pte these checks parsed, for the caller to read on rather than parse again."""

    @property
    def passed(self) -> bool:
        return all(c.passed for c in self.checks) and (self.numerics is None or bool(self.numerics.get("passed")))

    def problems(self) -> list[str]:
        out = [f"{c.name}: {c.detail}" for c in self.checks if not c.passed]
        if self.numerics is not None:
            out += [f"numerics {c['name']}: {c['detail']}" for c in self.numerics.get("checks", []) if not c["passed"]]
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "subject": self.subject,
            "passed": self.passed,
            "structure": {"passed": all(c.passed for c in self.checks), "checks": [c.to_json() for c in self.checks]},
            "numerics": self.numerics,
            "numerics_by": self.numerics_by,
            "numerics_not_checked": self.not_checked,
            "bundle": self.bundle,
            "notes": self.notes,
        }


def gate(v: Verification, verify: bool | None) -> None:
    """Raise VerificationError for a failing artifact, unless ``verify`` is False (``--no-verify``)."""
    if v.passed or verify is False:
        return
    raise VerificationError(
        f"{v.subject} failed verification:\n  " + "\n  ".join(v.problems())
        + "\nIt is not handed out; pass --no-verify to take it anyway."
    )


def build_record(checks: list[Check], numerics: dict[str, Any] | None, bundle: dict[str, Any] | None) -> dict[str, Any]:
    """What the manifest stores under ``verification`` at build time."""
    return {
        "structure": {"passed": all(c.passed for c in checks), "checks": [c.to_json() for c in checks]},
        "numerics": numerics,
        "bundle": bundle,
    }


def verify_entry(
    entry: Entry, pte: bytes | None = None, *, target: Target | None = None, full: bool = True,
) -> Verification:
    """The structural and header checks of a cached entry; with ``target`` that has an
    SRAM budget, also whether the artifact fits it.

    ``full=False`` is a hand-out's check: the header's full check (rendering it again
    from the .pte, about 0.2 s for mv2's 20 MB header) ran when the entry was accepted
    into the cache, after a build, a download or a Ray handover, and the cache has just
    matched every file's sha256 with the manifest, so the header counts as checked.
    ``zoo cache verify`` and ``zoo verify`` keep the full check."""
    m = entry.manifest
    pte_path = entry.file("pte")
    if pte is None:
        assert pte_path is not None
        pte = pte_path.read_bytes()
    recorded = entry.record
    notes: list[str] = []
    not_checked = None
    if not entry.sealed and (m.verification or {}).get("numerics"):
        not_checked = f"the recorded result is not shown: {entry.seal.why()} (--verify runs the check again)"
    parsed = parse(pte)
    checks = check_structure(parsed, Expected.from_manifest(m))
    header_path = entry.file("header")
    if header_path is not None:
        if full:
            checks.append(check_stored_header(parsed, header_path.read_bytes(), header_path.name, m))
            asm_path, pte_record = entry.file("model_asm"), m.file("pte")
            if asm_path is not None and pte_record is not None:
                checks.append(check_stored_asm(pte_record.name, len(pte), asm_path.read_bytes(), asm_path.name, m))
            io_check = check_io_files(m, lambda name: entry.path.joinpath(name).read_bytes())
            if io_check is not None:
                checks.append(io_check)
        else:
            record = m.file("header")
            checks.append(Check("header", True, f"{header_path.name}: sha256 {record.sha256[:16]}… as when it was "
                                "checked against the .pte and the manifest on entering the cache"
                                if record else f"{header_path.name}: as recorded"))
    labels_path = entry.file("labels_header")
    if labels_path is not None:  # small: checked in full every time
        checks.append(check_labels_header(labels_path.read_bytes(), labels_path.name, m))
    if target is not None and target.sram_budget is not None and checks[0].passed:
        total = m.vela_total
        checks.append(check_budget(parsed, target, vela_sram_bytes=total.sram_bytes if total else None))
    numerics = recorded.get("numerics")
    return Verification(
        subject=f"{m.model} for {m.target}" + (f" ({pte_path.name})" if pte_path else ""),
        checks=checks,
        numerics=numerics,
        bundle=recorded.get("bundle"),
        notes=notes,
        numerics_by=_by(recorded) if numerics else None,
        not_checked=not_checked,
        _program=_program_of(parsed),
    )


def _by(recorded: dict[str, Any]) -> str:
    """Who ran a sealed record's numerics: zoo here, or the publisher of a downloaded artifact."""
    return "here" if recorded.get("local_build") is True else "publisher"


PUBLISHER = ("recorded by the publisher of this prebuilt artifact and not run here: zoo checked its bytes against the "
             "remote's index (and its signature, with trusted keys), not its numerics; 'zoo build MODEL -t TARGET "
             "--verify' checks them on this machine")
"""What a remote's numerics record is, wherever it is shown."""


def verify_file(
    path: Path,
    *,
    target: Target | None = None,
    manifest_path: Path | None = None,
    header_path: Path | None = None,
    cache: Cache | None = None,
) -> Verification:
    """Check a .pte from anywhere: against a manifest (``--manifest`` or ``manifest.json``
    beside it), a target, and a C header (``--header`` or ``<stem>.h`` beside it). The checks
    that run here are structural. Numerics are shown only as ``cache`` recorded them under its
    seal, for the manifest's key and exactly these .pte bytes: a manifest.json beside a file is
    anyone's to edit, and its record may be about other bytes."""
    try:
        pte = path.read_bytes()
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror or exc}") from None
    notes: list[str] = []
    manifest = _manifest_for(path, manifest_path, notes)
    if manifest is not None:
        expected = Expected.from_manifest(manifest)
    else:
        expected = Expected()
        notes.append("no manifest: the file's inputs and operators are reported, not compared"
                     + ("" if target else "; pass --target to check what it was built for"))
    parsed = parse(pte)
    checks = check_structure(parsed, expected)
    readable = checks[0].passed
    described = False  # whether these bytes are the .pte the manifest describes
    if manifest is not None:
        checks.append(check_file_record(pte, path.name, manifest))
        described = checks[-1].passed
    if target is not None and readable:
        unknown: tuple[str, ...] = ()
        if target.sram_budget is not None:
            fit = manifest.memory_fit if manifest is not None else None
            if fit is not None and fit.get("sram_budget_bytes") == target.sram_budget:
                target = replace(target, extra_flags=(*target.extra_flags, *fit["selected_flags"]))
            else:
                unknown = BUDGET_FLAGS
                notes.append("the target has an SRAM budget, and no manifest for that budget says which Vela options "
                             f"it chose, so {' and '.join(BUDGET_FLAGS)} are not compared")
        checks.append(check_target(parsed, target, unknown=unknown))
        if target.sram_budget is not None:
            total = manifest.vela_total if manifest is not None else None
            checks.append(check_budget(parsed, target, vela_sram_bytes=total.sram_bytes if total else None))
    header = header_path or path.with_suffix(".h")
    if not readable:
        pass
    elif header_path is not None or (header != path and header.is_file()):
        try:
            text = header.read_text(encoding="ascii", errors="replace")
        except OSError as exc:
            raise UsageError(f"cannot read header {header}: {exc.strerror or exc}") from None
        checks.append(check_header(pte, text, header.name))
        asm = header.with_suffix(".s")
        if asm.is_file():
            checks.append(check_asm_file(pte, path.name, asm, text))
    else:
        notes.append(f"no header checked ({header.name} is not beside it; pass --header)")
    recorded: dict[str, Any] = {}
    not_checked: str | None
    if manifest is None:
        not_checked = ("no model: this checks the file's structure only, and the numerical check needs the model "
                       "it was built from ('zoo verify MODEL -t TARGET')")
    elif not described:
        not_checked = (f"{path.name} is not the .pte its manifest describes, so no result recorded for that .pte "
                       "is shown")
    else:
        sealed = _recorded_for(manifest, pte, cache) if cache is not None else None
        recorded = sealed or {}
        not_checked = None if sealed else _why_not_shown(manifest)
        if sealed and sealed.get("numerics") != (manifest.verification or {}).get("numerics"):
            notes.append(f"numerics as the cache recorded them for key {manifest.key[:12]} after this manifest.json "
                         "was written; fetch with -o again to refresh the files")
    subject = f"{manifest.model} for {manifest.target} ({path})" if manifest else str(path)
    numerics = recorded.get("numerics")
    return Verification(subject, checks, numerics, recorded.get("bundle"), notes,
                        artifact=manifest is not None, numerics_by=_by(recorded) if numerics else None,
                        not_checked=not_checked, _program=_program_of(parsed))


def _program_of(parsed: Parsed) -> Program | None:
    return parsed if isinstance(parsed, Program) else None


def _recorded_for(manifest: Manifest, pte: bytes, cache: Cache) -> dict[str, Any] | None:
    """The cache entry's sealed record for the manifest's key, if it has numerics and the
    entry's .pte is these bytes (a later ``zoo verify`` may have recorded them after the
    manifest beside the file was written); None otherwise."""
    import hashlib

    from zoo.registry.store.cache import CorruptEntry

    try:
        entry = cache.get(manifest.key)
    except CorruptEntry:
        return None
    record = entry.manifest.file("pte") if entry is not None else None
    if entry is None or record is None or record.sha256 != hashlib.sha256(pte).hexdigest():
        return None
    recorded = entry.record
    return recorded if recorded.get("numerics") else None


def _why_not_shown(manifest: Manifest) -> str | None:
    """Why a manifest's own numerics record is not shown (None where it has none)."""
    if not (manifest.verification or {}).get("numerics"):
        return None
    return (f"manifest.json records a numerical check, but this cache has no sealed entry for key {manifest.key[:12]} "
            "with these .pte bytes, and a manifest.json is anyone's to edit, so its record is not shown; "
            f"'zoo verify {manifest.model} -t TARGET' runs the check")


def _manifest_for(path: Path, explicit: Path | None, notes: list[str]) -> Manifest | None:
    candidate = explicit or path.parent / "manifest.json"
    if explicit is None and not candidate.is_file():
        return None
    try:
        manifest = Manifest.loads(candidate.read_text(encoding="utf-8"))
    except OSError as exc:
        raise UsageError(f"cannot read manifest {candidate}: {exc.strerror or exc}") from None
    except (ValueError, TypeError, KeyError, json.JSONDecodeError) as exc:
        raise UsageError(f"{candidate} is not a zoo manifest: {exc}") from None
    record = manifest.file("pte")
    if explicit is None and (record is None or record.name != path.name):
        notes.append(f"{candidate} describes {record.name if record else 'no .pte'}, not {path.name}; not used")
        return None
    return manifest
