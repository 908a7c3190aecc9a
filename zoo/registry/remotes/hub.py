"""A Hugging Face Hub remote, ``hf://ORG/REPO[@REVISION]``, through huggingface_hub.

Reading pins the revision: ``index.json`` is resolved to the commit it belongs
to, and every file is then downloaded at that commit, so a publish landing
meanwhile cannot mix two states. Files go through ``hf_hub_download`` into the
Hub's own cache and are checked by zoo afterwards (that cache does not check
what it holds). A publish is one commit made on top of the commit the index
was read from, with the files, the new index and a model card.

A release (``zoo publish --release v0.1.0``) is that commit, then the Hub tag
``v0.1.0`` on it. Published releases are immutable: zoo refuses, before it
uploads anything, to release a tag that exists or to publish to a tag.

The endpoint is ``HF_ENDPOINT`` (default https://huggingface.co). The token is
whatever huggingface_hub finds (``HF_TOKEN`` or ``hf auth login``); zoo never
reads, prints or logs it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast
from urllib.parse import quote

from zoo._errors import IntegrityError, PublishConflict, RemoteError, RemoteUnavailable, UsageError
from zoo.registry.events import ByteProgress, Notice
from zoo.registry.remotes.base import (
    RETRY_STATUS,
    Deadline,
    PublishReport,
    Release,
    Remote,
    cache_sink,
    with_retries,
)
from zoo.registry.remotes.index import INDEX, Index, check_relative_path
from zoo.registry.store.cache import Entry

if TYPE_CHECKING:
    from huggingface_hub import HfApi
    from huggingface_hub.hf_api import GitRefs

CARD = "README.md"
_COMMIT = re.compile(r"^[0-9a-f]{40}\Z")
# Numbers without leading zeros, as semver's: v00.1.0 would be another tag for v0.1.0.
_NUMBER = r"(0|[1-9][0-9]*)"
_RELEASE = re.compile(rf"v{_NUMBER}\.{_NUMBER}\.{_NUMBER}(?:(a|b|rc){_NUMBER})?")
_CHUNK = 1 << 20


class _ProgressBar:
    """Enough of tqdm for huggingface_hub's ``tqdm_class``. The client calls it for
    each chunk it writes, so besides reporting bytes to zoo's progress it is where
    a download is stopped past the declared size or the deadline."""

    report: ByteProgress | None = None
    limit: int | None = None
    deadline: Deadline | None = None
    too_long: str = ""

    def __init__(self, *, total: int | None = None, initial: int = 0, **_: Any) -> None:
        self.n = initial
        self.total = total

    def __enter__(self) -> _ProgressBar:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def update(self, n: int = 1) -> None:
        self.n += n
        if self.limit is not None and self.n > self.limit:
            raise IntegrityError(self.too_long)
        if self.report is not None:
            self.report(self.n, self.total)
        if self.deadline is not None:
            self.deadline.check()

    def close(self) -> None:
        return None


def _bar_class(progress: ByteProgress | None, limit: int | None, deadline: Deadline, too_long: str) -> type[_ProgressBar]:
    return type("_Bar", (_ProgressBar,), {
        "report": staticmethod(progress) if progress else None, "limit": limit, "deadline": deadline, "too_long": too_long,
    })


def release_tag(tag: str) -> str:
    """``tag`` if it names a release (``v0.1.0``, ``v1.2.3rc1``); else UsageError."""
    if not _RELEASE.fullmatch(tag):
        raise UsageError(f"--release {tag!r} is not a version tag: give 'v' and a version, e.g. v0.1.0 or v1.2.3rc1, "
                         "with no leading zeros")
    return tag


def _next_version(tag: str) -> str:
    """The release after ``tag``: the next pre-release or the next patch."""
    m = _RELEASE.fullmatch(tag)
    if m is None:
        return "a new version"
    major, minor, patch, pre, n = m.groups()
    return f"v{major}.{minor}.{patch}{pre}{int(n) + 1}" if pre else f"v{major}.{minor}.{int(patch) + 1}"


class HubRemote(Remote):
    kind = "hf"
    network = True
    keeps_own_cache = True

    def __init__(self, repo_id: str, revision: str | None, url: str) -> None:
        super().__init__(url)
        self.repo_id = repo_id
        self.revision = revision
        self._commit: str | None = None

    @property
    def endpoint(self) -> str:
        return (os.environ.get("HF_ENDPOINT") or "https://huggingface.co").rstrip("/")

    # reading

    def _transient(self, exc: BaseException) -> str | None:
        import httpx2
        from huggingface_hub.errors import HfHubHTTPError

        if isinstance(exc, httpx2.TimeoutException):
            return f"{self.endpoint} timed out"
        if isinstance(exc, httpx2.UnsupportedProtocol):
            return None
        if isinstance(exc, httpx2.TransportError):
            return f"cannot reach {self.endpoint} ({type(exc).__name__}: {exc})"
        if isinstance(exc, HfHubHTTPError) and exc.response.status_code in RETRY_STATUS:
            return f"{self.endpoint} answered HTTP {exc.response.status_code}"
        return None

    def _head(self, revision: str) -> tuple[str | None, bool]:
        """(commit of ``revision``, whether it holds an index)."""
        from huggingface_hub import get_hf_file_metadata, hf_hub_url
        from huggingface_hub.errors import RemoteEntryNotFoundError

        url = hf_hub_url(self.repo_id, INDEX, revision=revision, endpoint=self.endpoint)
        try:
            meta = get_hf_file_metadata(url, endpoint=self.endpoint)
        except RemoteEntryNotFoundError as exc:
            return exc.response.headers.get("X-Repo-Commit"), False
        return meta.commit_hash, True

    def _read(self, revision: str) -> tuple[Index, str | None]:
        from huggingface_hub import hf_hub_download

        commit, exists = with_retries(f"reading {self.url}", lambda: self._head(revision), self._transient)
        if commit is None and exists:
            raise RemoteError(f"{self.url}: {self.endpoint} sent no X-Repo-Commit header; HF_ENDPOINT must point to a Hugging Face Hub")
        if not exists:
            return Index(), commit
        assert commit is not None
        path = hf_hub_download(self.repo_id, INDEX, revision=commit, endpoint=self.endpoint)
        return Index.loads(Path(path).read_bytes(), source=self.url), commit

    def public_url(self, path: str) -> str | None:
        revision = quote(self.revision or "main", safe="")
        return f"{self.endpoint}/{self.repo_id}/resolve/{revision}/{quote(check_relative_path(path, where=self.url))}"

    def put_site(self, folder: str, files: Mapping[str, bytes], *, say: Notice) -> None:
        """One commit: the Hub shows every page of it or none."""
        from huggingface_hub import CommitOperationAdd, HfApi

        api = HfApi(endpoint=self.endpoint)
        operations = [CommitOperationAdd(path_in_repo=check_relative_path(f"{folder}/{name}", where=self.url),
                                         path_or_fileobj=data) for name, data in sorted(files.items())]
        with self._errors("publishing the site"):
            api.create_commit(self.repo_id, operations, revision=self._branch(api),
                              commit_message=f"zoo publish --site: {len(files)} files in {folder}/")

    def read_index(self) -> Index:
        with self._errors(f"reading {INDEX}"):
            index, self._commit = self._read(self.revision or "main")
        return index

    def download(self, path: str, dest: Path, *, size: int | None, progress: ByteProgress | None = None, fresh: bool = False) -> None:
        from huggingface_hub import hf_hub_download

        check_relative_path(path, where=self.url)
        if self._commit is None:
            raise RemoteError(f"{self.url}: read the index before downloading {path}")
        what = f"downloading {path}"
        too_long = f"{self.url}: {path} is longer than the {size} bytes its manifest lists"
        bar = _bar_class(progress, size, Deadline(f"{self.url} ({what})"), too_long)
        with self._errors(what):
            local = hf_hub_download(
                self.repo_id, path, revision=self._commit, endpoint=self.endpoint, force_download=fresh,
                tqdm_class=cast(Any, bar),
            )
        done = 0
        with open(local, "rb") as fin, cache_sink(dest) as write:
            while chunk := fin.read(_CHUNK):
                done += len(chunk)
                if size is not None and done > size:
                    raise IntegrityError(too_long)
                write(chunk)

    @contextmanager
    def _errors(self, what: str) -> Iterator[None]:
        """Turn huggingface_hub's and httpx2's exceptions into zoo's, naming the remote."""
        import httpx2
        from huggingface_hub.errors import (
            HfHubHTTPError,
            LocalEntryNotFoundError,
            OfflineModeIsEnabled,
            RemoteEntryNotFoundError,
            RepositoryNotFoundError,
            RevisionNotFoundError,
        )

        where = f"{self.url} ({what})"
        try:
            yield
        except RepositoryNotFoundError:
            raise RemoteError(
                f"{where}: no repository {self.repo_id} at {self.endpoint}; "
                "a private one needs a token (HF_TOKEN or 'hf auth login')"
            ) from None
        except RevisionNotFoundError:
            raise RemoteError(f"{where}: {self.repo_id} has no revision {self.revision or 'main'!r}") from None
        except RemoteEntryNotFoundError:
            raise RemoteError(f"{where}: the file is listed in the index but missing from the repository") from None
        except OfflineModeIsEnabled:
            raise RemoteUnavailable(f"{where}: HF_HUB_OFFLINE is set") from None
        except LocalEntryNotFoundError as exc:
            cause = exc.__cause__ or exc
            raise RemoteUnavailable(f"{where}: cannot reach {self.endpoint} ({type(cause).__name__}: {cause})") from None
        except HfHubHTTPError as exc:
            status = exc.response.status_code
            if status == 412:
                raise PublishConflict(
                    f"{where}: {self.repo_id} changed while publishing (another publish?); nothing was committed; run it again"
                ) from None
            kind = RemoteUnavailable if status in RETRY_STATUS else RemoteError
            raise kind(f"{where}: {self.endpoint} answered HTTP {status}") from None
        except httpx2.TimeoutException:
            raise RemoteUnavailable(f"{where}: {self.endpoint} timed out (HF_HUB_DOWNLOAD_TIMEOUT)") from None
        except httpx2.UnsupportedProtocol as exc:
            raise RemoteError(f"{where}: {self.endpoint} sent zoo to a URL that is not http(s), which it refuses ({exc})") from None
        except httpx2.TooManyRedirects:
            raise RemoteError(f"{where}: {self.endpoint} redirects too many times (a redirect loop?); giving up") from None
        except httpx2.TransportError as exc:
            raise RemoteUnavailable(f"{where}: cannot reach {self.endpoint} ({type(exc).__name__}: {exc})") from None
        except httpx2.HTTPError as exc:
            raise RemoteError(f"{where}: {type(exc).__name__}: {exc}") from None
        except OSError as exc:
            raise RemoteUnavailable(f"{where}: {exc}") from None

    # publishing

    def _refs(self, api: HfApi) -> GitRefs | None:
        """The repository's branches and tags; None if there is no repository yet."""
        from huggingface_hub.errors import RepositoryNotFoundError

        try:
            return with_retries(f"reading the branches and tags of {self.url}", lambda: api.list_repo_refs(self.repo_id),
                                self._transient)
        except RepositoryNotFoundError:
            return None

    def _branch(self, api: HfApi, release: str | None = None) -> str:
        """The branch to commit to, once it is sure that no release moves: the URL names
        no commit or tag, and ``release`` is neither a tag nor a branch yet."""
        if self.revision and _COMMIT.match(self.revision):
            raise UsageError(f"{self.url} names a commit; publish to a branch, e.g. hf://{self.repo_id}")
        branch = self.revision or "main"
        if self.revision is None and release is None:
            return branch
        refs = self._refs(api)
        tags = {t.name: t.target_commit for t in refs.tags} if refs else {}
        branches = {b.name: b.target_commit for b in refs.branches} if refs else {}
        if branch in tags or branch.startswith("refs/tags/"):
            tag = branch.removeprefix("refs/tags/")
            raise PublishConflict(
                f"{self.url} names the release tag {tag}, and published releases are immutable: zoo never publishes "
                f"to a tag; nothing was uploaded. To release more, publish to a branch with a new version: "
                f"--to hf://{self.repo_id} --release {_next_version(tag)}")
        taken = (tags.get(release) or branches.get(release)) if release else None
        if release and taken:
            kind = "tag" if release in tags else "branch"
            raise PublishConflict(
                f"{self.url}: the release {release} exists already (a {kind} at commit {taken[:12]}), and published "
                f"releases are immutable; nothing was uploaded. Bump the version and publish again, "
                f"e.g. --release {_next_version(release)}")
        return branch

    def _tag(self, api: HfApi, tag: str, commit: str, *, branch: str, committed: bool) -> Release:
        """The tag ``tag`` on ``commit``; PublishConflict if someone made it since the check."""
        from huggingface_hub.errors import HfHubHTTPError

        url = f"hf://{self.repo_id}@{tag}"
        with self._errors(f"tagging the release {tag}"):
            try:
                api.create_tag(self.repo_id, tag=tag, revision=commit, tag_message=f"zoo publish --release {tag}")
            except HfHubHTTPError as exc:
                if exc.response.status_code != 409:
                    raise
                made = (f"the commit {commit[:12]} on {branch} was made" if committed
                        else f"nothing needed committing (the branch is at {commit[:12]})")
                raise PublishConflict(
                    f"{self.url}: {made}, but the tag {tag} was created meanwhile by someone else, so zoo did not "
                    f"tag it; nothing else changed. See what {url} holds, and release again as "
                    f"{_next_version(tag)} if that is not this publish") from None
        return Release(tag, commit, url)

    def publish(self, entries: Sequence[Entry], *, say: Notice, release: str | None = None) -> PublishReport:
        """One commit on the branch; with ``release``, then the tag ``release`` on that commit
        (or, if there was nothing to add, on the branch's head, which holds it all)."""
        from huggingface_hub import CommitOperationAdd, HfApi
        from huggingface_hub.errors import RepositoryNotFoundError

        from zoo.registry.remotes.card import model_card
        from zoo.registry.remotes.publish import plan

        if release is not None:
            release_tag(release)
        api = HfApi(endpoint=self.endpoint)
        report = PublishReport(self.url)
        with self._errors("publishing"):
            branch = self._branch(api, release)
            try:
                index, head = self._read(branch)
            except RepositoryNotFoundError:
                api.create_repo(self.repo_id, exist_ok=True)
                say(f"created the model repository {self.repo_id} at {self.endpoint}")
                index, head = self._read(branch)
            items, report.already = plan(index, entries, remote=self.url)
            if items:
                operations = []
                for item in items:
                    index.add(item.record)
                    report.added.append(item.record)
                    operations += [CommitOperationAdd(path_in_repo=p, path_or_fileobj=str(f)) for p, f in item.files()]
                operations.append(CommitOperationAdd(path_in_repo=INDEX, path_or_fileobj=index.dumps().encode()))
                operations.append(CommitOperationAdd(path_in_repo=CARD, path_or_fileobj=model_card(index, self.url).encode()))
                names = sorted({f"{r.model}/{r.slug}" for r in report.added})
                info = api.create_commit(
                    self.repo_id, operations, revision=branch, parent_commit=head,
                    commit_message=f"zoo publish: {', '.join(names)}"[:200],
                    commit_description="\n".join(f"{r.model} {r.target} {r.key}" for r in report.added),
                )
                report.revision = head = info.oid
        if release is not None:
            if head is None:
                raise RemoteError(f"{self.url}: {self.endpoint} sent no X-Repo-Commit header; HF_ENDPOINT must point to a Hugging Face Hub")
            report.release = self._tag(api, release, head, branch=branch, committed=report.revision is not None)
        return report
