"""Remotes on object storage (issue 12, part 2): ``s3://`` through s3fs against
moto's standalone server on loopback (one per session, a bucket per test), and
``memory://``. Publishing only adds, every download is checked, nothing is
listed before all of it is stored, and concurrent publishes never lose one
another: S3 has no rename, so index.json is written with If-Match on the ETag
it was read with, and artifact files with If-None-Match. The artifacts are
``add``'s, from the fake compile; the CLI runs in fresh interpreters, also as a
light install.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import os
import re
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import HEAVY, run_probed
from tests.fake_compile import FakeCompile
from tests.remotes.conftest import cache_is_clean, entry_files, run_checked
from tests.remotes.helpers import S3Bucket, build_s3_site, make_key_pair, store_variant, tamper_pte
from tests.remotes.light_site import light_env
from zoo import Zoo
from zoo._errors import MissingExtraError, PublishConflict, RemoteError, UsageError
from zoo.registry.events import Notice
from zoo.registry.remotes import parse_remote
from zoo.registry.remotes.base import PublishReport
from zoo.registry.remotes.download import Search, find_prebuilt
from zoo.registry.remotes.index import Index, record_for
from zoo.registry.remotes.object_store import MemoryRemote
from zoo.registry.remotes.publish import PublishItem
from zoo.registry.remotes.s3 import S3Remote
from zoo.registry.remotes.signing import SIGNATURE, signed_entries
from zoo.registry.remotes.stores import BACKENDS
from zoo.registry.store.cache import MANIFEST, Cache, Entry

pytestmark = pytest.mark.server  # moto's S3 on loopback

PTE = "add_u55-128.pte"
OBJECT_STACK = ("fsspec", "s3fs", "botocore", "aiobotocore", "aiohttp", "boto3")


@pytest.fixture
def source(fake_compile: FakeCompile, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Entry]:
    """add for u55-128 and for portable, by slug, in a cache of their own; ZOO_CACHE_DIR is
    then an empty cache to fetch into."""
    monkeypatch.setenv("ZOO_CACHE_DIR", str(tmp_path / "source-cache"))
    Zoo().fetch_many(["add"], ["u55-128", "portable"], notice=lambda m: None)
    entries = {e.manifest.target_options.slug: e for _k, e, _p in Cache(tmp_path / "source-cache").scan() if e}
    assert set(entries) == {"u55-128", "portable"}
    monkeypatch.setenv("ZOO_CACHE_DIR", str(tmp_path / "cache"))
    return entries


def publish(url: str, *entries: Entry, say: Notice | None = None) -> PublishReport:
    return parse_remote(url).publish(list(entries), say=say or (lambda m: None))


def fetch(url: str, slug: str = "u55-128", *trusted: Path, cache: Path | None = None) -> tuple[Search, list[str]]:
    """Look for add for ``slug`` on ``url`` as ``zoo fetch --no-build`` does."""
    notes: list[str] = []
    search = find_prebuilt(Zoo().request("add", slug), Cache(cache or Path(os.environ["ZOO_CACHE_DIR"])),
                           [parse_remote(url, trusted_keys=trusted)], say=notes.append)
    return search, notes


def files_of(entry: Entry) -> dict[str, bytes]:
    return {f.name: (entry.path / f.name).read_bytes() for f in entry.manifest.files}


def folder_of(entry: Entry) -> str:
    return f"add/{entry.manifest.target_options.slug}/{entry.key}"


# 1. Publish, then fetch into an empty cache.

def test_publish_then_fetch_into_an_empty_cache(source: dict[str, Entry], s3: S3Bucket) -> None:
    report = publish(s3.url, *source.values())
    assert {r.key for r in report.added} == {e.key for e in source.values()} and report.already == []
    expected = ["index.json"] + [f"{folder_of(e)}/{name}" for e in source.values() for name in (*files_of(e), MANIFEST)]
    assert s3.objects() == sorted(expected)
    assert set(s3.index()["models"]["add"]) == {"u55-128", "portable"}

    for slug, entry in source.items():
        search, notes = fetch(s3.url, slug)
        assert search.found is not None and search.found.source == "remote", notes
        assert files_of(search.found.entry) == files_of(entry)
        assert any(n.startswith(f"downloaded add for {entry.manifest.target} from {s3.url} ") for n in notes), notes

    # Publishing what is there writes nothing, not even the index.
    etag = s3.etag("index.json")
    again = publish(s3.url, *source.values())
    assert again.added == [] and len(again.already) == 2
    assert s3.etag("index.json") == etag


def test_cli_publish_then_fetch_on_a_light_install(source: dict[str, Entry], s3: S3Bucket, tmp_path: Path) -> None:
    """`zoo publish --all --to s3://…` and `zoo fetch --remote s3://…`, as a user runs them; the
    fetch on an install without torch but with the s3 extra. No secret is ever printed."""
    source_cache = tmp_path / "source-cache"
    pub = run_checked("publish", "--all", "--to", s3.url, env={"ZOO_CACHE_DIR": str(source_cache)})
    assert pub.returncode == 0, pub.stderr
    assert pub.stdout.count("published ") == 2, pub.stdout
    assert pub.loaded == [], pub.loaded

    site = build_s3_site(tmp_path / "s3-site")
    cache = tmp_path / "light-cache"
    cmd = ("fetch", "add", "-t", "u55-128", "--no-build", "--remote", s3.url, "--json")
    env = light_env(site, ZOO_CACHE_DIR=str(cache))
    got = run_probed(*cmd, base_env=env, no_site=True)
    assert got.returncode == 0, got.stderr
    art = json.loads(got.stdout)
    assert art["source"] == "remote" and got.loaded == [], (got.loaded, got.stderr)
    assert entry_files(cache, art["key"]) == entry_files(source_cache, art["key"])

    hit = run_probed(*cmd, base_env=env, no_site=True, watch=(*HEAVY, *OBJECT_STACK))
    assert hit.returncode == 0 and json.loads(hit.stdout)["source"] == "cache", hit.stderr
    assert hit.loaded == [], f"a cached fetch imported {hit.loaded}"
    for out in (pub, got, hit):
        assert "zooTestSecretNeverPrinted" not in out.stdout + out.stderr


def test_light_commands_never_import_the_object_store_stack(source: dict[str, Entry], s3: S3Bucket,
                                                            tmp_path: Path) -> None:
    publish(s3.url, source["u55-128"])
    (tmp_path / "zoo.toml").write_text(f'remotes = ["{s3.url}"]\n')
    env = {"ZOO_CACHE_DIR": str(tmp_path / "cache")}
    first = run_probed("fetch", "add", "-t", "u55-128", "--no-build", env=env, cwd=tmp_path, watch=OBJECT_STACK)
    assert first.returncode == 0 and "s3fs" in first.loaded, (first.loaded, first.stderr)  # the probe does see them
    for args in (("list",), ("targets",), ("fetch", "add", "-t", "u55-128", "--no-build")):
        r = run_probed(*args, env=env, cwd=tmp_path, watch=OBJECT_STACK)
        assert r.returncode == 0, r.stderr
        assert r.loaded == [], f"zoo {' '.join(args)} imported {r.loaded}"


def test_without_s3fs_the_remote_says_which_extra_to_install(light: Path, tmp_path: Path) -> None:
    r = run_checked("fetch", "add", "-t", "u55-128", "--no-build", "--remote", "s3://bucket/zoo",
                    env={"ZOO_CACHE_DIR": str(tmp_path / "cache")}, light_site=light)
    assert r.returncode == 1, r.stderr
    assert ("remote s3://bucket/zoo: Amazon S3 or an S3-compatible store needs s3fs, which is not installed. "
            "Install it with: pip install 'ethosu-zoo[s3]'") in r.stderr


@pytest.mark.parametrize("scheme", ["gs", "az"])
def test_other_stores_name_their_backend(scheme: str) -> None:
    backend = BACKENDS[scheme]
    if importlib.util.find_spec(backend.module) is not None:
        pytest.skip(f"{backend.module} is installed here, so {scheme}:// parses")
    with pytest.raises(MissingExtraError, match=re.escape(f"needs {backend.module}, which is not installed. "
                                                          f"Install it with: {backend.install}")):
        parse_remote(f"{scheme}://bucket/zoo")


@pytest.mark.parametrize(("url", "message"), [
    ("s3://AKIAEXAMPLE:wJalrXUtnFEMIsecret@bucket/zoo", "credentials do not belong in the URL"),
    ("s3:///zoo", "expected s3://BUCKET or s3://BUCKET/PREFIX"),
    ("s3://bucket/zoo?versionId=1", r"takes no '\?' or '#' part"),
    ("s3://bucket/a/../b", "paths must stay inside the remote"),
])
def test_bad_object_store_urls_are_usage_errors(url: str, message: str) -> None:
    with pytest.raises(UsageError, match=message) as info:
        parse_remote(url)
    assert "wJalrXUtnFEMIsecret" not in str(info.value) and "AKIAEXAMPLE" not in str(info.value)
    assert str(parse_remote("S3://bucket/team/zoo/")) == "s3://bucket/team/zoo"


# 2. Tampering: each is refused in one line naming the remote, and nothing is cached.

def _flip_pte(s3: S3Bucket, folder: str) -> None:
    data = bytearray(s3.read(f"{folder}/{PTE}"))
    data[len(data) // 2] ^= 0x01
    s3.write(f"{folder}/{PTE}", bytes(data))


def _manifest_not_the_indexed_one(s3: S3Bucket, folder: str) -> None:
    manifest = json.loads(s3.read(f"{folder}/{MANIFEST}"))
    manifest["build"]["built_at"] = "2099-01-01T00:00:00+00:00"
    s3.write(f"{folder}/{MANIFEST}", json.dumps(manifest).encode())


def _escape_in_the_index(s3: S3Bucket, folder: str) -> None:
    index = s3.index()
    [record] = index["models"]["add"]["u55-128"].values()
    record["manifest"] = f"../outside/{folder}/{MANIFEST}"
    s3.save_index(index)


def _header_cut_short(s3: S3Bucket, folder: str) -> None:
    s3.write(f"{folder}/add_u55-128.h", s3.read(f"{folder}/add_u55-128.h")[:1000])


def _pte_longer(s3: S3Bucket, folder: str) -> None:
    s3.write(f"{folder}/{PTE}", s3.read(f"{folder}/{PTE}") + b"\0" * (1 << 20))


def _pte_missing(s3: S3Bucket, folder: str) -> None:
    s3.client.delete_object(Bucket=s3.name, Key=f"{s3.prefix}/{folder}/{PTE}")


TAMPERING: dict[str, tuple[Callable[[S3Bucket, str], None], str]] = {
    "a byte of the .pte changed": (_flip_pte, f"{PTE} has sha256"),
    "a manifest whose hash differs from the index": (_manifest_not_the_indexed_one,
                                                     f"{MANIFEST} (checked against index.json) has sha256"),
    "../ in the index's manifest path": (_escape_in_the_index, "paths must stay inside the remote"),
    "an object cut short": (_header_cut_short, "add_u55-128.h is 1000 bytes, its manifest says"),
    "an object longer than its manifest says": (_pte_longer, "bytes its manifest lists"),
    "an object missing": (_pte_missing, "listed in the index but missing"),
}


@pytest.mark.parametrize("case", TAMPERING)
def test_tampered_objects_are_refused_and_nothing_is_cached(case: str, source: dict[str, Entry], s3: S3Bucket) -> None:
    entry = source["u55-128"]
    publish(s3.url, entry)
    spoil, reason = TAMPERING[case]
    spoil(s3, folder_of(entry))
    search, notes = fetch(s3.url)
    assert search.found is None, notes
    [line] = [n for n in notes if "skipping this" in n]
    assert line.startswith(s3.url) and "\n" not in line, line
    assert reason in line, (reason, line)
    assert cache_is_clean(Path(os.environ["ZOO_CACHE_DIR"]))


# 3. Publishing only adds, and concurrent publishes never lose one another.

def test_a_publish_never_replaces_an_artifact(source: dict[str, Entry], s3: S3Bucket, tmp_path: Path) -> None:
    entry = source["u55-128"]
    publish(s3.url, entry)
    before = {path: s3.etag(path) for path in s3.objects()}
    other = store_variant(entry, tmp_path / "other-cache", header_suffix=b"/* not the same */\n")
    with pytest.raises(PublishConflict, match="nothing was published, because publishing never replaces an artifact"):
        publish(s3.url, other, source["portable"])
    assert {path: s3.etag(path) for path in s3.objects()} == before


class _WaitsAfterItsFirstRead:
    """A remote whose first read of the index waits at a barrier, so that every publish
    has read the index before any of them writes it."""

    barrier: threading.Barrier
    timeout: float
    reads: int

    def _read_versioned(self) -> tuple[Index, str | None]:
        out: tuple[Index, str | None] = super()._read_versioned()  # type: ignore[misc]
        self.reads += 1
        if self.reads == 1:
            with contextlib.suppress(threading.BrokenBarrierError):
                self.barrier.wait(self.timeout)
        return out


class _BarrierS3(_WaitsAfterItsFirstRead, S3Remote):
    def __init__(self, url: str, barrier: threading.Barrier, timeout: float = 30) -> None:
        bucket, _, prefix = url.removeprefix("s3://").partition("/")
        super().__init__(url, BACKENDS["s3"], bucket, prefix)
        self.barrier, self.timeout, self.reads = barrier, timeout, 0


class _BarrierMemory(_WaitsAfterItsFirstRead, MemoryRemote):
    def __init__(self, url: str, barrier: threading.Barrier, timeout: float) -> None:
        bucket, _, prefix = url.removeprefix("memory://").partition("/")
        super().__init__(url, BACKENDS["memory"], bucket, prefix)
        self.barrier, self.timeout, self.reads = barrier, timeout, 0


def _race(remotes: Sequence[S3Remote | MemoryRemote], batches: Sequence[Sequence[Entry]]) -> tuple[list[Any], list[str]]:
    """Publish each batch through its remote, all in threads started together; (reports or errors, notices)."""
    results: list[Any] = [None] * len(remotes)
    notes: list[str] = []

    def run(i: int) -> None:
        try:
            results[i] = remotes[i].publish(list(batches[i]), say=notes.append)
        except Exception as exc:
            results[i] = exc

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(remotes))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    return results, notes


def test_two_concurrent_publishes_of_different_artifacts_both_land(source: dict[str, Entry], s3: S3Bucket) -> None:
    barrier = threading.Barrier(2)
    a, b = _BarrierS3(s3.url, barrier), _BarrierS3(s3.url, barrier)
    results, notes = _race([a, b], [[source["u55-128"]], [source["portable"]]])
    assert all(isinstance(r, PublishReport) and len(r.added) == 1 for r in results), results
    assert set(s3.index()["models"]["add"]) == {"u55-128", "portable"}, "a publish was lost"
    # Both read the index before either wrote it, so one of them found it changed, read it again and retried.
    assert any("index.json changed while publishing (another publish?); reading index.json again" in n
               for n in notes), notes
    assert a.reads + b.reads == 3
    for slug, entry in source.items():
        search, found_notes = fetch(s3.url, slug)
        assert search.found is not None and files_of(search.found.entry) == files_of(entry), found_notes


def test_two_concurrent_publishes_of_one_key_from_two_caches(source: dict[str, Entry], s3: S3Bucket,
                                                             tmp_path: Path) -> None:
    """The same build key, built twice: the same .pte and header, but each manifest has its own build time.
    One manifest is stored and listed; the other publish finds the artifact already there."""
    mine = source["u55-128"]
    theirs = store_variant(mine, tmp_path / "their-cache", built_at="2099-01-01T00:00:00+00:00")
    assert theirs.key == mine.key and (theirs.path / MANIFEST).read_bytes() != (mine.path / MANIFEST).read_bytes()
    barrier = threading.Barrier(2)
    results, _notes = _race([_BarrierS3(s3.url, barrier), _BarrierS3(s3.url, barrier)], [[mine], [theirs]])
    assert all(isinstance(r, PublishReport) for r in results), results
    assert sorted((len(r.added), len(r.already)) for r in results) == [(0, 1), (1, 0)], results
    [record] = s3.index()["models"]["add"]["u55-128"].values()
    stored = s3.read(f"{folder_of(mine)}/{MANIFEST}")
    assert record["manifest_sha256"] == hashlib.sha256(stored).hexdigest(), "the listed manifest is the stored one"
    search, fetch_notes = fetch(s3.url)
    assert search.found is not None, fetch_notes


def test_a_killed_publish_is_finished_or_named(source: dict[str, Entry], s3: S3Bucket,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """A publish that died after some files: the same bytes are taken as they are; other bytes under
    a key no index lists stop the publish, which names what to delete."""
    entry = source["u55-128"]
    s3.write(f"{folder_of(entry)}/{PTE}", (entry.path / PTE).read_bytes())
    assert len(publish(s3.url, entry).added) == 1

    other = source["portable"]
    s3.write(f"{folder_of(other)}/{MANIFEST}", b'{"half": "written by someone else"}')
    monkeypatch.setenv("ZOO_PUBLISH_ATTEMPTS", "2")
    notes: list[str] = []
    with pytest.raises(PublishConflict) as info:
        publish(s3.url, other, say=notes.append)
    message = str(info.value)
    assert f"{s3.url}/{folder_of(other)}/{MANIFEST} already holds other bytes" in message
    assert f"delete {s3.url}/{folder_of(other)}/ (no index lists it)" in message
    assert len(notes) == 1 and "reading index.json again" in notes[0], notes
    assert set(s3.index()["models"]["add"]) == {"u55-128"}
    assert s3.read(f"{folder_of(other)}/{MANIFEST}") == b'{"half": "written by someone else"}'


def test_concurrent_publishes_to_memory_are_serialised(source: dict[str, Entry]) -> None:
    """memory:// has no ETags: a publish holds a lock from reading the index to writing it. The
    barrier would let both read first if it did not; with the lock the first waits it out alone."""
    url = f"memory://zoo-{uuid.uuid4().hex[:12]}/team"
    barrier = threading.Barrier(2)
    a, b = _BarrierMemory(url, barrier, 0.5), _BarrierMemory(url, barrier, 0.5)
    results, notes = _race([a, b], [[source["u55-128"]], [source["portable"]]])
    assert all(isinstance(r, PublishReport) and len(r.added) == 1 for r in results), results
    assert notes == []
    search, fetch_notes = fetch(url, "portable")
    assert search.found is not None and files_of(search.found.entry) == files_of(source["portable"]), fetch_notes
    search, fetch_notes = fetch(url, "u55-128")
    assert search.found is not None, fetch_notes


# 4. Signed artifacts on S3.

def test_a_signed_publish_is_fetched_with_a_trusted_key(source: dict[str, Entry], s3: S3Bucket, tmp_path: Path) -> None:
    entry = source["u55-128"]
    ci, other = make_key_pair(tmp_path / "keys", "ci"), make_key_pair(tmp_path / "keys", "other")
    with signed_entries([entry], ci.private) as signed:
        [added] = publish(s3.url, *signed).added
    assert f"{folder_of(entry)}/{SIGNATURE}" in s3.objects()
    listed = s3.index()["models"]["add"]["u55-128"][entry.key]["signature"]
    assert listed["key"] == ci.fingerprint and listed["sha256"] == hashlib.sha256(
        s3.read(f"{added.folder}/{SIGNATURE}")).hexdigest()

    search, notes = fetch(s3.url, "u55-128", ci.public)
    assert search.found is not None, notes
    assert (search.found.entry.manifest.verification or {})["signature"]["key"] == ci.fingerprint

    refused, notes = fetch(s3.url, "u55-128", other.public, cache=tmp_path / "c2")
    assert refused.found is None and any("which is not its trusted key" in n for n in notes), notes
    tamper_pte(s3.read, s3.write, "add", "u55-128")
    refused, notes = fetch(s3.url, "u55-128", ci.public, cache=tmp_path / "c3")
    assert refused.found is None and any("altered after it was signed" in n for n in notes), notes
    assert cache_is_clean(tmp_path / "c2") and cache_is_clean(tmp_path / "c3")


def test_a_killed_signed_publish_is_finished_by_the_next_and_a_stranger_signature_still_blocks(
    source: dict[str, Entry], s3: S3Bucket, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A signed publish killed before its index write leaves a signature no index lists. The next
    publish signs anew (ECDSA: other bytes), yet must finish: the signature left there checks out
    with the same key over the same files, so it is kept and listed. One by another key is not."""
    entry, other = source["u55-128"], source["portable"]
    ci, stranger = make_key_pair(tmp_path / "keys", "ci"), make_key_pair(tmp_path / "keys", "stranger")
    with signed_entries([entry], ci.private) as [killed]:
        for path, local in PublishItem(killed, record_for(killed, "u55-128", "0" * 64)).files()[:-1]:
            s3.write(path, local.read_bytes())  # everything but the manifest, and no index: the kill
        left = s3.read(f"{folder_of(entry)}/{SIGNATURE}")
    with signed_entries([entry], ci.private) as signed:
        assert signed[0].signature.path.read_bytes() != left  # type: ignore[attr-defined]
        assert len(publish(s3.url, *signed).added) == 1
    assert s3.read(f"{folder_of(entry)}/{SIGNATURE}") == left  # kept, never replaced
    listed = s3.index()["models"]["add"]["u55-128"][entry.key]["signature"]
    assert listed["sha256"] == hashlib.sha256(left).hexdigest() and listed["size"] == len(left)
    search, notes = fetch(s3.url, "u55-128", ci.public)
    assert search.found is not None, notes
    assert (search.found.entry.manifest.verification or {})["signature"]["key"] == ci.fingerprint

    with signed_entries([other], stranger.private) as [foreign]:
        s3.write(f"{folder_of(other)}/{SIGNATURE}", foreign.signature.path.read_bytes())  # type: ignore[attr-defined]
    monkeypatch.setenv("ZOO_PUBLISH_ATTEMPTS", "1")
    with signed_entries([other], ci.private) as signed, pytest.raises(PublishConflict, match="already holds other bytes"):
        publish(s3.url, *signed)
    assert set(s3.index()["models"]["add"]) == {"u55-128"}


