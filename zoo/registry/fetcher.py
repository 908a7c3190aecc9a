"""Resolve an artifact: the cache first, else a locked local build; then hand
out verified paths, optionally copied into an output directory."""

from __future__ import annotations

import hashlib
import platform
import shutil
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Literal

from zoo._errors import BuildError
from zoo.registry.c_header import HeaderOptions, labels_header, pte_header
from zoo.registry.cache import Cache, CorruptEntry, Entry, sha256_file, write_atomic
from zoo.registry.keys import BuildRequest, tool_versions
from zoo.registry.manifest import FileRecord, Manifest
from zoo.registry.vela_payload import find_payloads

Progress = Callable[[str, int | None, int | None], None]
Notice = Callable[[str], None]


@dataclass
class Artifact:
    """What ``zoo.fetch`` returns: verified paths and the manifest."""

    key: str
    source: Literal["cache", "build"]
    pte: Path
    header: Path
    manifest: Manifest
    labels_header: Path | None = None
    files: dict[str, Path] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "source": self.source,
            "pte": str(self.pte),
            "header": str(self.header),
            "labels_header": str(self.labels_header) if self.labels_header else None,
            "manifest": self.manifest.to_json(),
        }


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def build_entry(request: BuildRequest, cache: Cache, *, progress: Progress | None = None) -> Entry:
    """Compile and store. The caller holds the key's lock."""
    from zoo.registry import pipeline  # heavy: imports torch and ExecuTorch

    key = request.key()
    key_inputs = request.key_inputs()
    spec, target = request.spec, request.target
    started = time.perf_counter()
    result = pipeline.compile_model(
        spec, target, weights=request.weights.name, calibration=request.calibration, progress=progress
    )
    if progress:
        progress("header", None, None)
    pte = result.pte
    payloads = find_payloads(pte)
    tools = tool_versions()
    vela_total = (result.vela or {}).get("total", {})
    header_name = f"{request.stem}.h"
    macros: dict[str, str | int | None] = {
            "model": spec.name,
            "model_version": spec.version,
            "weights": request.weights.name,
            "target": target.accelerator or "portable",
            "system_config": target.system_config,
            "memory_mode": target.memory_mode,
            "sha256": _sha(pte),
            "build_key": key,
            "tools": "; ".join(f"{k} {v}" for k, v in tools.items() if v),
            "vela_sram_bytes": vela_total.get("sram_bytes"),
            "scratch_bytes": max((p.scratch_size for p in payloads), default=None),
            "delegates": len(payloads),
    }
    header = pte_header(pte, file_name=header_name, options=HeaderOptions(), macros=macros).encode("ascii")
    files: dict[str, tuple[str, bytes]] = {
        f"{request.stem}.pte": ("pte", pte),
        header_name: ("header", header),
    }
    labels = spec.load_labels()
    if labels:
        name = f"{spec.name}_labels.h"
        files[name] = ("labels_header", labels_header(labels, file_name=name, array=f"{spec.name.replace('-', '_').replace('.', '_')}_labels").encode("utf-8"))
    manifest = Manifest(
        key=key,
        model=spec.name,
        target=target.name,
        key_inputs=key_inputs,
        files=[FileRecord(n, kind, len(data), _sha(data)) for n, (kind, data) in files.items()],
        vela=result.vela,
        delegation=result.delegation,
        cpu_operators=result.cpu_operators,
        calibration=result.calibration,
        labels=list(labels) if labels else None,
        header={"array": HeaderOptions().array, "section": HeaderOptions().section, "macros": macros},
        build={
            "built_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "seconds": round(time.perf_counter() - started, 2),
            "tools": tools,
            "python": platform.python_version(),
            "payloads": [
                {"offset": p.offset, "scratch_size": p.scratch_size, "blocks": p.blocks}
                for p in payloads
            ],
        },
        warnings=result.warnings,
    )
    return cache.put(manifest, {n: data for n, (_, data) in files.items()})


