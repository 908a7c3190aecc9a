"""Listing commands: output, exit codes, and never importing the heavy stack."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.conftest import run_probed, run_zoo
from zoo.cli import main


@pytest.mark.parametrize(
    "args",
    [["--help"], ["--version"], ["list"], ["list", "--json"], ["info", "mv2"], ["info", "mnist", "--json"],
     ["targets"], ["targets", "--json"], ["plugins"], ["plugins", "--json"], ["cache", "ls"], ["cache", "path"]],
)
def test_light_commands_never_import_the_heavy_stack(args: list[str]) -> None:
    proc = run_probed(*args)
    assert proc.returncode == 0, proc.stderr
    assert proc.loaded == [], proc.loaded


def test_list_filters_with_a_glob() -> None:
    result = CliRunner().invoke(main, ["list", "mobilenet*", "--json"])
    assert result.exit_code == 0, result.output
    assert [m["name"] for m in json.loads(result.stdout)] == ["mobilenet-v3-large", "mobilenet-v3-small", "mv2"]


def test_list_table_fits_the_terminal() -> None:
    result = CliRunner().invoke(main, ["list"], terminal_width=80, env={"COLUMNS": "80"})
    assert result.exit_code == 0
    assert all(len(line) <= 80 for line in result.stdout.splitlines()), result.stdout
    wide = CliRunner().invoke(main, ["list"], terminal_width=200, env={"COLUMNS": "200"})
    assert "description" in wide.stdout.splitlines()[0]  # narrow terminals lose it, wide ones keep it


def test_info_shows_inputs_weights_and_labels() -> None:
    result = CliRunner().invoke(main, ["info", "mobilenet_v2", "--json"])
    data = json.loads(result.stdout)
    assert data["name"] == "mv2"
    assert data["inputs"][0]["shape"] == [1, 3, 224, 224]
    assert {w["name"] for w in data["weights"]} >= {"IMAGENET1K_V1", "random"}
    assert data["labels"] == 1000


def test_info_shows_the_metrics_the_data_and_the_declared_figures() -> None:
    result = CliRunner().invoke(main, ["info", "mnist"])
    assert result.exit_code == 0, result.output
    assert "evaluation:  1000 labelled samples" in result.stdout
    assert "metric:      top1 (higher is better; int8 may lose at most 1 pp)" in result.stdout
    assert "declared: top1 97.5%" in result.stdout
    data = json.loads(CliRunner().invoke(main, ["info", "mnist", "--json"]).stdout)
    assert data["metrics"] == [{"name": "top1", "unit": "%", "higher_is_better": True, "max_drop": 1.0,
                                "description": "top-1 on the 1,000 held-out digits of the evaluation set"}]
    assert data["weights"][0]["reference"] == {"top1": 97.5}
    plain = CliRunner().invoke(main, ["info", "add"]).stdout
    assert "evaluation:  none" in plain and "none declared: --verify judges it by the elementwise checks alone" in plain


def test_unknown_model_exits_2_with_suggestion() -> None:
    proc = run_zoo("info", "mnsit")
    assert proc.returncode == 2
    assert "unknown model 'mnsit'" in proc.stderr and "Did you mean: mnist" in proc.stderr


def test_unknown_target_exits_2_before_compiling() -> None:
    proc = run_zoo("fetch", "mnist", "--target", "u55-100")
    assert proc.returncode == 2
    assert "unknown target 'u55-100'" in proc.stderr and "u55-128" in proc.stderr


@pytest.mark.slow
def test_invalid_memory_mode_is_refused_before_compiling() -> None:
    proc = run_zoo("fetch", "mnist", "--target", "u55-128", "--memory-mode", "Dedicated_Sram")
    assert proc.returncode == 2
    assert "valid choices: Sram_Only, Shared_Sram" in proc.stderr


def test_targets_json_lists_every_accelerator_and_preset() -> None:
    data = json.loads(CliRunner().invoke(main, ["targets", "--json"]).stdout)
    names = {t["name"] for t in data["targets"]}
    assert {"ethos-u55-32", "ethos-u85-2048", "portable", "corstone-300", "corstone-320", "alif-e8", "imx93"} <= names
    assert "Dedicated_Sram" not in data["families"]["u55"]["memory_modes"]
    alif = next(t for t in data["targets"] if t["name"] == "alif-e8")
    assert alif["source"] == "built-in" and "Ethos-U55-128" in alif["description"] and "alif-e8-u85" in alif["description"]
    assert "description" not in next(t for t in data["targets"] if t["name"] == "ethos-u55-128")


def test_targets_shows_each_presets_description_memories_and_source(tmp_path: Path) -> None:
    """Issue 31: alif-e8 read as a bare u55-128, with no SRAM figure or description anywhere."""
    (tmp_path / "zoo.toml").write_text('[boards.my-board]\ntarget = "u55-64"\nsram = "256KiB"\n'
                                       'description = "our sensor board"\n')
    proc = run_zoo("targets", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    text = proc.stdout[proc.stdout.index("board presets:"):]
    assert "  alif-e8 (built-in): Alif Ensemble E8: the Ethos-U55-128" in text
    assert "ethos-u55-128, Ethos_U55_High_End_Embedded, Shared_Sram; SRAM not given (pass --sram-budget)" in text
    assert "  imx93 (built-in): NXP i.MX93" in text and "SRAM 640.0 KiB" in text
    assert f"  my-board ({tmp_path / 'zoo.toml'}): our sensor board" in text and "SRAM 256.0 KiB" in text


def test_bad_config_exits_2_naming_the_file(tmp_path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "zoo.toml").write_text("[boards.x]\ntarget = 3\n")
    proc = run_zoo("targets", cwd=tmp_path)
    assert proc.returncode == 2
    assert "zoo.toml: key 'boards.x.target'" in proc.stderr


def test_public_api_matches_all() -> None:
    import types

    import zoo

    # Everything public that `import zoo` offers, lazy names included, and nothing more.
    offered = {
        name for name in dir(zoo)
        if not name.startswith("_") and name != "annotations" and not isinstance(getattr(zoo, name), types.ModuleType)
    }
    assert offered == set(zoo.__all__) - {"__version__"}
    for name in zoo.__all__:
        assert getattr(zoo, name) is not None


# -- fitting the terminal (issue 31) ---------------------------------------------------------


def test_a_table_too_wide_leaves_out_columns_in_the_stated_order_and_says_so() -> None:
    from zoo.cli.table import render

    rows = [("mnist", "u55-128", "Ethos_U55_High_End_Embedded", "Shared_Sram", "3f0c9d2e71ab")]
    headers = ("model", "target", "system config", "memory mode", "key")
    text = render(headers, rows, width=50, drop=("key", "system config", "memory mode"))
    lines = text.splitlines()
    assert lines[0].split() == ["model", "target", "memory", "mode"]
    assert all(len(line) <= 50 for line in lines[:3])
    note = " ".join(lines[3:])
    assert note.startswith("(key, system config left out to fit 50 columns") and all(len(line) <= 50 for line in lines)
    assert "left out" not in render(headers, rows, width=200, drop=("key",))


def test_a_pipe_gets_whole_lines_and_a_terminal_its_width(monkeypatch: pytest.MonkeyPatch) -> None:
    from zoo.cli.table import render

    long = ("built 2026-11-26T08:37:31+00:00 on a machine far away " * 3).strip()
    monkeypatch.delenv("COLUMNS", raising=False)
    assert long in render(("what", "when"), [("x", long)])  # pytest's stdout is not a terminal
    monkeypatch.setenv("COLUMNS", "60")
    assert max(len(line) for line in render(("what", "when"), [("x", long)]).splitlines()) <= 60


def test_list_keeps_a_description_past_et_al() -> None:
    from zoo.cli.listing import first_sentence

    assert first_sentence("MTCNN's P-Net (Zhang et al. 2016) in facenet's layout. Trained on WIDER.") == \
        "MTCNN's P-Net (Zhang et al. 2016) in facenet's layout"
    assert first_sentence("Spoken digits, e.g. from FSDD. More.") == "Spoken digits, e.g. from FSDD"


def test_several_artifacts_list_one_pte_each_on_a_terminal_and_every_file_down_a_pipe(
    fake_compile: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)
    piped = CliRunner().invoke(main, ["fetch", "add", "-t", "u55-128,portable"])
    assert piped.exit_code == 0, piped.output
    files = piped.stdout.splitlines()
    assert len(files) > 2 and sum(f.endswith(".pte") for f in files) == 2
    shown = CliRunner().invoke(main, ["fetch", "add", "-t", "u55-128,portable"], env={"COLUMNS": "120"})
    assert shown.exit_code == 0, shown.output
    assert [f for f in shown.stdout.splitlines()] == [f for f in files if f.endswith(".pte")]
    assert "each .pte has its header, .s and I/O helpers beside it" in shown.stderr
