"""The suite's own cost: what every pytest process, and every process it starts, pays before its work."""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

import pytest

from tests.bytecode import keep_bytecode
from tests.conftest import ROOT


def test_the_suite_loads_only_the_pytest_plugins_it_names(pytestconfig: pytest.Config) -> None:
    """The dependencies register pytest plugins the suite never uses (hypothesis's alone imports for most
    of a second); pyproject.toml turns autoloading off and names the one it needs."""
    installed = {ep.name for ep in entry_points(group="pytest11")}
    loaded = {name for name in installed if pytestconfig.pluginmanager.get_plugin(name) is not None}
    assert loaded == {"xdist"} & installed, sorted(loaded)


def test_under_pythondontwritebytecode_the_suite_keeps_its_bytecode_outside_the_tree() -> None:
    environ = {"PYTHONDONTWRITEBYTECODE": "1", "PATH": "/bin"}
    prefix = keep_bytecode(environ)
    assert prefix is not None and environ == {"PATH": "/bin", "PYTHONPYCACHEPREFIX": prefix}
    assert not Path(prefix).resolve().is_relative_to(ROOT), prefix
    assert keep_bytecode({"PYTHONDONTWRITEBYTECODE": "1", "PYTHONPYCACHEPREFIX": "/elsewhere"}) == "/elsewhere"
    assert keep_bytecode({"PATH": "/bin"}) is None

    # This worker and a process it starts write bytecode, whatever the environment pytest was started in.
    child = subprocess.run([sys.executable, "-c", "import sys; print(sys.dont_write_bytecode)"],
                           capture_output=True, text=True, check=True)
    assert not sys.dont_write_bytecode and child.stdout.strip() == "False"
