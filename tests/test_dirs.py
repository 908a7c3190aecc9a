"""zoo's own reading of the user's folders equals platformdirs' in every case it answers."""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs
import pytest

from zoo import _dirs

pytestmark = pytest.mark.fast

CASES = {
    "no XDG variables": {},
    "absolute XDG variables": {"XDG_CACHE_HOME": "/x/cache", "XDG_CONFIG_HOME": "/x/config", "XDG_STATE_HOME": "/x/st"},
    "empty XDG variables": {"XDG_CACHE_HOME": "", "XDG_CONFIG_HOME": "", "XDG_STATE_HOME": ""},
    "relative XDG variables (ignored)": {"XDG_CACHE_HOME": "c", "XDG_CONFIG_HOME": "./cfg", "XDG_STATE_HOME": "s"},
    "HOME with a trailing slash": {"HOME": "/home/someone/"},
    "HOME the root": {"HOME": "/"},
    "relative HOME (platformdirs decides)": {"HOME": "relative/home"},
}
PAIRS = [(_dirs.user_cache_dir, platformdirs.user_cache_dir), (_dirs.user_config_dir, platformdirs.user_config_dir),
         (_dirs.user_state_dir, platformdirs.user_state_dir)]


@pytest.mark.parametrize("env", CASES.values(), ids=CASES.keys())
def test_same_folders_as_platformdirs(env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", "/home/someone")
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    for ours, theirs in PAIRS:
        assert ours() == theirs("zoo"), (ours.__name__, env)


def test_the_usual_case_needs_no_platformdirs(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> str:
        raise AssertionError("platformdirs was asked")

    monkeypatch.setenv("HOME", "/home/someone")
    for name in ("XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME"):
        monkeypatch.delenv(name, raising=False)
    for ours, theirs in PAIRS:
        monkeypatch.setattr(platformdirs, theirs.__name__, refuse)
        assert ours().startswith("/home/someone/.")


# --- issue 55: ZOO_CACHE_DIR and the XDG folders with odd values ---------------------------------


def _cache_path() -> str:
    from click.testing import CliRunner

    from zoo.cli import main

    r = CliRunner().invoke(main, ["cache", "path"])
    return r.output.strip() if r.exit_code == 0 else f"exit {r.exit_code}: {r.output.strip()}"


def test_an_empty_zoo_cache_dir_is_unset(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("ZOO_CACHE_DIR", "")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert _cache_path() == str(tmp_path / "xdg" / "zoo")


def test_a_relative_zoo_cache_dir_is_made_absolute(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The firmware's CMake runs in its own folder: a relative RUNTIME_CACHE would land there."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ZOO_CACHE_DIR", "rel/cache")
    assert _cache_path() == str(tmp_path / "rel" / "cache")


def test_a_tilde_is_the_home_folder(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("ZOO_CACHE_DIR", "~")
    assert _cache_path() == str(tmp_path)


@pytest.mark.parametrize(("value", "message"), [
    (" ", "ZOO_CACHE_DIR is ' ', only spaces: name a folder, or leave it unset for the default"),
    ("~nosuchuser55/cache", "ZOO_CACHE_DIR is '~nosuchuser55/cache': ~nosuchuser55 names no user on this machine, "
                            "so the ~ cannot be expanded; give the folder's absolute path"),
])
def test_a_zoo_cache_dir_that_can_only_be_a_mistake_is_refused(monkeypatch: pytest.MonkeyPatch, value: str,
                                                               message: str) -> None:
    monkeypatch.setenv("ZOO_CACHE_DIR", value)
    assert _cache_path() == f"exit 2: zoo: error: {message}"


def test_a_file_for_a_cache_folder_is_refused(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("")
    monkeypatch.setenv("ZOO_CACHE_DIR", str(tmp_path / "afile" / "sub"))
    from zoo import Zoo, ZooError

    with pytest.raises(ZooError, match=r"cannot be used: .*afile is not a folder\. Point ZOO_CACHE_DIR"):
        Zoo().fetch("add", "u55-128", build=False, remotes=())


def test_a_non_utf8_cache_folder_and_state_folder_work(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                       fake_compile: object) -> None:
    from zoo import Zoo
    from zoo.registry.store.cache import Cache

    odd = os.fsdecode(bytes(tmp_path) + b"/caf\xe9-\xff")  # Latin-1, not UTF-8: surrogates in Python
    monkeypatch.setenv("ZOO_CACHE_DIR", odd)
    monkeypatch.setenv("XDG_STATE_HOME", odd + "-state")
    art = Zoo().fetch("add", "u55-128", remotes=(), out_dir=Path(odd + "-out"))
    assert os.fsencode(art.pte).startswith(bytes(tmp_path) + b"/caf\xe9-\xff-out/")
    entry = Cache(Zoo().cache_dir).get(art.key)
    assert entry is not None and entry.sealed


def test_a_state_folder_that_cannot_be_made_seals_nothing_and_says_why(monkeypatch: pytest.MonkeyPatch,
                                                                       tmp_path: Path, fake_compile: object) -> None:
    from click.testing import CliRunner

    from zoo import Zoo
    from zoo.cli import main

    (tmp_path / "state").write_text("a file where a folder should be")
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    Zoo().fetch("add", "u55-128", remotes=())
    r = CliRunner().invoke(main, ["cache", "verify"])
    said = " ".join(r.output.split())
    assert r.exit_code == 0 and "UNSEALED zoo can neither read nor make this user's key" in said, said
    assert f"({tmp_path / 'state' / 'zoo' / 'snapshot.key'})" in said
