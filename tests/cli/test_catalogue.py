"""``zoo report --all``: the catalogue of every cached model × target, failures included.

Fast tier: the cells come from real cache entries and failure records made
through the resolver with the fake compile (tests/fake_compile.py)."""

from __future__ import annotations

import dataclasses
import json
from html.parser import HTMLParser
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.conftest import run_zoo
from tests.fake_compile import FakeCompile
from zoo import BuildError, Zoo
from zoo.cli import main
from zoo.cli.catalogue_render import cpu_ops, short_op
from zoo.registry.report import collect_catalogue


@pytest.fixture
def catalogue_cache(fake_compile: FakeCompile) -> None:
    """add built for u55-128; its portable build failed in lowering."""
    fake_compile.fail_on["portable"] = BuildError(
        "add for portable: lowering failed in aten.add", stage="lower", operator="aten.add.Tensor"
    )
    Zoo().fetch_outcomes(["add"], ["u55-128", "portable"], keep_going=True)


def test_the_catalogue_has_a_cell_per_model_and_target(catalogue_cache: None) -> None:
    zoo = Zoo()
    catalogue = collect_catalogue(zoo.cache, target_order=[t.name for t in zoo.targets.all_targets()])
    assert catalogue.models == [("add", "none")]
    assert catalogue.targets == ["ethos-u55-128", "portable"]
    model, weights = "add", "none"
    built = catalogue.cell(model, weights, "ethos-u55-128")
    failed = catalogue.cell(model, weights, "portable")
    assert built is not None and built.row is not None and built.failure is None
    assert built.row.inference_time_ms and built.row.npu_share == 1.0
    assert failed is not None and failed.row is None and failed.failure is not None
    assert failed.failure.where == "lower (aten.add.Tensor)"


@pytest.mark.slow
def test_a_models_own_report_lists_its_recorded_failures(catalogue_cache: None, tmp_path: Path) -> None:
    env = {"COLUMNS": "200"}
    text = CliRunner().invoke(main, ["report", "add"], env=env)
    assert text.exit_code == 0, text.output
    assert "ethos-u55-128" in text.output
    assert "FAILED on portable (weights none) at lower (aten.add.Tensor): add for portable: lowering failed" in text.output
    data = json.loads(CliRunner().invoke(main, ["report", "add", "--json"]).stdout)
    assert [r["target"] for r in data["rows"]] == ["ethos-u55-128"]
    assert [(f["target"], f["stage"], f["operator"]) for f in data["failures"]] == [("portable", "lower", "aten.add.Tensor")]
    page = tmp_path / "add.html"
    assert CliRunner().invoke(main, ["report", "add", "--html", str(page)]).exit_code == 0
    assert "<h2>Failed</h2>" in page.read_text() and "aten.add.Tensor" in page.read_text()


def test_a_models_report_fits_an_80_column_terminal_with_its_notes(fake_compile: FakeCompile) -> None:
    """The table was fitted to the terminal and the prose under it was not: at COLUMNS=80 issue 43 saw notes
    of 127 and 229 columns, one of them saying that columns were left out to fit 80."""
    fake_compile.fail_on["portable"] = BuildError(
        "add for portable: lowering failed in aten.add, since the operator's second input was broadcast along "
        "an axis the portable kernel does not take, and then the fallback refused it too", stage="lower",
        operator="aten.add.Tensor")
    Zoo().fetch_outcomes(["add"], ["u55-128", "portable"], keep_going=True)
    proc = run_zoo("report", "add", env={"COLUMNS": "80"})
    assert proc.returncode == 0, proc.stderr
    assert max(len(line) for line in proc.stdout.splitlines()) <= 80, proc.stdout
    said = " ".join(proc.stdout.split())
    assert "left out to fit 80 columns; a wider terminal, a pipe or --json shows them)" in said
    assert "FAILED on portable (weights none) at lower (aten.add.Tensor): add for portable: lowering failed" in said
    assert "These are Vela's estimates, not measurements" in said
    piped = run_zoo("report", "add", env={"COLUMNS": ""}).stdout  # a pipe: whole lines
    assert any(line.startswith("FAILED on portable") and line.endswith("refused it too") for line in piped.splitlines())


