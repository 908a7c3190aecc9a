"""Plan a publish: which cached artifacts are new to a remote, and where their files go.

Publishing only adds. An artifact already listed under the same key with the
same files is skipped; one with different files is a conflict, and nothing is
published at all. Since a published artifact can never be replaced, each new one
must also pass the structural checks every hand-out runs (its hashes alone would
pass another program re-hashed): one that fails stops the whole publish.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from zoo._errors import PublishConflict, VerificationError, ZooError
from zoo.registry.remotes.index import Index, IndexRecord, record_for
from zoo.registry.remotes.signing import published_signature
from zoo.registry.store.cache import MANIFEST, Entry
from zoo.registry.store.seal import SealState


@dataclass(frozen=True)
class PublishItem:
    entry: Entry
    record: IndexRecord

    def files(self) -> list[tuple[str, Path]]:
        """(path inside the remote, local file) for every file, the signature if it is signed, the manifest last."""
        folder = self.record.folder
        out = [(f"{folder}/{f.name}", self.entry.path / f.name) for f in self.entry.manifest.files]
        out += published_signature(self.entry, folder)
        out.append((self.record.manifest, self.entry.path / MANIFEST))
        return out


def plan(index: Index, entries: Sequence[Entry], *, remote: str) -> tuple[list[PublishItem], list[IndexRecord]]:
    """(what to add, what is already there). PublishConflict if a key is taken by other files."""
    items: list[PublishItem] = []
    already: list[IndexRecord] = []
    conflicts: list[str] = []
    seen: set[str] = set()
    for entry in entries:
        if entry.key in seen:
            continue
        seen.add(entry.key)
        digest = hashlib.sha256((entry.path / MANIFEST).read_bytes()).hexdigest()
        record = record_for(entry, entry.manifest.target_options.slug, digest)
        published = index.get(entry.key)
        if published is None:
            items.append(PublishItem(entry, record))
        elif published.same_files(record):
            already.append(published)
        else:
            conflicts.append(
                f"{record.model} for {record.target} (key {entry.key[:12]}…): {remote} already holds other files "
                f"under this key, published {published.built_at or 'earlier'}"
            )
    _check_structure([item.entry for item in items], remote=remote)
    if conflicts:
        raise PublishConflict(
            "nothing was published, because publishing never replaces an artifact: " + "; ".join(conflicts)
            + ". The same key should give the same bytes; rebuild with 'zoo build' and compare, or publish elsewhere."
        )
    return items, already


def _check_structure(entries: Sequence[Entry], *, remote: str) -> None:
    from zoo.registry.verify.verification import verify_entry

    refused: list[str] = []
    for entry in entries:
        try:
            failed = [f"{c.name}: {c.detail}" for c in verify_entry(entry).checks if not c.passed]
        except (ZooError, ValueError) as exc:  # e.g. an accelerator this zoo does not know
            failed = [f"cannot be checked ({exc})"]
        m = entry.manifest
        if entry.seal is SealState.EDITED:  # its record would reach every fetch from there as the publisher's word
            refused.append(f"{m.model} for {m.target} (key {entry.key[:12]}…, {entry.path}): {entry.seal.why()} "
                           f"(rebuild it: zoo build {m.model} {m.target_options.fetch_args()})")
        elif failed:
            refused.append(f"{m.model} for {m.target} (key {entry.key[:12]}…, {entry.path}) fails its structural "
                           f"check: {'; '.join(failed)} (rebuild it: zoo build {m.model} {m.target_options.fetch_args()})")
    if refused:
        raise VerificationError(
            f"nothing was published to {remote}, because publishing never replaces an artifact, so a bad one "
            "could never be fixed there: " + "; ".join(refused)
        )
