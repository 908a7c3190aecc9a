"""A directory remote: a team share, or the folder an HTTP mirror serves.

Publishing copies each artifact into a hidden staging folder and renames it
into place, then replaces ``index.json`` in one rename, all under a lock file,
so a reader sees an artifact complete or not at all. A publish killed half
way leaves its temporaries behind; the next publish removes them under the
same lock, which every writer of them holds, so none of them is live.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

from zoo._errors import IntegrityError, RemoteError, RemoteUnavailable
from zoo._fs import publish_dir, staging_dir, write_atomic
from zoo._regular_file import open_regular
from zoo.registry.events import ByteProgress, Notice
from zoo.registry.remotes.base import MAX_INDEX_BYTES, PublishReport, Remote, cache_sink
from zoo.registry.remotes.index import INDEX, Index, check_relative_path
from zoo.registry.remotes.publish import plan
from zoo.registry.store.cache import Entry

LOCK = ".zoo-publish.lock"
STAGING = ".zoo-staging"
_CHUNK = 1 << 20


class DirectoryRemote(Remote):
    kind = "directory"
    network = False

    def __init__(self, root: Path, url: str | None = None) -> None:
        super().__init__(url or str(root))
        self.root = Path(root)

    def _path(self, path: str) -> Path:
        check_relative_path(path, where=self.url)
        full = self.root / path
        real_root = os.path.realpath(self.root)
        if os.path.commonpath([real_root, os.path.realpath(full)]) != real_root:
            raise IntegrityError(f"{self.url}: {path} resolves outside the remote (through a symbolic link)")
        return full

    @contextmanager
    def _open(self, path: Path, what: str) -> Iterator[BinaryIO]:
        """``path`` opened for reading, if it is a regular file: a FIFO would block the read
        forever, and a device (a link to /dev/zero) never ends. Non-blocking, so neither
        can hang the open itself; the type is read from the open file, not the name."""
        f = open_regular(path)
        if f is None:
            raise IntegrityError(f"{self.url}: {what} is not a regular file (a pipe, a device or a folder); "
                                 "a zoo remote holds only files")
        with f:
            yield f

    def read_index(self) -> Index:
        if not self.root.is_dir():
            raise RemoteUnavailable(f"{self.url}: no such directory")
        try:
            with self._open(self.root / INDEX, INDEX) as f:
                text = f.read(MAX_INDEX_BYTES + 1)
        except FileNotFoundError:
            return Index()
        except OSError as exc:
            raise RemoteUnavailable(f"{self.url}: cannot read {INDEX}: {exc.strerror}") from None
        if len(text) > MAX_INDEX_BYTES:
            raise IntegrityError(f"{self.url}: {INDEX} is larger than {MAX_INDEX_BYTES >> 20} MiB; not a zoo index")
        return Index.loads(text, source=self.url)

    def download(self, path: str, dest: Path, *, size: int | None, progress: ByteProgress | None = None, fresh: bool = False) -> None:
        src = self._path(path)
        done = 0
        try:
            with self._open(src, path) as fin, cache_sink(dest) as write:
                while chunk := fin.read(_CHUNK):
                    done += len(chunk)
                    if size is not None and done > size:
                        raise IntegrityError(f"{self.url}/{path} is longer than the {size} bytes its manifest lists")
                    write(chunk)
                    if progress:
                        progress(done, size)
        except FileNotFoundError:
            raise RemoteError(f"{self.url}: {path} is listed but missing") from None
        except OSError as exc:
            raise RemoteUnavailable(f"{self.url}: cannot read {path}: {exc.strerror}") from None

    def public_url(self, path: str) -> str | None:
        return self._path(path).absolute().as_uri()

    def put_site(self, folder: str, files: Mapping[str, bytes], *, say: Notice) -> None:
        from filelock import FileLock

        from zoo._fs import replace_folder

        check_relative_path(folder, where=self.url)
        with FileLock(str(self.root / LOCK)):
            replace_folder(self.root / folder, files, mode=0o755)

    def _remove_leftovers(self) -> None:
        """The index temporaries (``zoo._fs`` names them ``.index.json.*.zoo-tmp``) and
        the staging folder of publishes that died. Only call it holding the lock."""
        for tmp in self.root.glob(f".{INDEX}.*"):
            if tmp.name.endswith((".zoo-tmp", ".tmp")) and (tmp.is_symlink() or tmp.is_file()):
                tmp.unlink(missing_ok=True)
        shutil.rmtree(self.root / STAGING, ignore_errors=True)

    def publish(self, entries: Sequence[Entry], *, say: Notice) -> PublishReport:
        from filelock import FileLock

        self.root.mkdir(parents=True, exist_ok=True)
        report = PublishReport(self.url)
        with FileLock(str(self.root / LOCK)):
            self._remove_leftovers()
            index = self.read_index()
            items, report.already = plan(index, entries, remote=self.url)
            if not items:
                return report
            staging_root = self.root / STAGING
            for item in items:
                final = self._path(item.record.folder)
                with staging_dir(staging_root, item.record.key[:12]) as staging:
                    for remote_path, local in item.files():
                        shutil.copyfile(local, staging / Path(remote_path).name)
                    if final.exists():
                        # Not in the index, so a publish that died before updating it left this.
                        shutil.rmtree(final)
                    publish_dir(staging, final, mode=0o755)  # mkdtemp makes it private; the share is not
                index.add(item.record)
                report.added.append(item.record)
            write_atomic(self.root / INDEX, index.dumps().encode(), mode=0o644)
            shutil.rmtree(staging_root, ignore_errors=True)
        return report
