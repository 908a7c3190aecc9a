"""Hand out a cache entry: check it, then give its paths, or copies of its
files in an output folder, with the C header (and the .s that holds the
array) rendered for the caller's array and section names and header style."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from zoo._errors import BuildError, CacheError, UsageError, ZooError
from zoo._fs import not_a_folder, replace_all, write_atomic
from zoo.registry.firmware.c_header import (
    HeaderOptions,
    asm_name,
    pte_asm,
    pte_header,
    stored_options,
)
from zoo.registry.firmware.model_io import io_names, render_io
from zoo.registry.resolve import Source
from zoo.registry.store.cache import Entry, sha256_bytes, sha256_file
from zoo.registry.store.manifest import Manifest
from zoo.registry.verify.verification import Verification, gate, verify_entry


@dataclass
class Artifact:
    """What ``zoo.fetch`` returns: verified paths and the manifest."""

    key: str
    source: Source
    pte: Path
    header: Path
    manifest: Manifest
    labels_header: Path | None = None
    files: dict[str, Path] = field(default_factory=dict)
    verification: Verification | None = None
    """The checks run as the artifact was handed out (structure afresh, numerics as recorded)."""
    bundle: Path | None = None
    bundle_header: Path | None = None
    model_asm: Path | None = None
    """The .s that defines the header's array (``.incbin`` of the .pte); None for a single header."""
    io_header: Path | None = None
    io_source: Path | None = None
    """The I/O helpers (``model_io.py``); None for an artifact built before them, or without I/O macros."""

    def __repr__(self) -> str:
        # The manifest and the checks are kilobytes; print(art.manifest) shows them.
        return (f"Artifact({self.manifest.model!r} for {self.manifest.target!r}, "
                f"weights {self.manifest.weights!r}, from {self.source}, pte={str(self.pte)!r})")

    def to_json(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "source": self.source,
            "pte": str(self.pte),
            "header": str(self.header),
            "labels_header": str(self.labels_header) if self.labels_header else None,
            "bundle": str(self.bundle) if self.bundle else None,
            "bundle_header": str(self.bundle_header) if self.bundle_header else None,
            "model_asm": str(self.model_asm) if self.model_asm else None,
            "io_header": str(self.io_header) if self.io_header else None,
            "io_source": str(self.io_source) if self.io_source else None,
            "manifest": self.manifest.to_json(),
            "verification": self.verification.to_json() if self.verification else None,
        }


@dataclass(frozen=True)
class HandOut:
    """Where and how the files go out."""

    out_dir: Path | None = None
    header: HeaderOptions = field(default_factory=HeaderOptions)
    labels: bool = False
    bundle: bool = False
    verify: bool | None = None
    """False: hand out an artifact that fails a check (``--no-verify``)."""
    overwrite: bool = False
    """Replace the files of another artifact in ``out_dir`` (``--force``)."""


