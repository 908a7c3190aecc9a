"""Failures are data: --keep-going, failure records in the cache, and how they are reported.

Fast tier: the real resolver, executor and cache with the fake compile
(tests/fake_compile.py), which fails where a test tells it to."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.fake_compile import FakeCompile
from zoo import Artifact, BuildError, Failure, UsageError, Zoo
from zoo.cli import main
from zoo.registry.store.cache import Cache

LOWERING = BuildError("add for portable: lowering failed in aten.add", stage="lower", operator="aten.add.Tensor")


def _cache(isolated: Path) -> Cache:
    return Cache(isolated / "cache")


def test_keep_going_builds_the_rest_and_returns_the_failure(fake_compile: FakeCompile, isolated: Path) -> None:
    fake_compile.fail_on["portable"] = LOWERING
    built, failed = Zoo().fetch_outcomes(["add"], ["u55-128", "portable"], keep_going=True)
    assert isinstance(built, Artifact) and built.source == "build"
    assert isinstance(failed, Failure)
    assert (failed.model, failed.target, failed.stage, failed.operator) == ("add", "portable", "lower", "aten.add.Tensor")
    assert failed.where == "lower (aten.add.Tensor)" and failed.recorded and failed.source == "build"
    assert failed.tools and "executorch" in failed.tools

    recorded = _cache(isolated).failure(failed.key)
    assert recorded is not None and recorded.message == LOWERING.args[0]
    assert list(_cache(isolated).keys()) == [built.key]  # a failure is never an entry


def test_a_recorded_failure_is_reported_without_compiling_again(fake_compile: FakeCompile) -> None:
    fake_compile.fail_on["portable"] = LOWERING
    Zoo().fetch_outcomes(["add"], ["portable"], keep_going=True)
    calls = len(fake_compile.calls)

    [again] = Zoo().fetch_outcomes(["add"], ["portable"], keep_going=True)
    assert isinstance(again, Failure) and again.source == "cache"
    with pytest.raises(BuildError, match=r"an earlier build failed and was recorded: .*'zoo build' tries again") as err:
        Zoo().fetch("add", "portable")
    assert err.value.stage == "lower" and err.value.operator == "aten.add.Tensor"
    assert len(fake_compile.calls) == calls


def test_build_tries_a_recorded_failure_again_and_success_clears_it(fake_compile: FakeCompile, isolated: Path) -> None:
    fake_compile.fail_on["portable"] = LOWERING
    [failed] = Zoo().fetch_outcomes(["add"], ["portable"], keep_going=True)
    assert isinstance(failed, Failure)
    del fake_compile.fail_on["portable"]

    art = Zoo().fetch("add", "portable", force_build=True)
    assert art.key == failed.key and art.source == "build"
    assert _cache(isolated).failure(failed.key) is None
    assert Zoo().fetch("add", "portable").source == "cache"


@pytest.mark.parametrize("stage", ["load", "calibration data loading", "numerical check", None])
def test_failures_that_depend_on_the_machine_are_not_recorded(
    fake_compile: FakeCompile, isolated: Path, stage: str | None
) -> None:
    fake_compile.fail_on["portable"] = BuildError("cannot download the weights", stage=stage)
    [failed] = Zoo().fetch_outcomes(["add"], ["portable"], keep_going=True)
    assert isinstance(failed, Failure) and not failed.recorded
    assert list(_cache(isolated).failures()) == []
    Zoo().fetch_outcomes(["add"], ["portable"], keep_going=True)
    assert len(fake_compile.calls) == 2


def test_without_keep_going_the_first_failure_stops_the_rest(fake_compile: FakeCompile, isolated: Path) -> None:
    fake_compile.fail_on["ethos-u55-128"] = BuildError("u55 lowering failed", stage="lower")
    with pytest.raises(BuildError, match="u55 lowering failed"):
        Zoo().fetch_many(["add"], ["u55-128", "portable"])
    assert [targets for _, targets in fake_compile.calls] == [["ethos-u55-128"]]
    assert list(_cache(isolated).keys()) == []


def test_fetch_many_with_keep_going_builds_everything_then_raises(fake_compile: FakeCompile, isolated: Path) -> None:
    fake_compile.fail_on["ethos-u55-128"] = BuildError("u55 lowering failed", stage="lower")
    with pytest.raises(BuildError, match="u55 lowering failed"):
        Zoo().fetch_many(["add"], ["u55-128", "portable"], keep_going=True)
    assert len(list(_cache(isolated).keys())) == 1  # portable was built and stored


def test_a_corrupt_failure_record_is_removed_and_the_build_runs(fake_compile: FakeCompile, isolated: Path) -> None:
    fake_compile.fail_on["portable"] = LOWERING
    [failed] = Zoo().fetch_outcomes(["add"], ["portable"], keep_going=True)
    path = _cache(isolated).failure_path(failed.key)
    path.write_text(json.dumps({"schema": 1, "model": 3}))
    del fake_compile.fail_on["portable"]

    said: list[str] = []
    art = Zoo().fetch("add", "portable", notice=said.append)
    assert art.source == "build" and not path.exists()
    assert any("failure record is unreadable (model must be a string)" in s for s in said), said


def test_cli_keep_going_prints_what_built_reports_what_failed_and_exits_1(fake_compile: FakeCompile) -> None:
    fake_compile.fail_on["portable"] = LOWERING
    result = CliRunner().invoke(main, ["build", "add", "-t", "u55-128,portable", "--keep-going"])
    assert result.exit_code == 1, result.output
    assert result.stdout.splitlines()[0].endswith(".pte")
    assert "failed: add for portable at lower (aten.add.Tensor): add for portable: lowering failed" in result.stderr
    assert "FAILED" in result.stderr and "1 of 2 build(s) failed" in result.stderr

    as_json = CliRunner().invoke(main, ["fetch", "add", "-t", "u55-128,portable", "--keep-going", "--json"])
    items = json.loads(as_json.stdout)
    assert items[0]["source"] == "cache"
    assert items[1]["failure"]["stage"] == "lower" and items[1]["failure"]["recorded"] is True


def test_cache_ls_shows_failures_and_prune_forgets_them(fake_compile: FakeCompile, isolated: Path) -> None:
    fake_compile.fail_on["portable"] = LOWERING
    Zoo().fetch_outcomes(["add"], ["u55-128", "portable"], keep_going=True)
    listed = CliRunner().invoke(main, ["cache", "ls"], env={"COLUMNS": "200"})  # the variant columns are wide
    assert "FAILED at lower (aten.add.Tensor)" in listed.stdout

    pruned = CliRunner().invoke(main, ["cache", "prune", "--failures"])
    assert pruned.exit_code == 0 and "removed 0 entries and 1 failure records" in pruned.stdout
    assert list(_cache(isolated).failures()) == [] and len(list(_cache(isolated).keys())) == 1


def test_across_models_a_weights_variant_some_lack_falls_back_to_their_default(fake_compile: FakeCompile) -> None:
    said: list[str] = []
    add, mnist = Zoo().fetch_outcomes(["add", "mnist"], ["portable"], weights="random", keep_going=True,
                                      notice=said.append)
    assert isinstance(add, Artifact) and add.manifest.weights == "none"
    assert isinstance(mnist, Failure) and mnist.weights == "random"  # the fake compile only has add
    assert "add has no 'random' weights: building with the model's default" in said

    with pytest.raises(UsageError, match="no weights variant 'nope'"):
        Zoo().fetch_outcomes(["add", "softmax"], ["portable"], weights="nope")
