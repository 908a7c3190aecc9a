"""What every kind of remote provides, and the retry rule the network kinds share."""

from __future__ import annotations

import contextlib
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, TypeVar

from zoo._env import number
from zoo._errors import CacheError, IntegrityError, RemoteUnavailable, UsageError
from zoo.registry.events import ByteProgress, Notice, stderr_notice

if TYPE_CHECKING:
    from zoo.registry.remotes.index import Index, IndexRecord
    from zoo.registry.store.cache import Entry

T = TypeVar("T")

DEFAULT_TIMEOUT_S = 30.0
DEFAULT_DEADLINE_S = 600.0
DEFAULT_RETRIES = 3
BACKOFF_S = 0.5
RETRY_STATUS = frozenset({408, 425, 429, 500, 502, 503, 504})
"""HTTP statuses worth another try, for every network remote."""


MAX_INDEX_BYTES = 64 << 20
"""The largest ``index.json`` any remote is read for: more is not a zoo index."""


@contextmanager
def cache_sink(dest: Path) -> Iterator[Callable[[bytes], object]]:
    """A download's writer into the cache's staging folder. What fails there (a full disk, a
    quota, a read-only cache) is the cache's problem, not the remote's: a CacheError that
    says so, which no fallback to another remote can mend."""

    def failed(exc: OSError) -> CacheError:
        return CacheError(f"cannot write {dest.name} into the cache ({dest.parent}): "
                          f"{exc.strerror or exc}; free space there, or point ZOO_CACHE_DIR elsewhere")

    try:
        f = dest.open("wb")
    except OSError as exc:
        raise failed(exc) from None

    def write(chunk: bytes) -> object:
        try:
            return f.write(chunk)
        except OSError as exc:
            raise failed(exc) from None

    try:
        yield write
    except BaseException:  # the remote's error (or a write's, already a CacheError) stands
        with contextlib.suppress(OSError):
            f.close()
        raise
    try:
        f.close()  # flushes the last chunk
    except OSError as exc:
        raise failed(exc) from None


def timeout_s() -> float:
    """Seconds to wait for a connection or for the next bytes (``ZOO_HTTP_TIMEOUT``)."""
    # 0 would make every connection fail at once, reported as "cannot connect".
    return float(number("ZOO_HTTP_TIMEOUT", DEFAULT_TIMEOUT_S, float, positive=True))


def deadline_s() -> float:
    """Seconds one transfer may take in all, retries included (``ZOO_HTTP_DEADLINE``; 0: no limit)."""
    return float(number("ZOO_HTTP_DEADLINE", DEFAULT_DEADLINE_S, float))


class Deadline:
    """The overall time limit of one transfer. The per-read timeout alone lets a
    server that trickles a byte now and then hold zoo for ever."""

    def __init__(self, what: str) -> None:
        self.what = what
        self.limit = deadline_s()
        self._end = time.monotonic() + self.limit if self.limit else None

    def remaining(self) -> float | None:
        return None if self._end is None else self._end - time.monotonic()

    def check(self) -> None:
        """RemoteUnavailable once the time is up; not worth a retry, which would take as long."""
        left = self.remaining()
        if left is not None and left <= 0:
            raise RemoteUnavailable(f"{self.what}: not done after {self.limit:g} s (ZOO_HTTP_DEADLINE); giving up")


def pump(chunks: Iterable[bytes], sink: Callable[[bytes], object], *, limit: int | None, too_long: str,
         progress: ByteProgress | None, deadline: Deadline) -> None:
    """Copy ``chunks`` into ``sink``: IntegrityError ``too_long`` as soon as they pass
    ``limit`` bytes (a body may claim any length, or none), and the deadline checked
    after each chunk (a trickle never trips the per-read timeout)."""
    done = 0
    for chunk in chunks:
        done += len(chunk)
        if limit is not None and done > limit:
            raise IntegrityError(too_long)
        sink(chunk)
        if progress:
            progress(done, limit)
        deadline.check()


def retries() -> int:
    """How often a transient failure is retried (``ZOO_HTTP_RETRIES``)."""
    return int(number("ZOO_HTTP_RETRIES", DEFAULT_RETRIES, int))


def with_retries(
    what: str,
    attempt: Callable[[], T],
    transient: Callable[[BaseException], str | None],
    *,
    say: Notice | None = None,
) -> T:
    """Run ``attempt``; retry with exponential backoff while ``transient`` names
    the failure; then raise RemoteUnavailable with the last reason."""
    n = retries()
    for i in range(n + 1):
        try:
            return attempt()
        except Exception as exc:
            reason = transient(exc)
            if reason is None:
                raise
            if i == n:
                tries = f" (tried {n + 1} times)" if n else ""
                raise RemoteUnavailable(f"{what}: {reason}{tries}") from None
            delay = min(BACKOFF_S * 2**i, 8.0)
            (say or stderr_notice)(f"{what}: {reason}; retrying in {delay:g} s")
            time.sleep(delay)
    raise AssertionError("unreachable")


@dataclass(frozen=True)
class Release:
    """A Hub tag that ``zoo publish --release`` made."""

    tag: str
    commit: str
    url: str
    """Where to read it from: ``hf://ORG/REPO@TAG``."""


@dataclass
class PublishReport:
    remote: str
    added: list[IndexRecord] = field(default_factory=list)
    already: list[IndexRecord] = field(default_factory=list)
    revision: str | None = None
    """The commit a Hub publish created."""
    release: Release | None = None


class Remote(ABC):
    """A place artifacts are published to and fetched from. A plugin adds a kind
    of its own by subclassing this and returning it from ``register_remotes``."""

    kind: ClassVar[str]
    network: ClassVar[bool]
    """True if reading it needs the network; offline mode skips those."""
    writable: ClassVar[bool] = True
    keeps_own_cache: ClassVar[bool] = False
    """True if downloads land in a cache of the remote's client first (the Hub's)."""
    trusted_keys: tuple[Path, ...] = ()
    """Public keys (PEM files) one of which must have signed every artifact fetched
    from here; empty: signatures are not checked. ``parse_remote`` sets them."""
    guards_cache: bool = True
    """Whether its trusted keys also decide which cached artifacts a fetch hands out (``trust.py``)."""

    def __init__(self, url: str) -> None:
        self.url = url

    def __str__(self) -> str:
        return self.url

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.url!r})"

    @abstractmethod
    def read_index(self) -> Index:
        """The current index; an empty one if nothing was published yet."""

    @abstractmethod
    def download(self, path: str, dest: Path, *, size: int | None, progress: ByteProgress | None = None, fresh: bool = False) -> None:
        """Stream the file at ``path`` (relative to the root) into ``dest``.

        ``size`` is what the manifest promises; a remote stops reading past it.
        ``fresh`` bypasses the client's own cache, if it keeps one.
        """

    def publish(self, entries: Sequence[Entry], *, say: Notice) -> PublishReport:
        raise UsageError(f"{self.url} is a read-only {self.kind} remote; publish to the directory it serves instead")

    def public_url(self, path: str) -> str | None:
        """A link a web browser can follow to the file at ``path``; None if there is none."""
        return None

    def put_site(self, folder: str, files: Mapping[str, bytes], *, say: Notice) -> None:
        """Replace the static site in ``folder`` with ``files`` (paths inside it); a reader never
        sees a page half written. ``zoo publish --site`` calls it after a publish."""
        raise UsageError(f"zoo cannot put a site on a {self.kind} remote ({self.url})")
