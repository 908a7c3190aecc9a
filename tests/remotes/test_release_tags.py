"""Releases on a Hugging Face Hub remote: ``zoo publish --release v0.1.0`` is one commit
on the branch, then the Hub tag ``v0.1.0`` on it. A published release never changes:
a tag that exists is refused before anything is uploaded, and zoo never publishes to
a tag. The real CLI and the real huggingface_hub client against the loopback test Hub;
the artifacts are ``add``'s, from the fake compile.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.conftest import Probed
from tests.fake_compile import FakeCompile
from tests.hub_server import HubTestServer, Repo
from tests.remotes.conftest import cache_is_clean, run_checked
from zoo import Zoo
from zoo._errors import PublishConflict, UsageError
from zoo.registry.remotes import parse_remote
from zoo.registry.remotes import publish as publish_mod
from zoo.registry.remotes.hub import HubRemote, release_tag
from zoo.registry.store.cache import Cache, Entry

REPO = "team/released-zoo"
HF = f"hf://{REPO}"
UPLOADS = ("/preupload/", "/commit/", "/tag/", "/api/repos/create")


@pytest.fixture
def source(fake_compile: FakeCompile, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A cache holding add for u55-128 and for portable; ZOO_CACHE_DIR is then an empty cache."""
    monkeypatch.setenv("ZOO_CACHE_DIR", str(tmp_path / "source-cache"))
    Zoo().fetch_many(["add"], ["u55-128", "portable"], notice=lambda m: None)
    monkeypatch.setenv("ZOO_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "source-cache"


def publish(source: Path, *args: str) -> Probed:
    """``zoo publish ARGS`` from ``source``, in a fresh interpreter that never loads the compile stack."""
    r = run_checked("publish", *args, env={"ZOO_CACHE_DIR": str(source)})
    assert r.loaded == [], r.loaded
    return r


def uploads(hub: HubTestServer, since: int = 0) -> list[tuple[str, str]]:
    """Every request from the ``since``-th on that writes to the Hub."""
    return [(m, p) for m, p in hub.state.requests[since:] if m == "POST" and any(u in p for u in UPLOADS)]


def entry(source: Path, target: str) -> Entry:
    return next(e for _k, e, _p in Cache(source).scan() if e is not None and e.manifest.target == target)


def released(hub: HubTestServer, source: Path, tag: str = "v0.1.0") -> Repo:
    """The repository after ``publish add -t u55-128 --release TAG`` to main."""
    r = publish(source, "add", "-t", "u55-128", "--to", HF, "--release", tag)
    assert r.returncode == 0, r.stderr
    return hub.state.repos[REPO]


@pytest.mark.slow
def test_a_release_is_a_tag_on_the_commit_of_the_publish(source: Path, hub: HubTestServer) -> None:
    r = publish(source, "add", "-t", "u55-128", "--to", HF, "--release", "v0.1.0", "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    repo = hub.state.repos[REPO]  # created by this publish
    commit = repo.log[-1][0]
    assert out["revision"] == commit == repo.branches["main"]
    assert out["release"] == {"tag": "v0.1.0", "commit": commit, "url": f"{HF}@v0.1.0"}
    assert repo.tags == {"v0.1.0": commit} and "v0.1.0" in repo.tag_messages["v0.1.0"]
    assert len(repo.log) == 1 and [p for p in repo.log[0][2] if p.endswith(".pte")]
    # The refs were read before anything was written; the tag came last.
    paths = [p for _m, p in hub.state.requests]
    assert paths.index(f"/api/models/{REPO}/refs") < paths.index("/api/repos/create")
    assert uploads(hub)[-1] == ("POST", f"/api/models/{REPO}/tag/{commit}")
    assert hub.state.unknown == []

    human = publish(source, "--all", "--to", HF, "--release", "v0.2.0")
    assert human.returncode == 0, human.stderr
    assert f"released   v0.2.0 at commit {repo.tags['v0.2.0'][:12]}: {HF}@v0.2.0" in human.stdout
    assert repo.tags["v0.2.0"] == repo.branches["main"] != commit


@pytest.mark.slow
def test_a_release_of_nothing_new_tags_the_head_of_the_branch(source: Path, hub: HubTestServer) -> None:
    assert publish(source, "--all", "--to", HF).returncode == 0
    repo = hub.state.repos[REPO]
    head, commits = repo.branches["main"], len(repo.log)
    r = publish(source, "--all", "--to", HF, "--release", "v1.0.0rc1", "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["revision"] is None and len(out["already"]) == 2
    assert out["release"]["commit"] == repo.tags["v1.0.0rc1"] == head
    assert len(repo.log) == commits


@pytest.mark.slow
def test_an_existing_release_is_refused_before_anything_is_uploaded(source: Path, hub: HubTestServer) -> None:
    repo = released(hub, source)
    tagged, commits, seen = repo.tags["v0.1.0"], len(repo.log), hub.request_count()
    # add for portable is new: without the check it would be uploaded.
    again = publish(source, "--all", "--to", HF, "--release", "v0.1.0")
    assert again.returncode == 1, again.stderr
    assert (f"zoo: error: {HF}: the release v0.1.0 exists already (a tag at commit {tagged[:12]}), and published "
            "releases are immutable; nothing was uploaded. Bump the version and publish again, "
            "e.g. --release v0.1.1") in again.stderr, again.stderr
    assert again.stdout == ""
    assert uploads(hub, seen) == [] and len(repo.log) == commits and repo.tags == {"v0.1.0": tagged}

    repo.branches["v0.2.0rc1"] = repo.branches["main"]  # a branch of that name is taken too
    branch = publish(source, "--all", "--to", HF, "--release", "v0.2.0rc1")
    assert branch.returncode == 1 and "the release v0.2.0rc1 exists already (a branch at commit" in branch.stderr
    assert "e.g. --release v0.2.0rc2" in branch.stderr
    assert uploads(hub, seen) == [] and len(repo.log) == commits and "v0.2.0rc1" not in repo.tags


@pytest.mark.slow
def test_a_release_is_read_at_its_tag_whatever_main_gets_later(source: Path, hub: HubTestServer, tmp_path: Path) -> None:
    repo = released(hub, source)
    tagged = repo.tags["v0.1.0"]
    assert publish(source, "add", "-t", "portable", "--to", HF).returncode == 0
    assert repo.branches["main"] != tagged and repo.tags["v0.1.0"] == tagged

    assert {(r.model, r.target) for r in parse_remote(f"{HF}@v0.1.0").read_index()} == {("add", "ethos-u55-128")}
    assert {r.target for r in parse_remote(HF).read_index()} == {"ethos-u55-128", "portable"}
    fetch = ("fetch", "add", "--no-build", "--json", "--remote", f"{HF}@v0.1.0")
    ok = run_checked(*fetch, "-t", "u55-128", env={"ZOO_CACHE_DIR": str(tmp_path / "c1")})
    assert ok.returncode == 0 and json.loads(ok.stdout)["source"] == "remote", ok.stderr
    pte = [p for m, p in hub.state.requests if m == "GET" and p.endswith("add_u55-128.pte")]
    assert pte and all(f"/resolve/{tagged}/" in p for p in pte), "downloads are pinned to the tag's commit"
    later = run_checked(*fetch, "-t", "portable", env={"ZOO_CACHE_DIR": str(tmp_path / "c2")})
    assert later.returncode == 1 and f"{HF}@v0.1.0: has no add for portable" in later.stderr
    assert cache_is_clean(tmp_path / "c2")

    with pytest.raises(Exception, match=r"has no revision 'v9\.9\.9'"):
        parse_remote(f"{HF}@v9.9.9").read_index()


@pytest.mark.slow
def test_publishing_to_a_tag_is_refused(source: Path, hub: HubTestServer) -> None:
    repo = released(hub, source)
    commits, seen = len(repo.log), hub.request_count()
    plain = publish(source, "--all", "--to", f"{HF}@v0.1.0")
    assert plain.returncode == 1
    assert (f"{HF}@v0.1.0 names the release tag v0.1.0, and published releases are immutable: zoo never publishes "
            f"to a tag; nothing was uploaded. To release more, publish to a branch with a new version: "
            f"--to {HF} --release v0.1.1") in plain.stderr, plain.stderr
    released_again = publish(source, "--all", "--to", f"{HF}@v0.1.0", "--release", "v0.2.0")
    assert released_again.returncode == 1 and "names the release tag v0.1.0" in released_again.stderr
    for url in (f"{HF}@v0.1.0", f"{HF}@refs/tags/v0.1.0"):
        with pytest.raises(PublishConflict, match="published releases are immutable"):
            parse_remote(url).put_site("_site", {"index.html": b"<html></html>"}, say=lambda m: None)
    assert uploads(hub, seen) == [] and len(repo.log) == commits and set(repo.tags) == {"v0.1.0"}


@pytest.mark.slow
def test_the_test_hub_refuses_a_commit_to_a_tag(source: Path, hub: HubTestServer) -> None:
    """What zoo's check keeps it from ever sending: the server side of the same rule."""
    from huggingface_hub import CommitOperationAdd, HfApi
    from huggingface_hub.errors import HfHubHTTPError

    repo = released(hub, source)
    with pytest.raises(HfHubHTTPError) as caught:
        HfApi(endpoint=hub.url).create_commit(REPO, [CommitOperationAdd(path_in_repo="x.txt", path_or_fileobj=b"x")],
                                              revision="v0.1.0", commit_message="onto a tag")
    assert caught.value.response.status_code == 400 and len(repo.log) == 1


@pytest.mark.slow
def test_a_tag_made_meanwhile_is_reported_and_left_alone(source: Path, hub: HubTestServer,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    assert publish(source, "add", "-t", "u55-128", "--to", HF).returncode == 0
    repo = hub.state.repos[REPO]
    theirs = repo.branches["main"]
    real_plan = publish_mod.plan

    def plan_then_someone_tags(*args, **kwargs):  # type: ignore[no-untyped-def]
        out = real_plan(*args, **kwargs)
        repo.tags["v0.1.0"] = theirs
        return out

    monkeypatch.setattr(publish_mod, "plan", plan_then_someone_tags)
    remote = parse_remote(HF)
    assert isinstance(remote, HubRemote)
    with pytest.raises(PublishConflict) as caught:
        remote.publish([entry(source, "portable")], say=lambda m: None, release="v0.1.0")
    ours = repo.branches["main"]
    assert ours != theirs and len(repo.log) == 2, "the commit stands"
    assert repo.tags == {"v0.1.0": theirs}, "the tag was not moved"
    assert (f"{HF}: the commit {ours[:12]} on main was made, but the tag v0.1.0 was created meanwhile by someone "
            f"else, so zoo did not tag it; nothing else changed. See what {HF}@v0.1.0 holds") in str(caught.value)


@pytest.mark.parametrize("tag", ["0.1.0", "v0.1", "v0.1.0-beta", "V1.0.0", "latest", "main", "v1.0.0rc", "v1.0.0 "])
def test_a_tag_must_be_a_version(tag: str) -> None:
    with pytest.raises(UsageError, match=re.escape("is not a version tag: give 'v' and a version, e.g. v0.1.0 or v1.2.3rc1")):
        release_tag(tag)


# Each would be a second tag for a release that exists as v0.1.0 (or v1.0.0rc1).
@pytest.mark.parametrize("tag", ["v0.1.0\n", "v0.1.0\r", "v00.1.0", "v0.01.0", "v0.1.00", "v01.0.0", "v1.0.0rc01"])
def test_a_tag_is_one_spelling_of_a_version(tag: str) -> None:
    with pytest.raises(UsageError, match=re.escape("e.g. v0.1.0 or v1.2.3rc1, with no leading zeros")):
        release_tag(tag)


@pytest.mark.parametrize("tag", ["v0.1.0", "v10.20.30", "v1.2.3rc1", "v2.0.0a1", "v2.0.0b12", "v0.0.0", "v1.0.0rc0"])
def test_version_tags(tag: str) -> None:
    assert release_tag(tag) == tag


@pytest.mark.slow
def test_bad_releases_are_usage_errors_that_touch_nothing(source: Path, hub: HubTestServer, tmp_path: Path) -> None:
    bad = publish(source, "--all", "--to", HF, "--release", "latest")
    assert bad.returncode == 2 and "--release 'latest' is not a version tag" in bad.stderr, bad.stderr
    share = tmp_path / "share"
    directory = publish(source, "--all", "--to", str(share), "--release", "v0.1.0")
    assert directory.returncode == 2, directory.stderr
    assert ("releases are tags of a Hugging Face Hub repository; "
            f"{share} is a directory remote: publish with --release to hf://ORG/REPO") in directory.stderr
    site_only = publish(source, "--to", HF, "--site", "--release", "v0.1.0")
    assert site_only.returncode == 2 and "--release publishes artifacts: give a MODEL or --all" in site_only.stderr
    assert not share.exists() and hub.request_count() == 0
