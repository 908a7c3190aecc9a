"""Find a prebuilt artifact and bring it into the cache, verified.

The rule for choosing (docs/remotes.md, "Fetching: which artifact is taken"):

1. An artifact whose build key equals the local key, from the remotes in order.
2. With ``--any-toolchain``, or on an install without the compile stack
   (where no local build key can ever match, because the tool versions are
   part of it): the newest artifact whose key inputs equal the local ones
   apart from the tool versions (the same model version, weights, data,
   target and options), first among cached entries, then across all
   remotes. An input this install cannot name is left out of the comparison
   too: the mnist and mv2 calibration sets live in scikit-learn, which only
   the compile extra installs. zoo says on stderr what it accepted and why.

Verification before anything enters the cache: the manifest's sha256 must
equal the index's, the manifest's key must be the hash of its key inputs and
match the index, every file name must be a plain name inside the artifact's
folder, the files must be the ones the index lists, every file's size and
sha256 must match the manifest (a download stops at the declared size), and
the artifact must pass ``check_artifact``. Files are staged in the cache's tmp
folder and stored with ``Cache.put`` only after all of that.

A remote with trusted keys (``Remote.trusted_keys``) also needs each artifact
signed by one of them (``zoo.registry.remotes.signing``): an unsigned one, or one signed
by another key, is refused before any of it is downloaded; otherwise the
signature is downloaded (checked against the index like every file) and must
cover exactly the downloaded files, unchanged. The cached manifest records who
signed it, under ``verification.signature``: only zoo writes that, after it
checked the signature itself; whatever a remote's manifest says there is dropped.

A remote that misbehaves (unreachable, malformed, or serving an artifact that
fails a check) costs only itself: zoo says why in one notice and tries the next
remote, then a local build. Nothing of a failed artifact is cached.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from zoo._errors import IntegrityError, MissingExtraError, RemoteError
from zoo._fs import staging_dir
from zoo.registry.events import DOWNLOAD_STAGE, Notice, Progress
from zoo.registry.remotes.base import Remote
from zoo.registry.remotes.index import IndexRecord, check_file_name
from zoo.registry.remotes.received import check_artifact, remote_manifest, verify_file
from zoo.registry.request.keys import BuildRequest, can_compile_here, key_of, tool_versions
from zoo.registry.store.cache import MANIFEST, Cache, CorruptEntry, Entry
from zoo.registry.store.manifest import Manifest

MAX_MANIFEST_BYTES = 4 << 20


@dataclass(frozen=True)
class Wanted:
    """What a fetch asks for, as far as this install can name it."""

    key: str | None
    """The local build key; None if some input cannot be named here."""
    inputs: dict[str, Any]
    unknown: tuple[str, ...] = ()
    """Key inputs this install cannot compute, as dotted paths (e.g. ``calibration.identity``)."""

    def comparable(self, key_inputs: dict[str, Any]) -> dict[str, Any]:
        """``key_inputs`` without tool versions and without the parts this install cannot name."""
        out = copy.deepcopy({k: v for k, v in key_inputs.items() if k != "tools"})
        for dotted in self.unknown:
            part, field = dotted.split(".")
            if isinstance(out.get(part), dict):
                out[part][field] = None
        return out

    def accepts(self, key_inputs: dict[str, Any]) -> bool:
        return self.comparable(key_inputs) == self.comparable(self.inputs)


def _unnamed() -> str:
    return "(this install cannot name it)"


def wanted(request: BuildRequest) -> Wanted:
    """The request's key inputs. Identities this install cannot compute (data
    that ships with the compile extra) are marked unknown instead of failing."""
    try:
        inputs = request.key_inputs()
        return Wanted(key_of(inputs), inputs)
    except MissingExtraError:
        pass
    unknown = []
    for part in ("calibration", "weights"):
        source = getattr(request, part)
        try:
            source.identity()
        except MissingExtraError:
            unknown.append(f"{part}.identity")
            # A placeholder: comparable() leaves this input out of every comparison.
            request = dataclasses.replace(request, **{part: dataclasses.replace(source, identity=_unnamed)})
    return Wanted(None, request.key_inputs(), tuple(unknown))


@dataclass
class Found:
    entry: Entry
    source: Literal["cache", "remote"]
    remote: str | None = None


@dataclass
class Search:
    """What ``find_prebuilt`` found, and why each other place had nothing."""

    found: Found | None = None
    notes: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    """The artifacts a remote offered that failed a check (IntegrityError)."""

    def skip(self, exc: RemoteError, say: Notice, what: str) -> None:
        say(f"{exc}; skipping this {what}")
        self.notes.append(str(exc))
        if isinstance(exc, IntegrityError):
            self.refused.append(str(exc))


_BAD_INPUT = (ValueError, TypeError, KeyError, AttributeError, RecursionError)
"""What code that reads a remote's JSON raises when a value has the wrong type or shape."""


