"""The suite's own cost: what every pytest process pays before its first test."""

from __future__ import annotations

from importlib.metadata import entry_points

import pytest


def test_the_suite_loads_only_the_pytest_plugins_it_names(pytestconfig: pytest.Config) -> None:
    """The dependencies register pytest plugins the suite never uses (hypothesis's alone imports for most
    of a second); pyproject.toml turns autoloading off and names the one it needs."""
    installed = {ep.name for ep in entry_points(group="pytest11")}
    loaded = {name for name in installed if pytestconfig.pluginmanager.get_plugin(name) is not None}
    assert loaded == {"xdist"} & installed, sorted(loaded)
