"""Ray results through a shared remote (``--ray-results URL``) instead of Ray's
object store.

A task publishes what it built to the remote, as ``zoo publish`` would, and
sends back only the manifests; the driver then downloads each artifact with
every check of a remote fetch (the index, the manifest's key, sizes, sha256 and
the structure) before its own ``accept`` runs, as for any other executor. The
bytes never pass through Ray's object store, and the remote holds the
cluster's work even if the driver dies.

An artifact the remote already held (publishing never replaces one) comes back
whole through Ray instead, since the record there may lack what this build
added (numerics, a bundle). Point ``--ray-results`` at a scratch prefix rather
than the remote you release to: a release is signed from the driver's cache
(``zoo publish --sign-key``), and an unsigned record would already hold its place.
"""

from __future__ import annotations

import logging
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from zoo._errors import RemoteError, UsageError, ZooError
from zoo.registry.build_units.unit import (
    BuiltArtifact,
    Outcome,
    UnitFailure,
    UnitResult,
    UnitTarget,
)
from zoo.registry.remotes import Remote, parse_remote
from zoo.registry.store.cache import Cache, sha256_bytes

if TYPE_CHECKING:
    from zoo.registry.remotes.index import Index
    from zoo.registry.store.manifest import Manifest

_SHARED_KINDS = ("directory", "s3", "hf")
"""Remotes a worker on another node can write and the driver read back (not memory://, one process's)."""


def results_remote(text: str) -> str:
    """The URL every node can use for ``text``, checked on the driver before any task
    starts: writable, shared between processes, a directory made absolute."""
    remote = parse_remote(text)
    where = f"--ray-results {text}"
    if not remote.writable:
        raise UsageError(f"{where}: a {remote.kind} remote is read-only; give a directory every node mounts, "
                         "s3://BUCKET/PREFIX or hf://ORG/REPO")
    if remote.kind not in _SHARED_KINDS:
        raise UsageError(f"{where}: a {remote.kind} remote lives in one process, and Ray's workers are other "
                         "processes; give a directory every node mounts, s3://BUCKET/PREFIX or hf://ORG/REPO")
    from zoo.registry.remotes.directory import DirectoryRemote

    if isinstance(remote, DirectoryRemote):
        return str(remote.root)
    try:
        # A missing bucket or a denied key is found now, not by every task after its build.
        remote.read_index()
    except RemoteError as exc:
        raise UsageError(f"{where}: cannot be used ({exc}); fix it, or leave --ray-results out to bring results "
                         "back through Ray") from None
    return remote.url


def hand_over(result: UnitResult, url: str, *, node: str) -> UnitResult:
    """On the worker: publish every artifact ``result`` holds to ``url``. Those the
    remote added come back as their manifests alone (no files); those it already
    had come back whole. If publishing fails, the unit's artifacts fail with why."""
    built = [o for o in result.outcomes if isinstance(o, BuiltArtifact)]
    if not built:
        return result
    log = logging.getLogger(__name__)
    try:
        remote = parse_remote(url)
        with tempfile.TemporaryDirectory(prefix="zoo-handover-") as tmp:
            staged = Cache(Path(tmp))
            report = remote.publish([staged.put(o.manifest, o.files) for o in built], say=log.warning)
    except (ZooError, OSError) as exc:
        reason = f"{exc.strerror or exc}: {exc.filename}" if isinstance(exc, OSError) else str(exc)
        failure = UnitFailure(
            type(exc).__name__ if isinstance(exc, ZooError) else "RemoteError",
            f"{result.unit.label}: {node} could not publish its artifacts to --ray-results {url} ({reason}); let every "
            "node write there, or leave --ray-results out to bring results back through Ray",
        )
        return _replace(result, lambda o: failure if isinstance(o, BuiltArtifact) else o)
    added = {r.key for r in report.added}
    return _replace(result, lambda o: BuiltArtifact(o.manifest, {})
                    if isinstance(o, BuiltArtifact) and o.manifest.key in added else o)


def handed_over(outcome: Outcome) -> bool:
    """True if ``outcome`` is an artifact whose files wait at the results remote."""
    return isinstance(outcome, BuiltArtifact) and not outcome.files and bool(outcome.manifest.files)


def take_over(result: UnitResult, url: str) -> UnitResult:
    """On the driver: download every artifact ``hand_over`` left at ``url``, checked as
    any fetch from a remote is; one that fails a check fails its target alone."""
    if not any(handed_over(o) for o in result.outcomes):
        return result
    label = result.unit.label
    try:
        remote = parse_remote(url)
        index = remote.read_index()
    except RemoteError as exc:
        failure = UnitFailure(type(exc).__name__, f"{label}: its results are at --ray-results {url}, which cannot "
                                                  f"be read here ({exc}); make it readable from the driver")
        return _replace(result, lambda o: failure if handed_over(o) else o)
    outcomes: list[Outcome] = []
    for outcome, wanted in zip(result.outcomes, result.unit.targets, strict=True):
        if isinstance(outcome, BuiltArtifact) and handed_over(outcome):
            outcome = _download(remote, index, label, wanted, outcome)
        outcomes.append(outcome)
    return UnitResult(result.unit, tuple(outcomes), result.seconds)


def _download(remote: Remote, index: Index, label: str, wanted: UnitTarget, sent: BuiltArtifact) -> Outcome:
    """The artifact of ``wanted`` from ``remote``; its manifest and files must be the ones
    the worker said it built (``sent``, which came through Ray), so a remote whose hashes
    were all rewritten to match an altered manifest or altered bytes is refused too."""
    from zoo.registry.remotes.download import Wanted, pull

    target = wanted.target.name
    record = index.get(wanted.key)
    if record is None:
        return UnitFailure("RemoteError", f"{label}: the worker published {target}'s artifact to --ray-results "
                                          f"{remote}, but its index.json does not list it; build it again")
    # The worker published exactly sent.manifest.dumps() (Cache.put), so its digest is known here without
    # trusting the remote: a manifest edited there (a forged estimate or verification) is refused unread.
    if record.manifest_sha256 != sha256_bytes(sent.manifest.dumps().encode()):
        return UnitFailure("IntegrityError", f"{label}: {target}'s manifest.json at --ray-results {remote} is not the "
                                             "one its worker built (other sha256); it was altered there and nothing "
                                             "of it was cached: build it again, and check who else writes there")
    try:
        with tempfile.TemporaryDirectory(prefix="zoo-takeover-") as tmp:
            entry = pull(remote, record, Cache(Path(tmp)), want=Wanted(wanted.key, wanted.key_inputs))
            if _digests(entry.manifest) != _digests(sent.manifest):
                return UnitFailure("IntegrityError", f"{label}: {target}'s artifact at --ray-results {remote} is not "
                                                     "the one its worker built (other sha256); it was altered there: "
                                                     "build it again, and check who else writes there")
            return BuiltArtifact(entry.manifest, {f.name: (entry.path / f.name).read_bytes()
                                                  for f in entry.manifest.files})
    except RemoteError as exc:
        return UnitFailure(type(exc).__name__, f"{label}: {target}'s artifact at --ray-results is refused: {exc}")


def _digests(manifest: Manifest) -> list[tuple[str, int, str]]:
    return sorted((f.name, f.size, f.sha256) for f in manifest.files)


def _replace(result: UnitResult, change: Callable[[Outcome], Outcome]) -> UnitResult:
    return UnitResult(result.unit, tuple(change(o) for o in result.outcomes), result.seconds)