def _download_verified(remote: Remote, path: str, dest: Path, *, size: int | None, sha256: str, what: str,
                       progress: Progress | None) -> None:
    def report(done: int, _limit: int | None) -> None:
        if progress:
            progress(f"{DOWNLOAD_STAGE} {Path(path).name}", done, size)

    # A client cache (the Hub's) may hold a corrupt copy; fetch once more past it before giving up.
    attempts = (False, True) if remote.keeps_own_cache else (False,)
    for fresh in attempts:
        try:
            remote.download(path, dest, size=size if size is not None else MAX_MANIFEST_BYTES,
                            progress=report if size is not None else None, fresh=fresh)
            verify_file(dest, size=size, sha256=sha256, what=what)
            return
        except IntegrityError:
            if fresh or len(attempts) == 1:
                raise


def pull(remote: Remote, record: IndexRecord, cache: Cache, *, want: Wanted, progress: Progress | None = None,
         replace: bool = False) -> Entry:
    """Download, verify and store one indexed artifact. Nothing is cached unless all of it checks out.
    ``replace``: a cached entry of the same key (one the trusted keys in force refused) gives way to it."""
    label = f"{remote}: {record.model} for {record.target} (key {record.key[:12]}…)"
    try:
        trusted = _trusted(remote, record, label)
        with staging_dir(cache.staging_parent(), f"pull-{record.key[:12]}") as staging:
            # The artifact's files alone in one folder, as the remote stores them: what a signature covers.
            folder = staging / "artifact"
            folder.mkdir()
            _download_verified(remote, record.manifest, folder / MANIFEST, size=None, sha256=record.manifest_sha256,
                               what=f"{label}: {MANIFEST} (checked against index.json)", progress=progress)
            try:
                manifest = remote_manifest((folder / MANIFEST).read_text(encoding="utf-8"))
                _check_manifest(manifest, record, want=want, label=label)
            except _BAD_INPUT as exc:
                raise RemoteError(f"{label}: {MANIFEST} is malformed ({type(exc).__name__}: {exc})") from None
            for f in manifest.files:
                _download_verified(remote, f"{record.folder}/{f.name}", folder / f.name, size=f.size,
                                   sha256=f.sha256, what=f"{label}: {f.name}", progress=progress)
            if trusted:
                signer = _check_signature(remote, record, manifest, folder, staging, trusted, label, progress)
                manifest.verification = {**(manifest.verification or {}), "signature": signer}
            try:
                check_artifact(manifest, folder)
            except _BAD_INPUT as exc:
                # Only a manifest whose values have the wrong types gets this far and fails this way.
                raise RemoteError(f"{label}: {MANIFEST} is malformed ({type(exc).__name__}: {exc})") from None
            files = {f.name: (folder / f.name).read_bytes() for f in manifest.files}
            if not replace:
                return cache.put(manifest, files)
            with cache.lock(manifest.key):
                return cache.put(manifest, files, replace=True)
    except RemoteError as exc:
        raise type(exc)(f"{exc}; nothing of it was cached") from None


