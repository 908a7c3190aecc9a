"""The default remote: the catalogue the project publishes for this version, tried
where zoo.toml names no remotes, with the release key pinned in the package.

No catalogue is published for the version under test, so every test here sees the
case a fresh install meets before its release: a refused connection (the tests'
HF_ENDPOINT, see tests/conftest.py) or a Hub without the version's tag.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.conftest import Probed, run_zoo
from tests.hub_server import HubTestServer
from tests.remotes.conftest import run_checked
from tests.remotes.servers import TrickleServer
from zoo import Zoo
from zoo._version import __version__
from zoo.registry.remotes.default import KEY_FILE, PROBE_TIMEOUT_S, REPO, DefaultRemote

URL = f"hf://{REPO}@v{__version__}"


def test_the_default_is_this_versions_tag_trusting_the_pinned_key(isolated: Path) -> None:
    [remote] = Zoo().remotes()
    assert isinstance(remote, DefaultRemote) and remote.url == URL and remote.revision == f"v{__version__}"
    assert remote.trusted_keys == (KEY_FILE,)
    assert not remote.guards_cache, "the release key decides what comes from it, not what else is cached"


def test_the_pinned_key_is_a_p256_public_key_shipped_with_the_package() -> None:
    from cryptography.hazmat.primitives.asymmetric import ec

    from zoo.registry.remotes.signing import load_public_key

    assert KEY_FILE.parent.name == "data" and KEY_FILE.parent.parent.name == "registry"  # package data
    assert isinstance(load_public_key(KEY_FILE).curve, ec.SECP256R1)


def test_remotes_in_zoo_toml_offline_and_remote_leave_it_out(isolated: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (isolated / "zoo.toml").write_text("remotes = []\n")
    assert Zoo().remotes() == []
    (isolated / "zoo.toml").write_text(f'remotes = ["{isolated / "share"}"]\n')
    assert [r.kind for r in Zoo().remotes()] == ["directory"]
    (isolated / "zoo.toml").unlink()
    assert [r.url for r in Zoo().remotes(["share"])] == ["share"]
    monkeypatch.setenv("ZOO_OFFLINE", "1")
    assert Zoo().remotes() == []


def test_trusted_keys_given_replace_the_pinned_one_and_guard_the_cache(isolated: Path) -> None:
    key = isolated / "mine.pub"
    key.write_bytes(KEY_FILE.read_bytes())
    [remote] = Zoo().remotes(trusted_keys=[key])
    assert remote.trusted_keys == (key,) and remote.guards_cache


@pytest.mark.slow
def test_unreachable_it_costs_one_line_and_the_fetch_goes_on(isolated: Path, refusing_endpoint: str) -> None:
    args = ("fetch", "mnist", "-t", "u55-128", "--no-build")
    tried = run_checked(*args)
    (isolated / "zoo.toml").write_text("remotes = []\n")
    without = run_checked(*args)
    line = (f"zoo: {URL}: cannot reach {refusing_endpoint} (ConnectionRefusedError: [Errno 111] Connection refused); "
            "skipping this remote")
    assert tried.returncode == without.returncode == 1
    assert tried.stderr.splitlines()[0] == line
    # The same answer, plus the line; the final error says what each place had.
    assert tried.stderr.splitlines()[1:] == [
        e.replace("not in the cache; ", f"not in the cache; {line.removeprefix('zoo: ').removesuffix('; skipping this remote')}; ")
        for e in without.stderr.splitlines()
    ]
    assert tried.loaded == [] and "Traceback" not in tried.stderr


@pytest.mark.slow
def test_a_hub_without_the_versions_tag_says_no_catalogue_yet(hub: HubTestServer) -> None:
    r = run_checked("fetch", "add", "-t", "u55-128", "--no-build")
    assert r.returncode == 1
    assert r.stderr.splitlines()[0] == f"zoo: {URL}: no published catalogue for zoo {__version__} yet; skipping this remote"
    assert hub.request_count() == 1, "one HEAD, before the Hub client is loaded"
    assert r.loaded == [] and "Traceback" not in r.stderr


@pytest.mark.parametrize(("flags", "env"), [(["--offline"], {}), ([], {"ZOO_OFFLINE": "1"})])
@pytest.mark.slow
def test_offline_never_asks_it(hub: HubTestServer, flags: list[str], env: dict[str, str]) -> None:
    r = run_checked("fetch", "add", "-t", "u55-128", "--no-build", *flags, env=env)
    assert r.returncode == 1 and REPO not in r.stderr
    assert hub.request_count() == 0


# A status line and headers, a byte every 0.5 s: 20 s in all, and no read waits over 0.5 s.
TRICKLED = b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nX-Repo-Commit: " + b"0" * 40 + b"\r\n\r\n"
NO_PROXY_ENV = ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy", "NO_PROXY",
                "no_proxy")


def _missed_within_the_deadline(env: dict[str, str]) -> Probed:
    """A cache miss with the default remote: it must go on, with one line, within the probe's deadline."""
    given = {name.lower() for name in env}
    unset = {name: "" for name in NO_PROXY_ENV if name.lower() not in given}  # an empty http_proxy unsets HTTP_PROXY
    started = time.monotonic()
    r = run_checked("fetch", "add", "-t", "u55-128", "--no-build", env={**unset, **env})
    took = time.monotonic() - started
    assert r.returncode == 1 and "not in the cache" in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert took < PROBE_TIMEOUT_S + 3, f"the miss took {took:.1f} s"
    assert r.loaded == [], "the Hub client (and httpx) never loaded"
    return r


