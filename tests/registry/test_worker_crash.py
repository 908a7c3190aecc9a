"""A worker process that dies fails only its own unit; the others still build."""

from __future__ import annotations

from pathlib import Path

import pytest

from zoo import Failure, Zoo, ZooOptions


@pytest.mark.compile  # spawns workers that import the compile stack (~45 s)
def test_a_dying_worker_fails_only_its_own_unit(isolated: Path) -> None:
    zoo = Zoo(ZooOptions(plugins=("tests.crash_plugin",)))
    crashed, broken = zoo.fetch_outcomes(["crasher", "broken"], ["u55-128"], jobs=2, keep_going=True)
    assert isinstance(crashed, Failure) and isinstance(broken, Failure)
    assert "the worker process died" in crashed.message and not crashed.recorded
    assert broken.message.endswith("broken: no weights here") and broken.stage == "load"
    assert list(zoo.cache.failures()) == []
