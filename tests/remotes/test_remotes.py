"""Publishing and fetching through real remotes on loopback: a directory, the
standard library's http.server, and a test Hub driven by the real
huggingface_hub client. The CLI runs in fresh interpreters, also as a light
install (no torch on the path at all).

Artifacts (add and mnist for u55-128, add for portable) compile once per session.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import yaml

from tests.hub_server import HubTestServer
from tests.remotes.conftest import BUILDS, HF_TOKEN, cache_is_clean, entry_files, run_checked
from tests.remotes.helpers import (
    artifact_dir,
    cached_entry,
    load_index,
    record,
    rewrite_manifest,
    save_index,
    store_variant,
)
from tests.remotes.servers import StaticServer, serve_directory
from zoo import Zoo
from zoo._errors import PublishConflict
from zoo._units import human_bytes

pytestmark = pytest.mark.compile

KINDS = ("directory", "http", "hf")
REPO = "team/ethos-zoo"


@contextmanager
def remote_of(kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[tuple[str, str]]:
    """(where to publish, where to fetch from) for one kind of remote."""
    if kind == "hf":
        request.getfixturevalue("hub")
        yield f"hf://{REPO}", f"hf://{REPO}"
        return
    share = tmp_path / "share"
    if kind == "directory":
        yield str(share), f"file://{share}"
        return
    share.mkdir()
    with serve_directory(share) as url:
        yield str(share), url


def fetch(model: str, target: str, remote: str, cache: Path, *extra: str, light: Path | None = None,
          env: dict[str, str] | None = None):  # type: ignore[no-untyped-def]
    return run_checked("fetch", model, "-t", target, "--no-build", "--remote", remote, "--json", *extra,
                       env={"ZOO_CACHE_DIR": str(cache), **(env or {})}, light_site=light)


@pytest.mark.parametrize("kind", KINDS)
def test_publish_delete_fetch_gives_identical_bytes_without_torch(
    kind: str, source_cache: Path, light: Path, tmp_path: Path, request: pytest.FixtureRequest,
) -> None:
    with remote_of(kind, tmp_path, request) as (to, remote):
        pub = run_checked("publish", "--all", "--to", to, env={"ZOO_CACHE_DIR": str(source_cache)})
        assert pub.returncode == 0, pub.stderr
        assert pub.stdout.count("published ") == len(BUILDS)
        for install, site in (("full", None), ("light", light)):
            cache = tmp_path / f"cache-{install}"
            for model, target in BUILDS:
                r = fetch(model, target, remote, cache, light=site)
                assert r.returncode == 0, r.stderr
                assert r.loaded == [], f"{install} fetch imported {r.loaded}"
                art = json.loads(r.stdout)
                assert art["source"] == "remote"
                assert entry_files(cache, art["key"]) == entry_files(source_cache, art["key"])
                assert Path(art["pte"]).read_bytes() == cached_entry(source_cache, art["manifest"]["model"],
                                                                      art["manifest"]["target"]).file("pte").read_bytes()  # type: ignore[union-attr]
                if install == "light":
                    assert "no compile stack, so any toolchain is accepted" in r.stderr
            again = fetch("mnist", "u55-128", remote, cache, light=site)
            assert again.returncode == 0 and json.loads(again.stdout)["source"] == "cache", again.stderr


def test_hub_publish_is_one_commit_with_a_model_card(source_cache: Path, hub: HubTestServer, tmp_path: Path) -> None:
    pub = run_checked("publish", "--all", "--to", f"hf://{REPO}", env={"ZOO_CACHE_DIR": str(source_cache)})
    assert pub.returncode == 0, pub.stderr
    repo = hub.state.repos[REPO]
    assert len(repo.log) == 1, "one publish, one commit"
    assert HF_TOKEN not in pub.stdout + pub.stderr
    commits = [i for i, (m, p) in enumerate(hub.state.requests) if m == "POST" and p.endswith("/commit/main")]
    assert hub.state.auth_seen[commits[0]] == f"Bearer {HF_TOKEN}"  # the token came from HF_TOKEN
    assert hub.state.unknown == []

    files = hub.files(REPO)
    card = files["README.md"].decode()
    meta = yaml.safe_load(card.split("---\n")[1])
    assert meta["library_name"] == "executorch"
    assert {"ethos-u", "ethos-u55-128"} <= set(meta["tags"])
    index = json.loads(files["index.json"])
    for model, slugs in index["models"].items():
        for slug, keys in slugs.items():
            for key, rec in keys.items():
                pte = next(f for f in rec["files"] if f["kind"] == "pte")
                assert pte["sha256"] in card
                assert files[f"{model}/{slug}/{key}/{pte['name']}"] == (cached_entry(
                    source_cache, model, rec["target"]).path / pte["name"]).read_bytes()
    assert f"zoo fetch mnist --target ethos-u55-128 --weights mnist --remote hf://{REPO}" in card
    mnist = cached_entry(source_cache, "mnist", "ethos-u55-128").manifest.vela_total
    assert mnist is not None and human_bytes(mnist.sram_bytes) in card  # as the fetch summary shows it

    again = run_checked("publish", "--all", "--to", f"hf://{REPO}", env={"ZOO_CACHE_DIR": str(source_cache)})
    assert again.returncode == 0 and again.stdout.count("already ") == len(BUILDS)
    assert len(repo.log) == 1, "publishing what is there makes no commit"


def test_hub_revision_is_pinned(source_cache: Path, hub: HubTestServer, tmp_path: Path) -> None:
    env = {"ZOO_CACHE_DIR": str(source_cache)}
    assert run_checked("publish", "add", "-t", "u55-128", "--to", f"hf://{REPO}", env=env).returncode == 0
    first = hub.state.repos[REPO].branches["main"]
    assert run_checked("publish", "mnist", "-t", "u55-128", "--to", f"hf://{REPO}", env=env).returncode == 0
    old = fetch("mnist", "u55-128", f"hf://{REPO}@{first}", tmp_path / "c1")
    assert old.returncode == 1 and f"hf://{REPO}@{first}: has no mnist for ethos-u55-128" in old.stderr
    new = fetch("mnist", "u55-128", f"hf://{REPO}", tmp_path / "c2")
    assert new.returncode == 0, new.stderr
    paths = [p for m, p in hub.state.requests if m == "GET" and "mnist_u55-128.pte" in p]
    assert paths and all(f"/resolve/{hub.state.repos[REPO].branches['main']}/" in p for p in paths)


def test_hub_publish_refuses_when_the_repo_moved(source_cache: Path, hub: HubTestServer, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    import huggingface_hub.constants

    from zoo.registry.remotes import publish as publish_mod

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path / "hf-cache"))
    monkeypatch.setattr(huggingface_hub.constants, "ENDPOINT", hub.url)
    monkeypatch.setenv("ZOO_CACHE_DIR", str(source_cache))
    zoo = Zoo()
    zoo.publish(f"hf://{REPO}", model="add", target="u55-128", notice=lambda m: None)
    real_plan = publish_mod.plan

    def plan_then_someone_commits(*args, **kwargs):  # type: ignore[no-untyped-def]
        out = real_plan(*args, **kwargs)
        repo = hub.state.repos[REPO]
        hub.state.commit(repo, "main", {**hub.files(REPO), "other.txt": b"another publisher"}, "meanwhile")
        return out

    monkeypatch.setattr(publish_mod, "plan", plan_then_someone_commits)
    with pytest.raises(PublishConflict, match="changed while publishing"):
        zoo.publish(f"hf://{REPO}", model="mnist", target="u55-128", notice=lambda m: None)
    assert not any(p.startswith("mnist/") for p in hub.files(REPO))


# Tampering: each is rejected with a clear error and leaves the cache clean.

def _rejected(r, *needles: str, cache: Path) -> None:  # type: ignore[no-untyped-def]
    assert r.returncode == 1, r.stderr
    for needle in needles:
        assert needle in r.stderr, r.stderr
    assert cache_is_clean(cache)
    assert r.loaded == []


def test_one_byte_changed_in_a_pte(published_copy: Path, tmp_path: Path) -> None:
    _key, rec = record(published_copy, "mnist", "u55-128")
    pte = artifact_dir(published_copy, rec) / "mnist_u55-128.pte"
    data = bytearray(pte.read_bytes())
    data[len(data) // 2] ^= 0x01
    pte.write_bytes(bytes(data))
    r = fetch("mnist", "u55-128", str(published_copy), tmp_path / "cache")
    _rejected(r, "mnist_u55-128.pte has sha256", "altered or corrupt", cache=tmp_path / "cache")


def test_truncated_file_over_http(published_copy: Path, tmp_path: Path) -> None:
    _key, rec = record(published_copy, "mnist", "u55-128")
    header = artifact_dir(published_copy, rec) / "mnist_u55-128.h"
    header.write_bytes(header.read_bytes()[:1000])
    with serve_directory(published_copy) as url:
        r = fetch("mnist", "u55-128", url, tmp_path / "cache")
    _rejected(r, "mnist_u55-128.h is 1000 bytes, its manifest says", "truncated", cache=tmp_path / "cache")


def test_wrong_digest_in_the_index(published_copy: Path, tmp_path: Path) -> None:
    index = load_index(published_copy)
    key, _ = record(published_copy, "add", "u55-128")
    index["models"]["add"]["u55-128"][key]["manifest_sha256"] = "0" * 64
    save_index(published_copy, index)
    r = fetch("add", "u55-128", str(published_copy), tmp_path / "cache")
    _rejected(r, "manifest.json (checked against index.json) has sha256", "expected " + "0" * 64, cache=tmp_path / "cache")


@pytest.mark.parametrize("name", ["../mnist_u55-128.pte", "/etc/passwd", "sub/dir.pte", ".."])
def test_unsafe_file_name_in_a_manifest(published_copy: Path, tmp_path: Path, name: str) -> None:
    def rename(manifest):  # type: ignore[no-untyped-def]
        manifest["files"][0]["name"] = name

    rewrite_manifest(published_copy, "mnist", "u55-128", rename)
    r = fetch("mnist", "u55-128", str(published_copy), tmp_path / "cache")
    _rejected(r, f"names the file {name!r}", "inside its folder", cache=tmp_path / "cache")


def test_unsafe_manifest_path_in_the_index(published_copy: Path, tmp_path: Path) -> None:
    index = load_index(published_copy)
    key, rec = record(published_copy, "mnist", "u55-128")
    index["models"]["mnist"]["u55-128"][key]["manifest"] = "../outside/" + rec["manifest"]
    save_index(published_copy, index)
    r = fetch("mnist", "u55-128", str(published_copy), tmp_path / "cache")
    _rejected(r, "paths must stay inside the remote", cache=tmp_path / "cache")


def test_server_going_down_during_a_download(published: Path, tmp_path: Path) -> None:
    with StaticServer(published) as server:
        server.die_during = "mnist_u55-128.h"
        r = fetch("mnist", "u55-128", server.url, tmp_path / "cache", env={"ZOO_HTTP_RETRIES": "2"})
    _rejected(r, f"downloading {server.url}/mnist/u55-128/", "retrying in", "(tried 3 times)", "--no-build",
              cache=tmp_path / "cache")


def test_hub_tampered_pte_and_server_going_down(source_cache: Path, hub: HubTestServer, tmp_path: Path) -> None:
    assert run_checked("publish", "--all", "--to", f"hf://{REPO}", env={"ZOO_CACHE_DIR": str(source_cache)}).returncode == 0
    path = next(p for p in hub.files(REPO) if p.endswith("add_u55-128.pte"))
    data = bytearray(hub.files(REPO)[path])
    data[len(data) // 2] ^= 0x01
    hub.tamper(REPO, path, bytes(data))
    r = fetch("add", "u55-128", f"hf://{REPO}", tmp_path / "c1")
    _rejected(r, "add_u55-128.pte has sha256", cache=tmp_path / "c1")
    gets = [p for m, p in hub.state.requests if m == "GET" and p.endswith("add_u55-128.pte")]
    assert len(gets) == 2, "a bad copy is fetched once more past the Hub's cache before giving up"

    hub.state.die_during = next(p for p in hub.files(REPO) if p.endswith("mnist_u55-128.h"))
    r = fetch("mnist", "u55-128", f"hf://{REPO}", tmp_path / "c2", env={"HF_HUB_ETAG_TIMEOUT": "2"})
    _rejected(r, f"hf://{REPO} (downloading mnist/u55-128/", "--no-build", cache=tmp_path / "c2")


# Offline, retries, fallbacks.

def test_offline_never_touches_the_network(published: Path, source_cache: Path, hub: HubTestServer, tmp_path: Path) -> None:
    assert run_checked("publish", "--all", "--to", f"hf://{REPO}", env={"ZOO_CACHE_DIR": str(source_cache)}).returncode == 0
    before = hub.request_count()
    with StaticServer(published) as mirror:
        remotes = ["--remote", mirror.url, "--remote", f"hf://{REPO}"]
        cases = [
            (["--offline"], {}),
            ([], {"ZOO_OFFLINE": "1"}),
        ]
        for flags, env in cases:
            r = run_checked("fetch", "mnist", "-t", "u55-128", "--no-build", *remotes, *flags,
                            env={"ZOO_CACHE_DIR": str(tmp_path / "cache"), **env})
            assert r.returncode == 1 and r.stderr.count("skipped, offline") == 2, r.stderr
        (tmp_path / "zoo.toml").write_text(f'offline = true\nremotes = ["{mirror.url}", "hf://{REPO}", "{published}"]\n')
        r = run_checked("fetch", "mnist", "-t", "u55-128", "--no-build", "--json", env={"ZOO_CACHE_DIR": str(tmp_path / "cache")})
        assert r.returncode == 0, r.stderr  # the directory remote needs no network
        assert json.loads(r.stdout)["source"] == "remote"
        assert mirror.requests == []
    assert hub.request_count() == before
    (tmp_path / "zoo.toml").unlink()
    online = fetch("add", "u55-128", f"hf://{REPO}", tmp_path / "cache2")
    assert online.returncode == 0 and hub.request_count() > before  # the counter does count


def test_transient_errors_are_retried(published: Path, tmp_path: Path) -> None:
    with StaticServer(published) as server:
        server.fail_first = 2
        r = fetch("add", "u55-128", server.url, tmp_path / "cache")
    assert r.returncode == 0, r.stderr
    assert r.stderr.count("server error: HTTP 503; retrying in") == 2


def test_timeouts_name_the_url_and_the_limit(published: Path, tmp_path: Path) -> None:
    with StaticServer(published) as server:
        server.stall_s = 5
        r = fetch("add", "u55-128", server.url, tmp_path / "cache", env={"ZOO_HTTP_TIMEOUT": "0.5", "ZOO_HTTP_RETRIES": "0"})
    _rejected(r, f"reading {server.url}/index.json: timed out after 0.5 s (ZOO_HTTP_TIMEOUT)", cache=tmp_path / "cache")


def test_an_unreachable_remote_is_skipped_for_the_next(published: Path, tmp_path: Path) -> None:
    r = run_checked("fetch", "add", "-t", "u55-128", "--no-build", "--json", "--remote", "http://127.0.0.1:9",
                    "--remote", str(published), env={"ZOO_CACHE_DIR": str(tmp_path / "cache"), "ZOO_HTTP_RETRIES": "0"})
    assert r.returncode == 0, r.stderr
    assert "http://127.0.0.1:9/index.json: cannot connect" in r.stderr and "skipping this remote" in r.stderr


# Tool versions.

def test_other_toolchains_need_any_toolchain(source_cache: Path, published_copy: Path, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    foreign_cache = tmp_path / "foreign-cache"
    exact = cached_entry(source_cache, "mnist", "ethos-u55-128")
    foreign = store_variant(exact, foreign_cache, tools={"torch": "9.9.9"}, built_at="2099-01-01T00:00:00+00:00")
    monkeypatch.setenv("ZOO_CACHE_DIR", str(foreign_cache))
    only_foreign = tmp_path / "only-foreign"
    Zoo().publish(str(only_foreign), everything=True, notice=lambda m: None)
    Zoo().publish(str(published_copy), everything=True, notice=lambda m: None)

    r = fetch("mnist", "u55-128", str(only_foreign), tmp_path / "c1")
    assert r.returncode == 1 and "built with other tools (executorch 1.5.1, ethos-u-vela 5.1.0, torch 9.9.9)" in r.stderr
    assert "pass --any-toolchain" in r.stderr and cache_is_clean(tmp_path / "c1")

    r = fetch("mnist", "u55-128", str(only_foreign), tmp_path / "c1", "--any-toolchain")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["key"] == foreign.key
    assert "torch 9.9.9 (--any-toolchain; this install has" in r.stderr
    r = fetch("mnist", "u55-128", str(only_foreign), tmp_path / "c1", "--any-toolchain")
    assert json.loads(r.stdout)["source"] == "cache" and "using the cached mnist" in r.stderr

    # The exact key wins over a newer artifact built with other tools.
    r = fetch("mnist", "u55-128", str(published_copy), tmp_path / "c2", "--any-toolchain")
    assert r.returncode == 0 and json.loads(r.stdout)["key"] == exact.key, r.stderr


# Publishing only adds.

def test_publish_never_replaces_and_is_idempotent(source_cache: Path, published_copy: Path, tmp_path: Path) -> None:
    index_before = (published_copy / "index.json").read_bytes()
    again = run_checked("publish", "--all", "--to", str(published_copy), env={"ZOO_CACHE_DIR": str(source_cache)})
    assert again.returncode == 0 and again.stdout.count("already ") == len(BUILDS)
    assert (published_copy / "index.json").read_bytes() == index_before

    other = tmp_path / "other-cache"
    store_variant(cached_entry(source_cache, "add", "portable"), other, header_suffix=b"/* not the same */\n")
    store_variant(cached_entry(source_cache, "add", "ethos-u55-128"), other, tools={"torch": "9.9.9"})
    r = run_checked("publish", "--all", "--to", str(published_copy), env={"ZOO_CACHE_DIR": str(other)})
    assert r.returncode == 1
    assert "nothing was published, because publishing never replaces an artifact" in r.stderr
    assert "add for portable" in r.stderr
    assert (published_copy / "index.json").read_bytes() == index_before
    assert len(list((published_copy / "add" / "u55-128").iterdir())) == 1


def test_publish_recovers_from_a_half_done_publish(source_cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    share = tmp_path / "share"
    entry = cached_entry(source_cache, "add", "ethos-u55-128")
    orphan = share / "add" / "u55-128" / entry.key
    orphan.mkdir(parents=True)
    (orphan / "add_u55-128.pte").write_bytes(b"half")  # a publish died before the index was written
    monkeypatch.setenv("ZOO_CACHE_DIR", str(source_cache))
    Zoo().publish(str(share), model="add", target="u55-128", notice=lambda m: None)
    assert (orphan / "add_u55-128.pte").read_bytes() == (entry.path / "add_u55-128.pte").read_bytes()
    assert sorted(p.name for p in share.iterdir()) == [".zoo-publish.lock", "add", "index.json"]
    assert oct(os.stat(share / "index.json").st_mode & 0o777) == "0o644"
    assert oct(os.stat(orphan).st_mode & 0o777) == "0o755"


def test_publish_usage_errors(source_cache: Path, tmp_path: Path) -> None:
    env = {"ZOO_CACHE_DIR": str(source_cache)}
    r = run_checked("publish", "add", "-t", "u55-128", "--to", "http://127.0.0.1:9/zoo", env=env)
    assert r.returncode == 2 and "read-only http remote" in r.stderr
    r = run_checked("publish", "softmax", "-t", "u55-128", "--to", str(tmp_path / "x"), env=env)
    assert r.returncode == 2 and "softmax for ethos-u55-128 is not in the cache" in r.stderr
    r = run_checked("publish", "add", "-t", "u55-128", "--to", "hf://team/x", env={**env, "ZOO_OFFLINE": "1"})
    assert r.returncode == 2 and "offline mode is on" in r.stderr
    r = run_checked("publish", "add", "-t", "u55-128", env=env)
    assert r.returncode == 2 and "say where to publish" in r.stderr
