"""Model code that misbehaves fails only its own build: a worker process that dies,
``sys.exit()`` in a model's code, and prints that would corrupt stdout."""

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


@pytest.mark.compile  # imports the compile stack
def test_sys_exit_in_a_models_code_fails_its_build_and_prints_go_to_stderr(
    isolated: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    zoo = Zoo(ZooOptions(plugins=("tests.crash_plugin",)))
    exits, chatty = zoo.fetch_outcomes(["exits", "chatty"], ["u55-128"], keep_going=True)
    assert isinstance(exits, Failure) and exits.stage == "load" and "SystemExit" in exits.message
    assert isinstance(chatty, Failure) and chatty.message.endswith("chatty: no weights here")
    printed = capsys.readouterr()
    assert "chatty: building" in printed.err and "chatty" not in printed.out
