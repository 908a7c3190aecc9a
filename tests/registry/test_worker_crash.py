"""Model code that misbehaves fails only its own build: a worker process that dies (and
one that crashes in native code, which is recorded with its stage),
``sys.exit()`` in a model's code, and prints that would corrupt stdout."""

from __future__ import annotations

from pathlib import Path

import pytest

from zoo import Failure, Zoo, ZooOptions


@pytest.mark.compile  # spawns workers that import the compile stack (~45 s)
def test_a_dying_worker_fails_only_its_own_unit(isolated: Path) -> None:
    zoo = Zoo(ZooOptions(plugins=("tests.crash_plugin",)))
    crashed, segfaults, broken = zoo.fetch_outcomes(["crasher", "segfaults", "broken"], ["u55-128"], jobs=2,
                                                    keep_going=True)
    assert isinstance(crashed, Failure) and isinstance(segfaults, Failure) and isinstance(broken, Failure)
    assert "the worker process died: it exited with status 70 during load without returning a result" in crashed.message
    assert not crashed.recorded
    assert broken.message.endswith("broken: no weights here") and broken.stage == "load"
    # A fault in native code comes back the same for the same graph: recorded, with where it happened.
    assert "the worker process died: it crashed with SIGSEGV during export: a fault in native code" in segfaults.message
    assert segfaults.stage == "export" and segfaults.recorded
    assert [f.model for _, f, _ in zoo.cache.failures() if f is not None] == ["segfaults"]


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


@pytest.mark.compile  # spawns five workers that import the compile stack and build (~2 min)
def test_a_crash_fails_only_the_target_that_crashed_and_records_where(isolated: Path) -> None:
    zoo = Zoo(ZooOptions(plugins=("tests.stage_crash_plugin",)))
    crashed, sibling = zoo.fetch_outcomes(["vela-crash"], ["u55-128", "u55-256"], executor="processes",
                                          keep_going=True)
    # The sibling shares the unit (one lowering for the U55 family) but never crashed: it builds.
    assert isinstance(crashed, Failure) and not isinstance(sibling, Failure)
    assert sibling.manifest.target == "ethos-u55-256"
    # Where it died is what the worker wrote before it entered the stage, not its last progress event.
    assert "crashed with SIGSEGV during vela" in crashed.message
    assert crashed.stage == "vela" and crashed.recorded
    (check,) = zoo.fetch_outcomes(["check-crash"], ["u55-128"], executor="processes", verify=True,
                                  keep_going=True)
    # The numerical check's data is not in the key: its crash is reported, never recorded.
    assert isinstance(check, Failure) and "crashed with SIGSEGV during verify" in check.message
    assert not check.recorded
    assert [(f.model, f.target) for _, f, _ in zoo.cache.failures() if f is not None] == [("vela-crash", "ethos-u55-128")]