def hand_out(entry: Entry, source: Source, how: HandOut, *, derived_root: Path) -> Artifact:
    """The entry's files, re-rendering the header for non-default options.

    The structural checks run first, and a failing artifact (structure, or the
    numerics recorded at build time) raises VerificationError unless
    ``how.verify`` is False. With ``out_dir`` every file is staged beside its
    final name and renamed into place only once all of them are complete.
    """
    pte_path = entry.file("pte")
    header_path = entry.file("header")
    assert pte_path is not None and header_path is not None
    pte = pte_path.read_bytes()
    checked = verify_entry(entry, pte, full=False)  # Cache.get has matched every file with the manifest
    gate(checked, how.verify)
    labels_path = entry.file("labels_header") if how.labels else None
    if how.labels and labels_path is None:
        raise BuildError(f"model {entry.manifest.model} declares no output labels, so there is no labels header")
    bundle_path = entry.file("bundle") if how.bundle else None
    bundle_header_path = entry.file("bundle_header") if how.bundle else None
    if how.bundle and (bundle_path is None or bundle_header_path is None):
        raise BuildError(f"{entry.manifest.model} for {entry.manifest.target} was stored without a self-test bundle")

    stored = stored_options(entry.manifest.header)
    asm_path = entry.file("model_asm") if how.header.style == "split" else None
    custom_header: bytes | None = None
    custom_asm: bytes | None = None
    custom_bundle_header: bytes | None = None
    io_paths = [entry.file("io_header"), entry.file("io_source")]
    io_sources: list[bytes | Path] = [p for p in io_paths if p is not None]
    if len(io_sources) != 2:
        io_sources = []
    if how.header != stored:
        custom_header = _render(header_path.name, pte, how.header, entry.manifest.header.get("macros", {}))
        if io_sources:
            io_sources = [text.encode("ascii") for text in
                          render_io(header_path.name, how.header, entry.manifest.header.get("macros", {}))]
        if how.header.style == "split":
            custom_asm = pte_asm(pte_path.name, len(pte), how.header).encode("ascii")
        if bundle_path is not None and bundle_header_path is not None:
            if not entry.sealed:  # the tolerance the board's self-test judges by is the record's
                raise BuildError(f"{entry.manifest.model} for {entry.manifest.target}: its self-test bundle's header "
                                 f"cannot be rendered for these header options, because {entry.seal.why()}; "
                                 "'zoo build' with --bundle makes the entry again")
            macros = (entry.record.get("bundle") or {}).get("macros", {})
            single = HeaderOptions(how.header.array, how.header.section, "single")
            custom_bundle_header = _render(bundle_header_path.name, bundle_path.read_bytes(), single, macros)

    if how.out_dir is None:
        if custom_header is not None:
            header_path = _derived(derived_root, entry, how.header, header_path.name, custom_header)
        if custom_asm is not None:
            asm_path = _derived(derived_root, entry, how.header, asm_name(header_path.name), custom_asm)
        if custom_bundle_header is not None and bundle_header_path is not None:
            bundle_header_path = _derived(derived_root, entry, how.header, bundle_header_path.name, custom_bundle_header)
        io_out = [src if isinstance(src, Path) else _derived(derived_root, entry, how.header, name, src)
                  for name, src in zip(io_names(header_path.name), io_sources, strict=False)]
        return Artifact(entry.key, source, pte_path, header_path, entry.manifest, labels_path,
                        verification=checked, bundle=bundle_path, bundle_header=bundle_header_path, model_asm=asm_path,
                        io_header=io_out[0] if io_out else None, io_source=io_out[1] if io_out else None)

    out = how.out_dir
    plan: list[tuple[Path, bytes | Path]] = [
        (out / pte_path.name, pte_path),
        (out / header_path.name, custom_header if custom_header is not None else header_path),
        (out / "manifest.json", entry.path / "manifest.json"),
    ]
    out_asm = out / asm_name(header_path.name)
    asm_source: bytes | Path | None = custom_asm if custom_asm is not None else asm_path
    if asm_source is not None:
        plan.append((out_asm, asm_source))
    io_out = [out / name for name in io_names(header_path.name)][:len(io_sources)]
    plan += zip(io_out, io_sources, strict=True)
    if labels_path is not None:
        plan.append((out / labels_path.name, labels_path))
    if bundle_path is not None and bundle_header_path is not None:
        plan.append((out / bundle_path.name, bundle_path))
        plan.append((out / bundle_header_path.name,
                     custom_bundle_header if custom_bundle_header is not None else bundle_header_path))
    if not how.overwrite:
        _refuse_another(out, entry.manifest, [path for path, _ in plan])
    _write_out(out, plan)
    return Artifact(
        entry.key, source, out / pte_path.name, out / header_path.name, entry.manifest,
        out / labels_path.name if labels_path else None,
        verification=checked,
        bundle=out / bundle_path.name if bundle_path else None,
        bundle_header=out / bundle_header_path.name if bundle_header_path else None,
        model_asm=out_asm if asm_source is not None else None,
        io_header=io_out[0] if io_out else None,
        io_source=io_out[1] if io_out else None,
    )


def _refuse_another(out: Path, manifest: Manifest, paths: list[Path]) -> None:
    """A file in ``out`` that another artifact put there (its manifest.json has another key, or
    there is none) is never replaced silently: a firmware build would pick up the wrong model."""
    existing = [p for p in paths if p.name != "manifest.json" and p.exists()]
    if not existing:
        return
    try:
        other = Manifest.from_json(json.loads((out / "manifest.json").read_text(encoding="utf-8")))
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        other = None
    if other is not None and other.key == manifest.key:
        return  # the same artifact again (perhaps with other header names)
    theirs = (f"another artifact ({other.model} for {other.target}: {other.variant}; key {other.key[:12]})"
              if other is not None else "files that no manifest.json there describes")
    raise UsageError(
        f"-o {out}: {existing[0].name} there belongs to {theirs}; this is {manifest.model} for {manifest.target} "
        f"({manifest.variant}; key {manifest.key[:12]}). Nothing was written. Pass --force to replace it, "
        "or choose another -o folder")


def _write_out(out: Path, plan: list[tuple[Path, bytes | Path]]) -> None:
    """Every file into ``-o`` through replace_all: unique temporaries beside each
    final name, renamed over it (a symlink planted there is replaced, never followed)."""
    try:
        blocker = not_a_folder(out)
        if blocker is not None:
            raise UsageError(f"-o {out}: {blocker} is not a folder, so nothing can be written under it; "
                             "choose another output folder")
        replace_all(plan)
    except OSError as exc:
        raise ZooError(f"cannot write the artifact into -o {out}: {exc.strerror or exc} ({exc.filename}); "
                       "choose a folder you can write") from None


def _derived(root: Path, entry: Entry, options: HeaderOptions, name: str, data: bytes) -> Path:
    target = root / entry.key / f"{options.array}-{options.section}-{options.style}" / name
    if not target.is_file() or sha256_file(target) != sha256_bytes(data):
        try:
            write_atomic(target, data)
        except OSError as exc:
            raise CacheError(f"cannot write the renamed header into the cache at {root}: {exc.strerror or exc} "
                             f"({exc.filename}); pass -o DIR to write it elsewhere, or make the cache writable") from None
    return target


def _render(file_name: str, program: bytes, options: HeaderOptions, macros: dict[str, Any]) -> bytes:
    return pte_header(program, file_name=file_name, options=options, macros=macros).encode("ascii")