@pytest.mark.server
def test_a_server_that_trickles_its_answer_holds_a_miss_no_longer_than_the_deadline() -> None:
    with TrickleServer(TRICKLED, pause=0.5) as slow:
        r = _missed_within_the_deadline({"HF_ENDPOINT": slow.url})
    assert r.stderr.splitlines()[0] == (f"zoo: {URL}: cannot reach {slow.url} (no answer within {PROBE_TIMEOUT_S:g} s); "
                                        "skipping this remote")


@pytest.mark.server
@pytest.mark.parametrize("variable", ["HTTP_PROXY", "all_proxy"])
def test_a_proxy_is_honoured_and_one_that_never_answers_costs_the_deadline(variable: str, refusing_endpoint: str) -> None:
    with TrickleServer() as proxy:
        r = _missed_within_the_deadline({variable: proxy.url})
        assert proxy.connections == 1, "the probe went through the proxy"
    assert r.stderr.splitlines()[0] == (f"zoo: {URL}: cannot reach {refusing_endpoint} (no answer within "
                                        f"{PROBE_TIMEOUT_S:g} s through the proxy {proxy.url}); skipping this remote")


@pytest.mark.server
def test_no_proxy_sends_the_probe_around_the_proxy(refusing_endpoint: str) -> None:
    with TrickleServer() as proxy:
        r = _missed_within_the_deadline({"HTTP_PROXY": proxy.url, "NO_PROXY": "127.0.0.1"})
        assert proxy.connections == 0
    assert f"cannot reach {refusing_endpoint} (ConnectionRefusedError: [Errno 111] Connection refused)" in r.stderr


@pytest.mark.compile
def test_a_fresh_install_answers_as_before_plus_one_line(isolated: Path, refusing_endpoint: str) -> None:
    """The done-when of the release issue: a build where no catalogue is published is the same build."""
    runs = {}
    for name, config in (("default", None), ("none", "remotes = []\n")):
        folder = isolated / name
        folder.mkdir()
        if config:
            (folder / "zoo.toml").write_text(config)
        runs[name] = run_zoo("fetch", "add", "-t", "u55-128", "-o", "out", cwd=folder,
                             env={"ZOO_CACHE_DIR": str(folder / "cache")})
        assert runs[name].returncode == 0, runs[name].stderr
    default, none = (runs[k].stderr.splitlines() for k in ("default", "none"))
    assert len(default) == len(none) + 1 and default[0].startswith(f"zoo: {URL}: cannot reach {refusing_endpoint}")
    assert runs["default"].stdout.replace(str(isolated / "default"), "X") == runs["none"].stdout.replace(str(isolated / "none"), "X")
    assert (isolated / "default" / "out" / "add_u55-128.pte").read_bytes() == (isolated / "none" / "out" / "add_u55-128.pte").read_bytes()
