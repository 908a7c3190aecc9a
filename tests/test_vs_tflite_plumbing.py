"""benchmarks/vs_tflite.py's plumbing (issue 59): an aborted TensorFlow process is named by its
signal and stage, and the side-by-side table holds both flows' cycles and metrics. No TensorFlow,
no build: the benchmark itself is run by hand (docs/measured.md)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from benchmarks import _tflite_convert as helper
from benchmarks import vs_tflite
from benchmarks._vs_tflite_table import stage_seconds
from benchmarks.vs_tflite import Side, VelaRun


def test_a_tflite_process_that_aborts_is_named_by_its_signal_and_stage() -> None:
    """resnet18's .tflite aborts TensorFlow Lite in allocate_tensors: no JSON, status -6."""
    script = ("import os, sys; print('zoo-stage: onnx2tf', file=sys.stderr, flush=True); "
              "print('zoo-stage: running the .tflite', file=sys.stderr, flush=True); os.abort()")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    info = vs_tflite.helper_result(proc.returncode, proc.stdout, proc.stderr)
    assert info["error"].startswith("the TFLite process was killed by SIGABRT (status -6) while running the .tflite")
    assert info["stage"] == "running the .tflite"
    assert "zoo-stage" not in info["error"]


def test_a_helper_result_is_its_last_json_line() -> None:
    assert vs_tflite.helper_result(0, 'log\n{"bytes": 3}\n', "") == {"bytes": 3}
    info = vs_tflite.helper_result(2, "", "")
    assert info["error"].startswith("the TFLite process exited with status 2 and no result before its first stage")


def _side(label: str, cycles: int, top1: float | None) -> Side:
    total = {"total_cycles": cycles, "sram_bytes": 2048, "off_chip_flash_bytes": 10240, "on_chip_flash_bytes": 0,
             "dram_bytes": 0, "inference_time_ms": cycles / 5e5}
    metrics = [] if top1 is None else [{"name": "top1", "unit": "%", "higher_is_better": True, "max_drop": 1.0,
                                        "float": 97.5, "program": top1, "samples": 1000, "dataset": "evaluation"}]
    return Side(label, vela=VelaRun(total, [], []), metrics=metrics)


def test_the_side_by_side_table_holds_both_flows_cycles_and_metrics() -> None:
    rows = [{"model": "mnist", "target": "u55-128", "weights": "mnist", "best": _side("zoo", 900, 97.5),
             "defaults": Side("zoo defaults", error=vs_tflite.NOT_BUILT), "tflite": _side("TFLite int8", 1000, 97.4)}]
    table = vs_tflite.markdown(rows)
    row = next(line for line in table.splitlines() if line.startswith("| mnist | u55-128 | 900"))
    assert row == ("| mnist | u55-128 | 900 / 1,000 (0.900) | 2.0 / 2.0 | 10.0 / 10.0 | top1 (1000) "
                   "| 97.50 % / 97.50 % | 97.50 % / 97.40 % | +0.00 / +0.10 |")
    assert "not built" in table and "could not be built" not in table  # --no-defaults is no failure


def test_a_tflite_output_is_put_back_in_onnxs_layout() -> None:
    nhwc = np.arange(2 * 3 * 4 * 5, dtype=np.float32).reshape(2, 3, 4, 5)
    assert np.array_equal(helper._onnx_layout(nhwc, (2, 5, 3, 4)), nhwc.transpose(0, 3, 1, 2))
    assert helper._onnx_layout(nhwc[0, 0], (4, 5)) is not None
    detail = {"quantization": (0.5, -3), "dtype": np.int8}
    q = helper._quantize(np.array([0.0, 1.0, 100.0, -100.0]), detail)
    assert q.tolist() == [-3, -1, 127, -128]
    assert helper._dequantize(q, detail).tolist() == [0.0, 1.0, 65.0, -62.5]


