"""Resolve an artifact: the cache first, else a locked local build; then hand
out verified paths, optionally copied into an output directory."""

from __future__ import annotations

import contextlib
import hashlib
import platform
import shutil
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from zoo._errors import BuildError, MissingExtraError
from zoo.registry.c_header import HeaderOptions, labels_header, pte_header
from zoo.registry.cache import Cache, CorruptEntry, Entry, sha256_file, write_atomic
from zoo.registry.keys import BuildRequest, can_compile_here, tool_versions
from zoo.registry.manifest import FileRecord, Manifest
from zoo.registry.vela_payload import find_payloads
from zoo.registry.verification import Verification, build_record, gate, verify_entry

if TYPE_CHECKING:
    from zoo.registry.pipeline import CompileResult
    from zoo.registry.remotes import Remote

Progress = Callable[[str, int | None, int | None], None]
Notice = Callable[[str], None]
Source = Literal["cache", "remote", "build"]


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

    def to_json(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "source": self.source,
            "pte": str(self.pte),
            "header": str(self.header),
            "labels_header": str(self.labels_header) if self.labels_header else None,
            "bundle": str(self.bundle) if self.bundle else None,
            "bundle_header": str(self.bundle_header) if self.bundle_header else None,
            "manifest": self.manifest.to_json(),
            "verification": self.verification.to_json() if self.verification else None,
        }


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def build_entries(
    requests: Sequence[BuildRequest],
    cache: Cache,
    *,
    progress: Progress | None = None,
    verify: bool = False,
    bundle: Sequence[bool] | None = None,
    previous: Sequence[Entry | None] | None = None,
) -> list[Entry]:
    """Compile one model for several targets in one pipeline run and store each.
    The caller holds every key's lock.

    ``verify`` runs the numerical check; ``bundle[i]`` (which implies it) also
    writes request i's .bpte self-test. ``previous[i]`` is a cached entry of
    the same key being rebuilt for those: the new .pte must be byte-identical,
    then it replaces it.
    """
    from zoo.registry import pipeline  # heavy: imports torch and ExecuTorch

    bundles = list(bundle) if bundle is not None else [False] * len(requests)
    previous = list(previous) if previous is not None else [None] * len(requests)
    first = requests[0]
    if any((r.spec.name, r.weights.name, r.calibration) != (first.spec.name, first.weights.name, first.calibration) for r in requests):
        raise ValueError("build_entries builds one model with one weights variant and one calibration set")
    started = time.perf_counter()
    results = pipeline.compile_targets(
        first.spec, [r.target for r in requests], weights=first.weights.name, calibration=first.calibration,
        progress=progress, verify=[verify or b for b in bundles],
    )
    seconds = round(time.perf_counter() - started, 2)
    shared = [r.target.name for r in requests] if len(requests) > 1 else None
    if progress:
        progress("header", None, None)
    return [
        _store(r, result, cache, seconds=seconds, built_with=shared, bundle=b, previous=prev)
        for r, result, b, prev in zip(requests, results, bundles, previous, strict=True)
    ]