def _trusted(remote: Remote, record: IndexRecord, label: str) -> dict[str, Path]:
    """The remote's trusted keys by fingerprint (none: signatures are not checked).
    An artifact the index shows cannot pass is refused before anything is downloaded."""
    if not remote.trusted_keys:
        return {}
    from zoo.registry.remotes.signing import check_listed, trusted_fingerprints

    trusted = trusted_fingerprints(remote.trusted_keys)
    listed = record.signature
    check_listed(listed.key if listed else None, listed.format if listed else None, trusted, label=label)
    return trusted


def _check_signature(remote: Remote, record: IndexRecord, manifest: Manifest, folder: Path, staging: Path,
                     trusted: dict[str, Path], label: str, progress: Progress | None) -> dict[str, Any]:
    """Download the artifact's signature and check it against ``folder``; who signed it, for the manifest."""
    from zoo.registry.remotes.signing import verify

    listed = record.signature
    assert listed is not None  # _trusted refused the unsigned
    if listed.name in {f.name for f in manifest.files}:
        raise IntegrityError(f"{label}: index.json names {listed.name} as both a file and the signature")
    signature = staging / "signature"
    _download_verified(remote, f"{record.folder}/{listed.name}", signature, size=listed.size, sha256=listed.sha256,
                       what=f"{label}: {listed.name}", progress=progress)
    signer = verify(folder, signature, trusted, label=label)
    return {**signer.to_json(), "remote": str(remote), "signature_sha256": listed.sha256}


def _check_manifest(manifest: Manifest, record: IndexRecord, *, want: Wanted, label: str) -> None:
    if manifest.key != record.key or manifest.model != record.model or manifest.key_inputs != record.key_inputs:
        raise IntegrityError(f"{label}: {MANIFEST} describes {manifest.model} key {manifest.key[:12]}…, not what index.json lists")
    if key_of(manifest.key_inputs) != manifest.key:
        raise IntegrityError(f"{label}: {MANIFEST}'s key inputs do not hash to its key")
    if not want.accepts(manifest.key_inputs):
        raise IntegrityError(f"{label}: {MANIFEST} was built from other inputs than the ones asked for")
    names = [check_file_name(f.name, where=f"{label}: {MANIFEST}") for f in manifest.files]
    if len(set(names)) != len(names):
        raise IntegrityError(f"{label}: {MANIFEST} lists a file twice")
    # The index's sizes bound the downloads too: a manifest cannot promise a bigger file than the index.
    listed = {(f.name, f.kind, f.size, f.sha256) for f in record.files}
    if {(f.name, f.kind, f.size, f.sha256) for f in manifest.files} != listed:
        raise IntegrityError(f"{label}: {MANIFEST} lists other files (names, sizes or sha256) than index.json does")
    for kind in ("pte", "header"):
        if manifest.file(kind) is None:
            raise IntegrityError(f"{label}: {MANIFEST} lists no {kind} file")


_MAIN_TOOLS = ("executorch", "ethos-u-vela", "torch")
_UNKNOWN = {"calibration.identity": "the calibration data", "weights.identity": "the weights"}


def _tools(tools: dict[str, str | None]) -> str:
    main = [f"{k} {tools[k]}" for k in _MAIN_TOOLS if tools.get(k)]
    return ", ".join(main or [f"{k} {v}" for k, v in sorted(tools.items()) if v]) or "unknown tools"