def resolve(
    request: BuildRequest,
    cache: Cache,
    *,
    force_build: bool = False,
    allow_build: bool = True,
    progress: Progress | None = None,
    notice: Notice | None = None,
) -> tuple[Entry, Literal["cache", "build"]]:
    key = request.key()
    say = notice or (lambda msg: print(f"zoo: {msg}", file=sys.stderr))
    if not force_build:
        entry = _checked_get(cache, key, say)
        if entry is not None:
            return entry, "cache"
    if not allow_build:
        raise BuildError(
            f"{request.spec.name} for {request.target.name} is not in the cache and building was ruled out (--no-build)"
        )
    with cache.lock(key):
        # Another process may have finished the same build while we waited.
        entry = None if force_build else _checked_get(cache, key, say)
        if entry is not None:
            return entry, "cache"
        if force_build:
            cache.evict(key)
        return build_entry(request, cache, progress=progress), "build"


def _checked_get(cache: Cache, key: str, say: Notice) -> Entry | None:
    try:
        return cache.get(key)
    except CorruptEntry as exc:
        say(f"{exc}; removing it and building again")
        with cache.lock(key):
            cache.evict(key)
        return None


def export(
    entry: Entry,
    source: Literal["cache", "build"],
    *,
    out_dir: Path | None,
    header: HeaderOptions,
    derived_root: Path,
    want_labels: bool = False,
) -> Artifact:
    """Hand out the entry's files, re-rendering the header for non-default options.

    With ``out_dir`` every file is written beside its final name and renamed
    into place only once all of them are complete.
    """
    pte_path = entry.file("pte")
    header_path = entry.file("header")
    assert pte_path is not None and header_path is not None
    labels_path = entry.file("labels_header") if want_labels else None
    if want_labels and labels_path is None:
        raise BuildError(f"model {entry.manifest.model} declares no output labels, so there is no labels header")

    custom_header: bytes | None = None
    if header != HeaderOptions(entry.manifest.header.get("array", "model_pte"), entry.manifest.header.get("section", "network_model_sec")):
        custom_header = _render_header(entry, pte_path.read_bytes(), header)

    if out_dir is None:
        if custom_header is not None:
            target = derived_root / entry.key / f"{header.array}-{header.section}" / header_path.name
            if not target.is_file() or sha256_file(target) != _sha(custom_header):
                write_atomic(target, custom_header)
            header_path = target
        return Artifact(entry.key, source, pte_path, header_path, entry.manifest, labels_path)

    out_dir.mkdir(parents=True, exist_ok=True)
    plan: list[tuple[Path, bytes | Path]] = [
        (out_dir / pte_path.name, pte_path),
        (out_dir / header_path.name, custom_header if custom_header is not None else header_path),
        (out_dir / "manifest.json", entry.path / "manifest.json"),
    ]
    if labels_path is not None:
        plan.append((out_dir / labels_path.name, labels_path))
    _copy_all_or_nothing(plan)
    return Artifact(
        entry.key, source, out_dir / pte_path.name, out_dir / header_path.name, entry.manifest,
        out_dir / labels_path.name if labels_path else None,
    )


def _render_header(entry: Entry, pte: bytes, options: HeaderOptions) -> bytes:
    header_path = entry.file("header")
    assert header_path is not None
    macros = entry.manifest.header.get("macros", {})
    return pte_header(pte, file_name=header_path.name, options=options, macros=macros).encode("ascii")


def _copy_all_or_nothing(plan: list[tuple[Path, bytes | Path]]) -> None:
    staged: list[tuple[Path, Path]] = []
    try:
        for final, source in plan:
            tmp = final.with_name(f".{final.name}.zoo-tmp")
            if isinstance(source, bytes):
                tmp.write_bytes(source)
            else:
                shutil.copyfile(source, tmp)
            staged.append((tmp, final))
        for tmp, final in staged:
            tmp.replace(final)
    finally:
        for tmp, _ in staged:
            tmp.unlink(missing_ok=True)