def _store(
    request: BuildRequest,
    result: CompileResult,
    cache: Cache,
    *,
    seconds: float,
    built_with: list[str] | None,
    bundle: bool,
    previous: Entry | None,
) -> Entry:
    key = request.key()
    spec, target = request.spec, request.target
    pte = result.pte
    if previous is not None:
        _same_pte(previous, pte)
    payloads = find_payloads(pte)
    tools = tool_versions()
    vela_total = (result.vela or {}).get("total", {})
    header_name = f"{request.stem}.h"
    macros: dict[str, str | int | float | None] = {
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
    if result.memory_fit is not None:
        macros["sram_budget_bytes"] = result.memory_fit["sram_budget_bytes"]
        macros["vela_flags"] = " ".join(result.memory_fit["selected_flags"]) or None
    header = pte_header(pte, file_name=header_name, options=HeaderOptions(), macros=macros).encode("ascii")
    files: dict[str, tuple[str, bytes]] = {
        f"{request.stem}.pte": ("pte", pte),
        header_name: ("header", header),
    }
    labels = spec.load_labels()
    if labels:
        name = f"{spec.name}_labels.h"
        files[name] = ("labels_header", labels_header(labels, file_name=name, array=f"{spec.name.replace('-', '_').replace('.', '_')}_labels").encode("utf-8"))
    bundle_record = _bundle_files(request, result, macros, files) if bundle else None
    manifest = Manifest(
        key=key,
        model=spec.name,
        target=target.name,
        key_inputs=request.key_inputs(),
        files=[FileRecord(n, kind, len(data), _sha(data)) for n, (kind, data) in files.items()],
        vela=result.vela,
        delegation=result.delegation,
        cpu_operators=result.cpu_operators,
        calibration=result.calibration,
        labels=list(labels) if labels else None,
        header={"array": HeaderOptions().array, "section": HeaderOptions().section, "macros": macros},
        build={
            "built_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "seconds": seconds,
            **({"built_with": built_with} if built_with else {}),
            "tools": tools,
            "python": platform.python_version(),
            "payloads": [
                {"offset": p.offset, "scratch_size": p.scratch_size, "blocks": p.blocks}
                for p in payloads
            ],
        },
        warnings=result.warnings,
        memory_fit=result.memory_fit,
    )
    from zoo.registry.structure_check import Expected, check_structure

    manifest.verification = build_record(
        check_structure(pte, Expected.from_manifest(manifest)),
        result.numerics.record if result.numerics else None,
        bundle_record,
    )
    return cache.put(manifest, {n: data for n, (_, data) in files.items()}, replace=previous is not None)


def _same_pte(previous: Entry, pte: bytes) -> None:
    record = previous.manifest.file("pte")
    if record is not None and record.sha256 != _sha(pte):
        raise BuildError(
            f"lowering {previous.manifest.model} for {previous.manifest.target} again to add numerics gave a .pte with "
            f"sha256 {_sha(pte)[:16]}…, but the cached one has {record.sha256[:16]}…: the build is not "
            "deterministic, so the cached artifact's numerics cannot be checked this way. The cached entry is kept."
        )


def _bundle_files(
    request: BuildRequest,
    result: CompileResult,
    macros: dict[str, str | int | float | None],
    files: dict[str, tuple[str, bytes]],
) -> dict[str, Any]:
    """Write the .bpte and its header into ``files``; return what the manifest records."""
    from zoo.registry import bundle

    numerics = result.numerics
    assert numerics is not None
    bpte = bundle.bundle_program(result.pte, numerics.cases)
    if request.target.is_portable:  # the host can run it, so it must pass its own test cases
        bundle.run_on_host(bpte, **numerics.tolerance)
    name = f"{request.stem}.bpte"
    header_name = f"{request.stem}_bundle.h"
    bundle_macros = _bundle_macros(macros, bpte, numerics)
    files[name] = ("bundle", bpte)
    files[header_name] = ("bundle_header", pte_header(bpte, file_name=header_name, options=HeaderOptions(), macros=bundle_macros).encode("ascii"))
    return {
        "file": name,
        "header": header_name,
        "method": bundle.METHOD,
        "test_cases": len(numerics.cases),
        "expected_outputs": numerics.record["method"],
        "atol": numerics.tolerance["atol"],
        "rtol": numerics.tolerance["rtol"],
        "macros": bundle_macros,
    }


def _bundle_macros(macros: dict[str, str | int | float | None], bpte: bytes, numerics: Any) -> dict[str, str | int | float | None]:
    return {
        **macros,
        "bundle_sha256": _sha(bpte),
        "bundle_test_cases": len(numerics.cases),
        "bundle_atol": numerics.tolerance["atol"],
        "bundle_rtol": numerics.tolerance["rtol"],
    }


@dataclass
class _Pending:
    """A request that needs a local build."""

    request: BuildRequest
    key: str
    data: str | None
    indexes: list[int]
    previous: Entry | None = None
    bundle: bool = False


def resolve_many(
    requests: Sequence[BuildRequest],
    cache: Cache,
    *,
    force_build: bool = False,
    allow_build: bool = True,
    progress: Progress | None = None,
    notice: Notice | None = None,
    verify: bool | None = None,
    bundle: bool = False,
    remotes: Sequence[Remote] = (),
    any_toolchain: bool = False,
    offline: bool = False,
) -> list[tuple[Entry, Source]]:
    """For each request: the cache, then the remotes in order (see
    remotes/download.py), then a local build. What must be built is built
    together, one pipeline run per model (``pipeline.compile_targets``), under
    the lock of every key it makes.

    ``verify=True`` needs numerical results and ``bundle`` a .bpte: a cached
    entry without them is lowered again (same key, same .pte bytes) and
    replaced by one that has them."""
    say = notice or (lambda msg: print(f"zoo: {msg}", file=sys.stderr))
    numerics = verify is True or bundle
    done: dict[int, tuple[Entry, Source]] = {}
    pending: dict[str, _Pending] = {}
    for i, request in enumerate(requests):
        key, hit = _lookup(
            request, cache, force_build=force_build, allow_build=allow_build, progress=progress, say=say,
            numerics=numerics, bundle=bundle, remotes=remotes, any_toolchain=any_toolchain, offline=offline,
        )
        if hit is not None:
            done[i] = hit
        elif key in pending:
            pending[key].indexes.append(i)
        else:
            pending[key] = _Pending(request, key, _numerics_data(request) if numerics else None, [i])
    models: dict[tuple[str, str, int], list[_Pending]] = {}
    for p in pending.values():
        r = p.request
        models.setdefault((r.spec.name, r.weights.name, id(r.calibration)), []).append(p)
    for group in models.values():
        with contextlib.ExitStack() as locks:
            for p in sorted(group, key=lambda p: p.key):  # one order everywhere: no deadlock between processes
                locks.enter_context(cache.lock(p.key))
            todo: list[_Pending] = []
            for p in group:
                # Another process may have finished the same build while we waited.
                entry = None if force_build else _checked_get(cache, p.key, say)
                if entry is not None and _has(entry, p.data, bundle):
                    done.update((i, (entry, "cache")) for i in p.indexes)
                    continue
                if entry is not None:
                    say(f"{p.request.spec.name} for {p.request.target.name} is cached without "
                        f"{_missing(entry, p.data, bundle)}; lowering it again to add it (the .pte bytes must come out identical)")
                    p.previous = entry
                    p.bundle = bundle or entry.file("bundle") is not None  # an upgrade never loses what the entry had
                else:
                    if force_build:
                        cache.evict(p.key)
                    p.bundle = bundle
                todo.append(p)
            if todo:
                entries = build_entries(
                    [p.request for p in todo], cache, progress=progress, verify=numerics,
                    bundle=[p.bundle for p in todo], previous=[p.previous for p in todo],
                )
                for p, entry in zip(todo, entries, strict=True):
                    done.update((i, (entry, "build")) for i in p.indexes)
    return [done[i] for i in range(len(requests))]


def _lookup(
    request: BuildRequest,
    cache: Cache,
    *,
    force_build: bool,
    allow_build: bool,
    progress: Progress | None,
    say: Notice,
    numerics: bool,
    bundle: bool,
    remotes: Sequence[Remote],
    any_toolchain: bool,
    offline: bool,
) -> tuple[str, tuple[Entry, Source] | None]:
    """The request's key and what the cache or a remote has for it; raises
    when nothing is found and building is ruled out."""
    notes: list[str] = []
    try:
        key: str | None = request.key()
    except MissingExtraError:
        if force_build:
            raise
        key = None  # e.g. calibration data that only the compile extra installs; a remote may still have it
    data = _numerics_data(request) if numerics and key is not None else None
    if not force_build:
        entry = _checked_get(cache, key, say) if key else None
        if entry is not None and _has(entry, data, bundle):
            return entry.key, (entry, "cache")
        if entry is not None and not allow_build:
            raise BuildError(
                f"{request.spec.name} for {request.target.name} is cached without {_missing(entry, data, bundle)}, "
                "which needs lowering it again, and building was ruled out (--no-build)"
            )
        if entry is None and (remotes or any_toolchain or not can_compile_here() or key is None):
            from zoo.registry.remotes.download import find_prebuilt

            found, notes = find_prebuilt(
                request, cache, remotes, any_toolchain=any_toolchain, offline=offline, say=say, progress=progress
            )
            if found is not None and (not numerics or _has(found.entry, data, bundle)):
                return found.entry.key, (found.entry, found.source)
    if not allow_build:
        where = "; ".join(["not in the cache", *notes])
        raise BuildError(
            f"{request.spec.name} for {request.target.name}: {where}; and building was ruled out (--no-build)"
        )
    return key if key is not None else request.key(), None  # raises: this install cannot build it


def _numerics_data(request: BuildRequest) -> str:
    from zoo.registry.numerics import data_identity  # torch-free at import

    return data_identity(request.spec, request.calibration)


def _has_numerics(entry: Entry, data: str) -> bool:
    """Recorded numerics count only if they ran on today's data with today's check."""
    recorded = (entry.manifest.verification or {}).get("numerics")
    return recorded is not None and recorded.get("data_identity") == data


def _has(entry: Entry, data: str | None, bundle: bool) -> bool:
    return (data is None or _has_numerics(entry, data)) and (not bundle or entry.file("bundle") is not None)


def _missing(entry: Entry, data: str | None, bundle: bool) -> str:
    parts = []
    if data is not None and not _has_numerics(entry, data):
        recorded = (entry.manifest.verification or {}).get("numerics")
        parts.append("numerical results" if recorded is None else "numerical results for the current data and check")
    if bundle and entry.file("bundle") is None:
        parts.append("a self-test bundle")
    return " and ".join(parts)


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
    source: Source,
    *,
    out_dir: Path | None,
    header: HeaderOptions,
    derived_root: Path,
    want_labels: bool = False,
    verify: bool | None = None,
    want_bundle: bool = False,
) -> Artifact:
    """Hand out the entry's files, re-rendering the header for non-default options.

    The structural checks run first, and a failing artifact (structure, or the
    numerics recorded at build time) raises VerificationError unless ``verify``
    is False. With ``out_dir`` every file is written beside its final name and
    renamed into place only once all of them are complete.
    """
    pte_path = entry.file("pte")
    header_path = entry.file("header")
    assert pte_path is not None and header_path is not None
    pte = pte_path.read_bytes()
    checked = verify_entry(entry, pte)
    gate(checked, verify)
    labels_path = entry.file("labels_header") if want_labels else None
    if want_labels and labels_path is None:
        raise BuildError(f"model {entry.manifest.model} declares no output labels, so there is no labels header")
    bundle_path = entry.file("bundle") if want_bundle else None
    bundle_header_path = entry.file("bundle_header") if want_bundle else None
    if want_bundle and (bundle_path is None or bundle_header_path is None):
        raise BuildError(f"{entry.manifest.model} for {entry.manifest.target} was stored without a self-test bundle")

    custom_header: bytes | None = None
    custom_bundle_header: bytes | None = None
    if header != HeaderOptions(entry.manifest.header.get("array", "model_pte"), entry.manifest.header.get("section", "network_model_sec")):
        custom_header = _render_header(entry, pte, header)
        if bundle_path is not None:
            custom_bundle_header = _render_bundle_header(entry, bundle_path.read_bytes(), header)

    if out_dir is None:
        if custom_header is not None:
            header_path = _derived(derived_root, entry, header, header_path.name, custom_header)
        if custom_bundle_header is not None and bundle_header_path is not None:
            bundle_header_path = _derived(derived_root, entry, header, bundle_header_path.name, custom_bundle_header)
        return Artifact(entry.key, source, pte_path, header_path, entry.manifest, labels_path,
                        verification=checked, bundle=bundle_path, bundle_header=bundle_header_path)

    out_dir.mkdir(parents=True, exist_ok=True)
    plan: list[tuple[Path, bytes | Path]] = [
        (out_dir / pte_path.name, pte_path),
        (out_dir / header_path.name, custom_header if custom_header is not None else header_path),
        (out_dir / "manifest.json", entry.path / "manifest.json"),
    ]
    if labels_path is not None:
        plan.append((out_dir / labels_path.name, labels_path))
    if bundle_path is not None and bundle_header_path is not None:
        plan.append((out_dir / bundle_path.name, bundle_path))
        plan.append((out_dir / bundle_header_path.name, custom_bundle_header if custom_bundle_header is not None else bundle_header_path))
    _copy_all_or_nothing(plan)
    return Artifact(
        entry.key, source, out_dir / pte_path.name, out_dir / header_path.name, entry.manifest,
        out_dir / labels_path.name if labels_path else None,
        verification=checked,
        bundle=out_dir / bundle_path.name if bundle_path else None,
        bundle_header=out_dir / bundle_header_path.name if bundle_header_path else None,
    )


def _derived(root: Path, entry: Entry, options: HeaderOptions, name: str, data: bytes) -> Path:
    target = root / entry.key / f"{options.array}-{options.section}" / name
    if not target.is_file() or sha256_file(target) != _sha(data):
        write_atomic(target, data)
    return target


def _render_bundle_header(entry: Entry, bpte: bytes, options: HeaderOptions) -> bytes:
    path = entry.file("bundle_header")
    assert path is not None
    macros = ((entry.manifest.verification or {}).get("bundle") or {}).get("macros", {})
    return pte_header(bpte, file_name=path.name, options=options, macros=macros).encode("ascii")


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
