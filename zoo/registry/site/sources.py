"""Where a site's builds come from: the local cache (with its failure records), or a remote's index."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING
from urllib.parse import quote

from zoo.registry.site.builds import Build, Failed, Site, gather

if TYPE_CHECKING:
    from zoo._spec import ModelSpec
    from zoo.registry.remotes.base import Remote
    from zoo.registry.remotes.index import Index
    from zoo.registry.store.cache import Cache


def from_cache(cache: Cache, specs: Mapping[str, ModelSpec], *, say: Callable[[str], None]) -> Site:
    """Every cached artifact (manifests only: the figures are the manifest's) and every recorded failure."""
    builds: list[Build] = []
    failures: list[Failed] = []
    for key, entry, problem in cache.scan(verify=False):
        if entry is None:
            say(f"skipping cache entry {key[:12]}: {problem or 'unreadable'} (run 'zoo cache prune --corrupt')")
        else:
            builds.append(Build.from_manifest(entry.believed))
    for key, failure, problem in cache.failures():
        if failure is None:
            say(f"skipping failure record {key[:12]}: {problem or 'unreadable'}")
        else:
            failures.append(Failed.from_failure(failure))
    return gather("the local cache", builds, failures, specs, from_remote=False)


def relative_links(path: str) -> str:
    """A file's link from a model page of a site published at ``<remote>/_site/``."""
    return "../../" + quote(path)


def from_index(index: Index, remote: Remote, specs: Mapping[str, ModelSpec], *,
               href: Callable[[str], str | None] | None = None, say: Callable[[str], None]) -> Site:
    """Every artifact the index lists; links by ``href`` (default: the remote's own public URLs)."""
    for rejected in index.rejected:
        say(f"skipping part of {remote}'s index.json: {rejected.error}")
    link = href or remote.public_url
    builds: list[Build] = []
    for r in index:
        try:
            build: Build | None = Build.from_record(r, remote=remote.url, href=link)
            problem = build.problem() if build else None
        except (TypeError, ValueError, KeyError, AttributeError) as exc:
            build, problem = None, f"{type(exc).__name__}: {exc}"
        if problem is not None or build is None:
            say(f"skipping {r.model!r} for {r.target!r} (key {str(r.key)[:12]!r}) in {remote}'s index.json: {problem}")
            continue
        builds.append(build)
    return gather(remote.url, builds, [], specs, from_remote=True)