def test_the_recipe_column_is_the_fastest_recipe_within_the_drop() -> None:
    recipes = [
        {"model": "mnist", "target": "u55-128", "transform": "-", "qat": 0, "cycles": 900, "passed": True},
        {"model": "mnist", "target": "u55-128", "transform": "palette8", "qat": 0, "cycles": 500, "passed": False},
        {"model": "mnist", "target": "u55-128", "transform": "palette16", "qat": 0, "cycles": 600, "passed": True,
         "flash_bytes": 5120, "dram_bytes": 0, "metric": "top1", "int8": 97.3},
    ]
    assert vs_tflite.best_recipe(recipes, "mnist", "u85-256") is None
    rows = [{"model": "mnist", "target": "u55-128", "weights": "mnist", "best": _side("zoo", 900, 97.5),
             "defaults": Side("zoo defaults", error=vs_tflite.NOT_BUILT), "tflite": _side("TFLite int8", 1000, 97.4)}]
    table = vs_tflite.side_by_side(rows, recipes)
    assert table.splitlines()[-1].endswith("| +0.00 / +0.10 | palette16: 600 (0.600), 5.0 KiB, top1 97.30 |")


def test_the_recipe_column_names_a_recipe_built_nhwc() -> None:
    recipes = [{"model": "har-cnn-spar", "target": "u85-256", "transform": "sparse24", "qat": 2000, "layout": "nhwc",
                "cycles": 800, "passed": True, "flash_bytes": 2048, "dram_bytes": 0, "metric": "top1", "int8": 85.5}]
    rows = [{"model": "har-cnn-spar", "target": "u85-256", "weights": "har", "best": _side("zoo", 900, 86.4),
             "defaults": Side("zoo defaults", error=vs_tflite.NOT_BUILT), "tflite": _side("TFLite int8", 1000, 86.4)}]
    table = vs_tflite.side_by_side(rows, recipes)
    assert table.splitlines()[-1].endswith("| sparse24, 2000 QAT steps, NHWC: 800 (0.800), 2.0 KiB, top1 85.50 |")


def test_the_recipe_column_gives_a_roc_auc_its_four_places() -> None:
    """ad-autoencoder-spar's palette8 keeps 0.9535 of float's 0.9544 ROC-AUC (allowed drop 0.02): 0.95 hid it."""
    recipes = [{"model": "ad-autoencoder-spar", "target": "u55-128", "transform": "palette8", "qat": 0, "cycles": 500,
                "passed": True, "flash_bytes": 1024, "dram_bytes": 0, "metric": "reconstruction_roc_auc",
                "int8": 0.95352}]
    zoo_side, tfl = _side("zoo", 900, None), _side("TFLite int8", 1000, None)
    zoo_side.metrics = [{"name": "reconstruction_roc_auc", "unit": "", "higher_is_better": True, "max_drop": 0.02,
                         "float": 0.9544, "program": 0.9545, "samples": 478, "dataset": "evaluation"}]
    rows = [{"model": "ad-autoencoder-spar", "target": "u55-128", "weights": "spar", "best": zoo_side,
             "defaults": Side("zoo defaults", error=vs_tflite.NOT_BUILT), "tflite": tfl}]
    table = vs_tflite.side_by_side(rows, recipes)
    assert table.splitlines()[-1].endswith("| palette8: 500 (0.500), 1.0 KiB, reconstruction_roc_auc 0.9535 |")


def test_each_side_says_where_its_seconds_went() -> None:
    """A slow comparison (PP-OCR's detector) names its slow stage: zoo's build by the stages
    ``compile_targets`` reports, the TensorFlow venv's process by the stages it announces."""
    from benchmarks._vs_tflite_zoo import StageClock

    clock = StageClock()
    for stage in ("load", "export", "verify", "load"):
        clock(stage, None, None)
    assert list(clock.seconds) == ["load", "export", "verify"]  # the second load adds to the first
    assert [part.split(" ")[0] for part in clock.text().split(", ")] == ["load", "export", "verify"]

    tf_clock = helper._Clock()
    tf_clock.start("onnx2tf")
    tf_clock.start("TFLiteConverter")
    assert list(tf_clock.lap()) == ["onnx2tf", "TFLiteConverter"]


