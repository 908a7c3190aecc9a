from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ZOO_ENV = ("ZOO_CONFIG", "ZOO_PLUGINS", "ZOO_LOAD_PLUGINS", "ZOO_STRICT_PLUGINS", "ZOO_OFFLINE", "ZOO_CACHE_DIR")


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """No test sees the user's config, cache or plugin settings."""
    for name in ZOO_ENV:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ZOO_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))
    monkeypatch.chdir(tmp_path)
    yield tmp_path


@pytest.fixture(scope="session")
def plugin_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """tests/plugin_dist installed for real (dist-info and entry points) into a private folder."""
    target = tmp_path_factory.mktemp("plugin-site")
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation",
         "--target", str(target), str(ROOT / "tests" / "plugin_dist")],
        check=True, capture_output=True,
    )
    return target


def run_zoo(*args: str, env: dict[str, str] | None = None, pythonpath: Path | None = None,
            cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """Run the real CLI in a fresh interpreter."""
    full_env = {k: v for k, v in os.environ.items()}
    if pythonpath is not None:
        full_env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(pythonpath), full_env.get("PYTHONPATH")]))
    full_env.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "zoo", *args], capture_output=True, text=True, env=full_env, cwd=cwd, timeout=600,
    )
