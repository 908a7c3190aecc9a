"""zoo's own reading of the user's folders equals platformdirs' in every case it answers."""

from __future__ import annotations

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
