"""Issue 43, the command line: values that only looked valid are refused where they are read,
before any work, with an error that names the option and says what it takes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import run_probed
from zoo._text import printable
from zoo.cli.progress import StageReporter
from zoo.cli.table import render


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


# --- what a remote, an index or a model file says reaches the terminal escaped -------------------

TITLE_AND_CLEAR = "\x1b]0;pwned\x07\x1b[2J\x9b2J\r"


def _fetch_from_an_index_written_by(tmp_path: Path, written_by: str) -> str:
    """``zoo fetch``'s stderr from a remote whose index only a newer zoo reads, ``written_by`` it says."""
    share = tmp_path / "share"
    share.mkdir()
    (share / "index.json").write_text(json.dumps(
        {"schema": 1, "written_by": written_by, "readable_by": ">=99", "models": {}}))
    r = run_probed("fetch", "add", "-t", "u55-128", "--remote", str(share), "--no-build")
    assert r.returncode != 0
    return r.stderr


@pytest.mark.slow
def test_an_index_written_by_escape_sequences_is_shown_escaped(tmp_path: Path) -> None:
    stderr = _fetch_from_an_index_written_by(tmp_path, f"0.9{TITLE_AND_CLEAR}")
    assert not any(c in stderr for c in "\x1b\x07\x9b\r"), repr(stderr)
    assert r"written by zoo 0.9\x1b]0;pwned\x07\x1b[2J\x9b2J\r, says only zoo >=99" in stderr


BIDI = "\u202e\u2066\u200f\u061c\u200b\ufeff\u2028"  # an override, an isolate, marks, zero-width, a line separator


def test_an_index_written_by_bidi_controls_is_shown_escaped(tmp_path: Path) -> None:
    """A right-to-left override makes ``0.9\\u202e1.0 ,sdrawkcab`` read as other text on a terminal."""
    stderr = _fetch_from_an_index_written_by(tmp_path, f"0.9{BIDI}é→")
    assert not any(c in stderr for c in BIDI), ascii(stderr)
    assert r"written by zoo 0.9\u202e\u2066\u200f\u061c\u200b\ufeff\u2028é→, says only zoo >=99" in stderr


def test_printable_escapes_every_control_but_newline_and_tab() -> None:
    assert printable(f"a{TITLE_AND_CLEAR}\x00\x7f\x85b\n\tc é→") == r"a\x1b]0;pwned\x07\x1b[2J\x9b2J\r\x00\x7f\x85b" + "\n\tc é→"
    assert printable("one\ntwo\tthree", one_line=True) == r"one\ntwo\tthree"
    assert printable(f"x{BIDI}y\u00ad", one_line=True) == r"x\u202e\u2066\u200f\u061c\u200b\ufeff\u2028y\xad"


def test_a_table_cell_cannot_break_its_line_or_reach_the_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)
    table = render(("model", "description"), [("m", f"fine\nzoo: error: forged{TITLE_AND_CLEAR}")])
    assert table.splitlines()[2] == r"m      fine\nzoo: error: forged\x1b]0;pwned\x07\x1b[2J\x9b2J\r"


def test_the_progress_line_reads_no_markup_or_escape_from_a_stage() -> None:
    reporter = StageReporter("mnist [bold]")
    reporter.tty = True
    with reporter:
        reporter(f"download [red]index.json[/red]{TITLE_AND_CLEAR}", 1, 2)
        assert reporter._live is not None
        description = reporter._live.tasks[0].description
    assert description == r"mnist \[bold]: download \[red]index.json\[/red]\x1b]0;pwned\x07\x1b[2J\x9b2J\r"