def find_prebuilt(
    request: BuildRequest,
    cache: Cache,
    remotes: Sequence[Remote],
    *,
    any_toolchain: bool = False,
    offline: bool = False,
    say: Notice,
    progress: Progress | None = None,
    cached_ok: Callable[[Entry], bool] = lambda _entry: True,
    replace: bool = False,
) -> Search:
    """A verified prebuilt artifact for ``request`` (see the module docstring), or
    none, with one note per place that did not have it. ``cached_ok`` says which cached
    entries may be handed out (the trusted keys in force); ``replace`` lets a download
    take the place of a cached entry of the same key that they refused."""
    want = wanted(request)
    model, target, slug = request.spec.name, request.target.name, request.target.slug
    light = not can_compile_here()
    accept_any = any_toolchain or light or want.key is None
    if light:
        why = "this install has no compile stack, so any toolchain is accepted"
    elif want.key is None:
        why = "this install cannot name all the inputs, so any toolchain is accepted"
    else:
        why = f"--any-toolchain; this install has {_tools(tool_versions())}"
    if want.unknown:
        why += f"; {' and '.join(_UNKNOWN.get(u, u) for u in want.unknown)}, not installed here, not compared"

    if accept_any:
        cached = _newest_cached(cache, model, want, cached_ok)
        if cached is not None:
            tools = _tools(cached.manifest.tools)
            say(f"using the cached {model} for {target} built with {tools} ({why})")
            return Search(Found(cached, "cache"))

    search = Search()
    others: list[tuple[Remote, IndexRecord]] = []
    for remote in remotes:
        if offline and remote.network:
            search.notes.append(f"{remote}: skipped, offline")
            continue
        try:
            candidates = _candidates(remote, model, slug, want, search, say)
        except RemoteError as exc:
            search.skip(exc, say, "remote")
            continue
        exact = next((r for r in candidates if r.key == want.key), None)
        if exact is not None:
            found = _pull_or_skip(remote, exact, cache, want, progress, say, search, replace)
            if found is not None:
                say(f"downloaded {model} for {target} from {remote} (key {exact.key[:12]}…), every file verified"
                    f"{_signed(found.entry)}")
                search.found = found
                return search
            continue
        others += [(remote, r) for r in candidates]
        if not candidates:
            search.notes.append(f"{remote}: has no {model} for {target}")

    if accept_any:
        for remote, record in sorted(others, key=lambda rr: rr[1].built_at, reverse=True):
            found = _pull_or_skip(remote, record, cache, want, progress, say, search)
            if found is not None:
                say(f"downloaded {model} for {target} from {remote} (key {record.key[:12]}…), every file verified"
                    f"{_signed(found.entry)}; built with {_tools(record.tools)} ({why})")
                search.found = found
                return search
        return search
    newest: dict[str, IndexRecord] = {}
    for remote, record in others:
        if str(remote) not in newest or record.built_at > newest[str(remote)].built_at:
            newest[str(remote)] = record
    search.notes += [
        f"{url}: has {model} for {target} built with other tools ({_tools(r.tools)}); pass --any-toolchain to use it"
        for url, r in newest.items()
    ]
    return search


def _signed(entry: Entry) -> str:
    signer = entry.record.get("signature")
    return f", signed by key {signer['key'][:16]}… ({signer['key_file']})" if signer else ""


def _candidates(remote: Remote, model: str, slug: str, want: Wanted, search: Search, say: Notice) -> list[IndexRecord]:
    """The records of ``remote`` that could be ``model`` for ``slug``; RemoteError if its index is unusable.
    Each unreadable record that may have been the one wanted is reported, and costs only itself."""
    try:
        index = remote.read_index()
        for rejected in index.rejected:
            if rejected.concerns(model, slug):
                search.skip(rejected.error, say, "entry")
        return [r for r in index.candidates(model, slug) if want.accepts(r.key_inputs)]
    except _BAD_INPUT as exc:
        raise RemoteError(f"{remote}: its index.json cannot be used ({type(exc).__name__}: {exc})") from None


def _pull_or_skip(remote: Remote, record: IndexRecord, cache: Cache, want: Wanted, progress: Progress | None,
                  say: Notice, search: Search, replace: bool = False) -> Found | None:
    try:
        return Found(pull(remote, record, cache, want=want, progress=progress, replace=replace), "remote", str(remote))
    except RemoteError as exc:
        search.skip(exc, say, "artifact")
        return None


def _newest_cached(cache: Cache, model: str, want: Wanted, cached_ok: Callable[[Entry], bool]) -> Entry | None:
    best: Entry | None = None
    for _key, entry, problem in cache.scan():
        if entry is None or problem or entry.manifest.model != model or not want.accepts(entry.manifest.key_inputs):
            continue
        if not cached_ok(entry):
            continue
        if best is None or (entry.manifest.built_at or "") > (best.manifest.built_at or ""):
            best = entry
    if best is None:
        return None
    try:
        return cache.get(best.key)
    except CorruptEntry:
        return None
