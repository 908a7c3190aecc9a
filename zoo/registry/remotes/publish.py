"""Plan a publish: which cached artifacts are new to a remote, and where their files go.

Publishing only adds. An artifact already listed under the same key with the
same files is skipped; one with different files is a conflict, and nothing is
published at all.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from zoo._errors import PublishConflict
from zoo.registry.cache import MANIFEST, Entry
from zoo.registry.remotes.index import Index, IndexRecord, record_for


@dataclass(frozen=True)
class PublishItem:
    entry: Entry
    record: IndexRecord

    def files(self) -> list[tuple[str, Path]]:
        """(path inside the remote, local file) for every file, the manifest last."""
        folder = self.record.folder
        out = [(f"{folder}/{f.name}", self.entry.path / f.name) for f in self.entry.manifest.files]
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
    if conflicts:
        raise PublishConflict(
            "nothing was published, because publishing never replaces an artifact: " + "; ".join(conflicts)
            + ". The same key should give the same bytes; rebuild with 'zoo build' and compare, or publish elsewhere."
        )
    return items, already