def test_vela_runs_a_grouped_conv_2d_as_one_conv2d_per_group(tmp_path: Path) -> None:
    """ppocr-rec's .tflite: onnx2tf writes a depthwise convolution of strides 2×1 as a grouped CONV_2D
    (filter depth 1), which Vela 5.1.0 runs as one Conv2D per group; a depthwise one stays one operator."""
    from benchmarks._vs_tflite_groups import grouped_convolutions, split_notes
    from benchmarks._vs_tflite_vela import run_vela
    from tests.tflite.graphs import OP, Graph, options

    rng = np.random.default_rng(3)
    g = Graph()

    def q(*shape: int) -> tuple[list[float], list[int], int]:
        return [0.02] * shape[0], [0] * shape[0], 0

    def weights(*shape: int) -> int:
        return g.tensor(shape, "int8", rng.integers(-100, 100, shape).astype(np.int8), quant=q(*shape))

    def bias(n: int) -> int:
        return g.tensor([n], "int32", rng.integers(-50, 50, n).astype(np.int32), quant=([0.0008] * n, [0] * n, 0))

    act = ([0.05], [0], 0)
    x = g.input([1, 10, 12, 8], "int8", quant=act)
    (grouped,) = g.op(OP.CONV_2D, [x, weights(8, 3, 3, 1), bias(8)], [[1, 4, 10, 8]],
                      *options("Conv2DOptions", padding=1, strideW=1, strideH=2), out_dtype="int8", out_quant=act)
    g.outputs = g.op(OP.DEPTHWISE_CONV_2D, [grouped, weights(1, 3, 3, 8), bias(8)], [[1, 2, 8, 8]],
                     *options("DepthwiseConv2DOptions", padding=1, strideW=1, strideH=1, depthMultiplier=1),
                     out_dtype="int8", out_quant=act)
    tflite = tmp_path / "grouped.tflite"
    tflite.write_bytes(g.to_bytes())

    (conv,) = grouped_convolutions(tflite)
    assert (conv.groups, conv.kernel, conv.strides, conv.ifm, conv.ofm) == (8, (3, 3), (2, 1), (1, 10, 12, 8), (1, 4, 10, 8))
    assert conv.macs == 4 * 10 * 8 * 9
    run = run_vela(tflite, ["--accelerator-config", "ethos-u55-128"], tmp_path / "vela")
    assert [x.op for x in run.layers if x.name == conv.output] == ["Conv2D"] * 8
    assert [x.op for x in run.layers if x.name != conv.output] == ["DepthwiseConv2D"]
    notes = split_notes([conv], run.layers)
    assert notes[0].startswith("grouped CONV_2D, 8 groups, 3×3, stride 2×1, IFM 1×10×12×8: Vela runs 8 Conv2D, ")
    assert notes[1].startswith("1 grouped CONV_2D: 8 of the program's 8 Conv2D and ")


def test_the_trained_models_table_is_the_benchmarks_own_output() -> None:
    """docs/measured.md's table of the trained models against the TFLite flow is ``--table``'s rendering
    of the committed runs' rows and the weight recipes' (benchmarks/results/), never typed."""
    rows = vs_tflite.joined_rows(vs_tflite.TRAINED_RESULTS)
    docs = (vs_tflite.ROOT / "docs" / "measured.md").read_text(encoding="utf-8")
    assert vs_tflite.side_by_side(rows, json.loads(vs_tflite.RECIPES.read_text())) in docs
    assert vs_tflite.stage_table(rows) in docs  # --stages: where each comparison's seconds went