def test_a_model_that_only_failed_reports_the_failure_not_an_empty_cache(fake_compile: FakeCompile) -> None:
    fake_compile.fail_on["portable"] = BuildError("lowering failed", stage="lower", operator="aten.add.Tensor")
    Zoo().fetch_outcomes(["add"], ["portable"], keep_going=True)
    result = CliRunner().invoke(main, ["report", "add"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("nothing built\nFAILED on portable")


def test_the_cpu_column_says_what_the_firmware_runs_around_the_npu(catalogue_cache: None) -> None:
    zoo = Zoo()
    cell = collect_catalogue(zoo.cache, target_order=["ethos-u55-128"]).cell("add", "none", "ethos-u55-128")
    assert cell is not None and cell.row is not None
    row = cell.row
    assert (row.cpu_run, row.cpu_ops) == (3, 0)
    assert cpu_ops(row) == "3 I/O (de)quantize"
    assert cpu_ops(dataclasses.replace(row, cpu_run=0)) == "none"  # integer I/O: nothing left on the CPU
    fell_back = dataclasses.replace(row, cpu_run=4, cpu_ops=1, cpu_fallback=("aten.hardswish.default",))
    assert cpu_ops(fell_back) == "hardswish, 3 I/O (de)quantize"
    assert cpu_ops(dataclasses.replace(row, cpu_run=None)) == "-"  # a manifest that does not say


def test_report_all_as_text_and_json(catalogue_cache: None) -> None:
    text = CliRunner().invoke(main, ["report", "--all"])
    assert text.exit_code == 0, text.output
    lines = text.stdout.splitlines()
    # Grouped by task: each line starts with the model's registered task.
    assert any(line.split()[:2] == ["operator", "add"] and "ethos-u55-128" in line and "built" in line
               and "100% NPU" in line for line in lines), text.stdout
    # A float program: the CPU still quantizes add's two inputs and dequantizes its output.
    assert any(line.startswith("operator") and "3 I/O (de)quantize" in line and line.split()[-1] == "-"
               for line in lines), text.stdout
    assert any("portable" in line and "FAILED at lower (aten.add.Tensor)" in line for line in lines), text.stdout
    assert "2 model × target cells, 1 with a build; 1 failed build." in text.stdout

    data = json.loads(CliRunner().invoke(main, ["report", "--all", "--json"]).stdout)
    assert data["models"] == [{"model": "add", "weights": "none", "task": "operator"}]
    by_target = {c["target"]: c for c in data["cells"]}
    assert by_target["ethos-u55-128"]["status"] == "built"
    assert by_target["ethos-u55-128"]["artifact"]["inference_time_ms"] > 0
    assert by_target["portable"]["failure"]["operator"] == "aten.add.Tensor"
    assert [(f["target"], f["stage"]) for f in data["failures"]] == [("portable", "lower")]


class _Cells(HTMLParser):
    """The heat map's cells: (class, text)."""

    def __init__(self) -> None:
        super().__init__()
        self.cells: list[tuple[str, str]] = []
        self._in: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "td":
            self._in = dict(attrs).get("class") or ""
            self.cells.append((self._in, ""))

    def handle_data(self, data: str) -> None:
        if self._in is not None:
            cls, text = self.cells[-1]
            self.cells[-1] = (cls, text + data)

    def handle_endtag(self, tag: str) -> None:
        if tag == "td":
            self._in = None


def test_report_all_html_marks_the_failure_in_the_heat_map(catalogue_cache: None, tmp_path: Path) -> None:
    page = tmp_path / "catalogue.html"
    result = CliRunner().invoke(main, ["report", "--all", "--html", str(page)])
    assert result.exit_code == 0, result.output
    parser = _Cells()
    parser.feed(page.read_text(encoding="utf-8"))
    heat = parser.cells[:2]
    assert heat[0][0] == "t" and heat[0][1].strip()  # the u55-128 time, coloured
    assert heat[1] == ("failed", "✗ lower")
    assert "<script" not in page.read_text() and "http" not in page.read_text().split("<footer>")[0]


def test_report_needs_a_model_or_all(isolated: Path) -> None:
    result = CliRunner().invoke(main, ["report"])
    assert result.exit_code == 2 and "give a MODEL, or --all" in result.output
    empty = CliRunner().invoke(main, ["report", "--all"])
    assert empty.exit_code != 0 and "nothing cached" in empty.output


@pytest.mark.parametrize(
    ("name", "short"),
    [("aten::hardswish.out", "hardswish"), ("aten.hardswish.default", "hardswish"),
     ("quantized_decomposed::quantize_per_tensor.out", "quantize_per_tensor"), ("aten.add.Tensor", "add")],
)
def test_operator_names_are_shortened_for_the_table(name: str, short: str) -> None:
    assert short_op(name) == short



TASKS_PLUGIN = """
import dataclasses
from zoo import hookimpl
from zoo.plugins import add

@hookimpl
def register_models(register):
    register(dataclasses.replace(add.spec(), name="a-detector", task="object-detection"))
    register(dataclasses.replace(add.spec(), name="b-spotter", task="keyword-spotting"))
"""


def test_report_all_groups_models_by_task(fake_compile: FakeCompile, tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """issue 21 §4: models ordered by their registered task, then by name; the task leads each line."""
    (tmp_path / "tasks_plugin.py").write_text(TASKS_PLUGIN)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("ZOO_PLUGINS", "tasks_plugin")
    fake_compile.stand_ins = ("add", "a-detector", "b-spotter")
    Zoo().fetch_outcomes(["add", "a-detector", "b-spotter"], ["u55-128"], keep_going=True)
    zoo = Zoo()
    catalogue = collect_catalogue(zoo.cache, tasks={spec.name: spec.task for spec in zoo.models()})
    assert [m for m, _ in catalogue.models] == ["b-spotter", "a-detector", "add"]
    assert catalogue.task("a-detector") == "object-detection" and catalogue.task("add") == "operator"
    assert collect_catalogue(zoo.cache).task("add") == "(not registered)"
    text = CliRunner().invoke(main, ["report", "--all"]).stdout
    assert [line.split()[:2] for line in text.splitlines()[2:5]] == [
        ["keyword-spotting", "b-spotter"], ["object-detection", "a-detector"], ["operator", "add"]], text