# 5. A remote that cannot be used is skipped, in one line that says why.

def test_a_missing_bucket_or_endpoint_is_named(source: dict[str, Entry], s3: S3Bucket,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    missing = f"s3://no-such-{uuid.uuid4().hex[:12]}/zoo"
    search, notes = fetch(missing)
    assert search.found is None
    [line] = notes
    assert line.startswith(f"{missing}: the bucket 'no-such-") and "does not exist" in line
    assert line.endswith("; skipping this remote"), line
    with pytest.raises(RemoteError, match=r"does not exist \(zoo never creates one"):
        publish(missing, source["u55-128"])

    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("ZOO_HTTP_RETRIES", "0")
    search, notes = fetch(s3.url)
    assert search.found is None
    [line] = notes
    assert line.startswith(f"reading {s3.url}/index.json: cannot reach the endpoint"), line
    assert "zooTestSecretNeverPrinted" not in line


# 6. Ray's results through S3 (--ray-results): the worker's and the driver's halves, without the cluster.

def test_ray_results_handed_over_through_s3_come_back_byte_identical(fake_compile: FakeCompile, s3: S3Bucket) -> None:
    from zoo.registry.build_units.handover import hand_over, handed_over, results_remote, take_over
    from zoo.registry.build_units.run import run_unit
    from zoo.registry.build_units.unit import BuildUnit, BuiltArtifact, UnitFailure, UnitTarget

    request = Zoo().request("add", "u55-128")
    unit = BuildUnit(model="add", weights=request.weights.name, targets=(UnitTarget(request.target, request.key_inputs()),))
    [built] = run_unit(unit).outcomes
    assert isinstance(built, BuiltArtifact)
    url = results_remote(s3.url)
    handed = hand_over(run_unit(unit), url, node="ray node 10.0.0.2 (ffffffff)")
    assert handed_over(handed.outcomes[0])
    assert set(s3.index()["models"]["add"]["u55-128"]) == {built.manifest.key}
    [back] = take_over(handed, url).outcomes
    assert isinstance(back, BuiltArtifact) and back.files == built.files

    # Every hash rewritten to match a flipped bit: a remote fetch alone would take it, the worker's manifest does not.
    tamper_pte(s3.read, s3.write, "add", "u55-128")
    [refused] = take_over(handed, url).outcomes
    assert isinstance(refused, UnitFailure) and refused.error == "IntegrityError"
    assert refused.message == (f"add → ethos-u55-128: ethos-u55-128's manifest.json at --ray-results {url} is not the "
                               "one its worker built (other sha256); it was altered there and nothing of it was "
                               "cached: build it again, and check who else writes there")


def test_a_missing_bucket_for_ray_results_is_refused_before_any_unit_starts(fake_compile: FakeCompile, s3: S3Bucket) -> None:
    pytest.importorskip("ray")
    missing = f"s3://no-such-{uuid.uuid4().hex[:12]}/results"
    started = time.perf_counter()
    with pytest.raises(UsageError, match=rf"^--ray-results {missing}: cannot be used \({missing}: the bucket 'no-such-"):
        Zoo().fetch_outcomes(["add"], ["u55-128"], ray_results=missing, force_build=True)
    assert fake_compile.calls == []
    assert time.perf_counter() - started < 10