def test_the_stage_table_reads_each_runs_seconds_by_stage() -> None:
    zoo, tfl = _side("zoo", 900, 97.5), _side("TFLite int8", 1000, 97.4)
    zoo.notes.append("seconds by stage, all targets: load 22 s, lower 553 s, verify 569 s, vela ethos-u55-128 3 s; "
                     "Vela's rerun for u55-128 2 s")
    tfl.notes.append("seconds by stage in the TensorFlow venv: onnx2tf 63 s, onnx2tf again, with "
                     "--output_signaturedefs 56 s, TFLiteConverter 18 s")
    tfl.seconds = 140.4
    assert stage_seconds(tfl.notes, "seconds by stage in the TensorFlow venv") == {
        "onnx2tf": 63, "onnx2tf again, with --output_signaturedefs": 56, "TFLiteConverter": 18}
    row = {"model": "ppocr-rec", "weights": "rapidocr", "best": zoo, "tflite": tfl,
           "defaults": Side("zoo defaults", error=vs_tflite.NOT_BUILT)}
    rows = [{**row, "target": "u55-128", "seconds": 1442.0}, {**row, "target": "u65-256", "seconds": 1442.0},
            {**row, "target": "u85-256", "seconds": 700.0}]  # a second run of the same model
    assert vs_tflite.stage_table(rows).splitlines()[2:] == [
        "| ppocr-rec | u55-128, u65-256 | 1,442 | 1,147 | 553 | 569 | 140 | 119 |",
        "| ppocr-rec | u85-256 | 700 | 1,147 | 553 | 569 | 140 | 119 |"]


def test_joined_runs_hold_each_comparison_once(tmp_path: Path) -> None:
    row = {"model": "mnist", "target": "u55-128", "weights": "mnist", "best": _side("zoo", 900, 97.5),
           "defaults": Side("zoo defaults", error=vs_tflite.NOT_BUILT), "tflite": _side("TFLite int8", 1000, 97.4)}
    first, second = tmp_path / "a.json", tmp_path / "b.json"
    first.write_text(json.dumps(vs_tflite.rows_json([row])))
    second.write_text(json.dumps(vs_tflite.rows_json([{**row, "target": "u85-256"}])))
    assert [r["target"] for r in vs_tflite.joined_rows([first, second])] == ["u55-128", "u85-256"]
    with pytest.raises(SystemExit, match="mnist on u55-128 is in an earlier file too"):
        vs_tflite.joined_rows([first, first])


def test_every_recipe_stands_against_the_tflite_flows_program() -> None:
    """Issue 59's model × NPU × recipe table: each recipe row's cycles and flash over the TFLite program's,
    a failed check said so, and no row for a target the runs did not compare."""
    zoo, tfl = _side("zoo", 900, 97.5), _side("TFLite int8", 1000, 97.4)
    row = {"model": "mnist", "target": "u85-256", "weights": "mnist", "best": zoo, "tflite": tfl,
           "defaults": Side("zoo defaults", error=vs_tflite.NOT_BUILT)}
    recipe = {"model": "mnist", "target": "u85-256", "transform": "sparse24", "qat": 300, "learning_rate": 0.01,
              "layout": "nhwc", "cycles": 750, "flash_bytes": 1024, "dram_bytes": 0, "metric": "top1", "float": 97.5,
              "int8": 95.0, "max_drop": 1.0, "passed": False, "fine_tune_s": 61.2, "fine_tune_cpu_s": 50.4}
    other = {**recipe, "target": "u55-128", "transform": "palette16", "qat": 0}
    lines = vs_tflite.recipe_table([row], [recipe, other]).splitlines()
    flash = vs_tflite.flash_bytes(tfl.vela.total)
    assert lines[2:] == [f"| mnist | u85-256 | sparse24, 300 steps at lr 0.01, NHWC | 750 (0.750) | 1.0 ({1024 / flash:.3f}) "
                         "| top1 97.50 → 95.00 (drop ≤ 1) | 97.40 | no | 61 s, 50 CPU s |"]


def test_the_every_recipe_table_is_the_benchmarks_own_output() -> None:
    rows = vs_tflite.joined_rows(vs_tflite.TRAINED_RESULTS)
    docs = (vs_tflite.ROOT / "docs" / "measured.md").read_text(encoding="utf-8")
    assert vs_tflite.recipe_table(rows, json.loads(vs_tflite.RECIPES.read_text())) in docs
