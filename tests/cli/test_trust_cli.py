"""Issue 43, the command line: values that only looked valid are refused where they are read,
before any work, with an error that names the option and says what it takes."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import run_probed


@pytest.mark.parametrize("drop", ["nan", "inf", "-1", "-0.5", "1e999"])
def test_tune_refuses_a_max_drop_no_metric_could_have_before_it_searches(drop: str) -> None:
    r = run_probed("tune", "mnist", "-t", "u55-128", "--no-build", "--max-drop", f"top1={drop}")
    assert r.returncode == 2, r.stderr
    assert f"Invalid value for --max-drop: 'top1={drop}': max_drop must be a finite number ≥ 0" in r.stderr
    assert r.loaded == [], r.loaded


def test_a_recipe_nested_too_deeply_is_one_error_line_not_a_traceback(tmp_path: Path) -> None:
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    r = run_probed("fetch", "mnist", "-t", "u55-128", "--recipe", str(deep), "--no-build")
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert f"zoo: error: --recipe {deep}: nested too deeply to be a recipe" in r.stderr
    assert r.loaded == [], r.loaded
