"""zoo.toml discovery, validation and environment overrides."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import run_zoo
from zoo import ConfigError
from zoo._config import cache_dir, find_config_file, load_config, parse_size


def test_found_in_parent_directory(tmp_path: Path) -> None:
    (tmp_path / "zoo.toml").write_text('default_target = "u85-256"\n')
    sub = tmp_path / "a" / "b"
    sub.mkdir(parents=True)
    assert find_config_file(sub) == tmp_path / "zoo.toml"


def test_user_config_dir_is_the_fallback(tmp_path: Path) -> None:
    user = tmp_path / "xdg-config" / "zoo"
    user.mkdir(parents=True)
    (user / "zoo.toml").write_text('default_target = "u65-256"\n')
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    assert find_config_file(elsewhere) == user / "zoo.toml"


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("cache_dirr = 'x'\n", "unknown key 'cache_dirr'"),
        ("offline = 'yes'\n", "key 'offline' must be true or false, got 'yes'"),
        ("[boards.x]\nsram = '2MiB'\n", "key 'boards.x.target' must be a target name"),
        ("[boards.x]\ntarget = 'u55-128'\nsram = 'lots'\n", "key 'boards.x.sram': expected a size"),
        ("[plugins]\nenabled = 'tiny'\n", "key 'plugins.enabled' must be a list of strings"),
        ("default_target = \n", "not valid TOML"),
    ],
)
def test_bad_config_names_file_and_key(tmp_path: Path, text: str, fragment: str) -> None:
    path = tmp_path / "zoo.toml"
    path.write_text(text)
    with pytest.raises(ConfigError) as err:
        load_config(path)
    assert str(path) in str(err.value)
    assert fragment in str(err.value)


def test_environment_overrides(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "zoo.toml"
    path.write_text('cache_dir = "from-config"\noffline = false\n')
    monkeypatch.delenv("ZOO_CACHE_DIR")
    assert cache_dir(load_config(path)) == tmp_path / "from-config"
    monkeypatch.setenv("ZOO_CACHE_DIR", str(tmp_path / "from-env"))
    monkeypatch.setenv("ZOO_OFFLINE", "1")
    cfg = load_config(path)
    assert cache_dir(cfg) == tmp_path / "from-env"
    assert cfg.offline is True


def test_sizes() -> None:
    assert parse_size("354KiB", where="x") == 354 * 1024
    assert parse_size("1.5 MiB", where="x") == int(1.5 * 1024 * 1024)
    assert parse_size(4096, where="x") == 4096


@pytest.mark.parametrize("size", ["1e400", "inf", "nan", "-1KiB", "0", "9e18GiB", 2**70])
def test_sizes_past_any_memory_are_refused_not_a_traceback(size: object) -> None:
    with pytest.raises(ConfigError, match=r"--sram-budget: expected a size such as '2MiB'"):
        parse_size(size, where="--sram-budget")


def test_the_cli_says_which_size_is_wrong() -> None:
    proc = run_zoo("fetch", "add", "-t", "u55-128", "--sram-budget", "1e400", "--no-build")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "zoo: error: --sram-budget: expected a size such as '2MiB' or a number of bytes, got '1e400'" in proc.stderr
