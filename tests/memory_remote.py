"""A remote that lives in a dict: what the fast test tier publishes to and fetches from."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from zoo._errors import IntegrityError, RemoteError
from zoo.registry.events import ByteProgress, Notice
from zoo.registry.remotes.base import PublishReport, Remote
from zoo.registry.remotes.index import INDEX, Index
from zoo.registry.remotes.publish import plan
from zoo.registry.store.cache import Entry


class MemoryRemote(Remote):
    kind = "memory"
    network = False

    def __init__(self, url: str = "memory://test") -> None:
        super().__init__(url)
        self.files: dict[str, bytes] = {}

    def read_index(self) -> Index:
        data = self.files.get(INDEX)
        return Index() if data is None else Index.loads(data, source=self.url)

    def download(self, path: str, dest: Path, *, size: int | None, progress: ByteProgress | None = None,
                 fresh: bool = False) -> None:
        if path not in self.files:
            raise RemoteError(f"{self.url}: {path} is listed but missing")
        data = self.files[path]
        if size is not None and len(data) > size:
            raise IntegrityError(f"{self.url}/{path} is longer than the {size} bytes its manifest lists")
        dest.write_bytes(data)
        if progress:
            progress(len(data), size)

    def publish(self, entries: Sequence[Entry], *, say: Notice) -> PublishReport:
        index = self.read_index()
        report = PublishReport(self.url)
        items, report.already = plan(index, entries, remote=self.url)
        for item in items:
            for remote_path, local in item.files():
                self.files[remote_path] = local.read_bytes()
            index.add(item.record)
            report.added.append(item.record)
        self.files[INDEX] = index.dumps().encode()
        return report
