"""The Markdown tables of ``benchmarks/vs_tflite.py``: the per-model comparison (``markdown``) and issue 59's
side-by-side table of cycles, memory and metric (``side_by_side``, ``--table``), with the weight recipes'
column (``best_recipe``), and where each model's comparison spent its time (``stage_table``, ``--stages``)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from benchmarks._vs_tflite_layers import gap_share, top_layers
from benchmarks._vs_tflite_metrics import metric_text
from benchmarks._vs_tflite_sides import NOT_BUILT, Side
from benchmarks._vs_tflite_vela import flash_bytes
from benchmarks.weight_recipes import QAT_BEFORE

__all__ = ["best_recipe", "markdown", "recipe_table", "side_by_side", "stage_seconds", "stage_table", "time_ratio"]


def _ms(s: Side) -> str:
    return f"{s.vela.total['inference_time_ms']:.3f}" if s.vela else ("not built" if s.error == NOT_BUILT else "failed")


def time_ratio(s: Side, tfl: Side) -> str:
    if not (s.vela and tfl.vela):
        return "-"
    return f"{s.vela.total['inference_time_ms'] / tfl.vela.total['inference_time_ms']:.3f}"


def _both(best: Side, tfl: Side, figure: str) -> str:
    def one(s: Side) -> str:
        if s.vela is None:
            return "-"
        t = s.vela.total
        return {"cycles": f"{t['total_cycles']:,}", "sram": f"{t['sram_bytes'] / 1024:.1f}",
                "flash": f"{flash_bytes(t) / 1024:.1f}"}[figure]

    return f"{one(best)} / {one(tfl)}"


def markdown(rows: list[dict[str, Any]]) -> str:
    head = ("| model | target | weights | zoo best (ms) | zoo defaults (ms) | TFLite (ms) | best / TFLite "
            "| defaults / TFLite | cycles zoo best / TFLite | SRAM KiB zoo best / TFLite "
            "| flash KiB zoo best / TFLite | CPU ops zoo best / defaults / TFLite "
            "| layers fused with an activation on the TFLite side only: cycles zoo best − TFLite (share of the difference) "
            "| layers that differ most (cycles zoo best − TFLite) |")
    lines = [head, "|" + " --- |" * head.count(" | ") + " --- |"]
    if any(s.metrics for r in rows for s in (r["best"], r["tflite"])):
        lines = [side_by_side(rows), *lines]
    for r in rows:
        best, defaults, tfl = r["best"], r["defaults"], r["tflite"]
        lines.append(
            f"| {r['model']} | {r['target']} | {r['weights']} | {_ms(best)} | {_ms(defaults)} | {_ms(tfl)} "
            f"| {time_ratio(best, tfl)} | {time_ratio(defaults, tfl)} | {_both(best, tfl, 'cycles')} "
            f"| {_both(best, tfl, 'sram')} | {_both(best, tfl, 'flash')} "
            f"| {best.cpu_ops} / {defaults.cpu_ops} / {tfl.cpu_ops if tfl.vela else '-'} | {gap_share(best, tfl)} "
            f"| {top_layers(best, tfl)} |"
        )
    failed: dict[tuple[str, str, str], list[str]] = {}
    for r in rows:
        for s in (r["best"], r["defaults"], r["tflite"]):
            if s.error and s.error != NOT_BUILT:
                failed.setdefault((r["model"], s.label, _gist(s.error)), []).append(r["target"])
    if failed:
        lines += ["", "What could not be built or converted (the gist of its error):", ""]
        lines += [f"- {model} ({', '.join(targets)}), {label}: {gist}" for (model, label, gist), targets in failed.items()]
    return "\n".join(lines) + "\n"


def best_recipe(recipes: Sequence[dict[str, Any]], model: str, target: str) -> dict[str, Any] | None:
    """The fastest weight recipe of ``benchmarks/weight_recipes.py``'s rows for ``model`` on ``target``
    whose numerical check passed (its int8 metric within the model's declared drop)."""
    fit = [r for r in recipes if r.get("model") == model and r["target"] == target and r["transform"] != "-"
           and r.get("passed")]
    return min(fit, key=lambda r: r["cycles"]) if fit else None


def _recipe_cell(recipe: dict[str, Any] | None, tfl: Side, unit: str = "%") -> str:
    """The recipe's cycles, flash and int8 metric, the metric with as many places as its unit needs
    (a ROC-AUC's 0.9535 is not 0.95), as ``metric_text`` prints it."""
    if recipe is None:
        return "-"
    ratio = f" ({recipe['cycles'] / tfl.vela.total['total_cycles']:.3f})" if tfl.vela else ""
    tuned = f", {recipe['qat']} QAT steps" if recipe.get("qat") else ""
    tuned += ", NHWC" if recipe.get("layout") == "nhwc" else ""
    return (f"{recipe['transform']}{tuned}: {recipe['cycles']:,}{ratio}, {_recipe_flash(recipe) / 1024:.1f} KiB, "
            f"{recipe['metric']} {recipe['int8']:{'.2f' if unit == '%' else '.4f'}}")


def side_by_side(rows: list[dict[str, Any]], recipes: Sequence[dict[str, Any]] | None = None) -> str:
    """Issue 59's table: Vela's cycles, SRAM and flash of zoo's program (``--io int8``, NHWC where
    offered; zoo's default precision, no weight recipe) and of the TFLite flow's, and the model's
    metric in float and in each int8 program on the same evaluation set. With ``recipes``
    (``benchmarks/weight_recipes.py --json``), a column for the fastest recipe within the drop."""
    head = ("| model | target | cycles zoo / TFLite (ratio) | SRAM KiB zoo / TFLite | flash KiB zoo / TFLite "
            "| metric (samples) | float: zoo (torch) / TFLite flow (ONNX Runtime) | int8: zoo program / TFLite "
            "| drop zoo / TFLite |" + (" weight recipe within the drop: cycles (vs TFLite), flash, int8 |"
                                       if recipes is not None else ""))
    lines = [head, "|" + " --- |" * (head.count(" | ") + 1)]
    for r in rows:
        best, tfl = r["best"], r["tflite"]
        if best.vela and tfl.vela:
            b, t = best.vela.total["total_cycles"], tfl.vela.total["total_cycles"]
            cycles = f"{b:,} / {t:,} ({b / t:.3f})"
        else:
            cycles = f"{_both(best, tfl, 'cycles')} ({'no TFLite program' if not tfl.vela else 'no zoo program'})"
        m = (best.metrics or tfl.metrics or [{}])[0]
        name = f"{m['name']} ({m['samples']})" if m else "-"
        lines.append(
            f"| {r['model']} | {r['target']} | {cycles} | {_both(best, tfl, 'sram')} | {_both(best, tfl, 'flash')} "
            f"| {name} | {metric_text(best.metrics, 'float')} / {metric_text(tfl.metrics, 'float')} "
            f"| {metric_text(best.metrics, 'program')} / {metric_text(tfl.metrics, 'program')} "
            f"| {_drop(best.metrics)} / {_drop(tfl.metrics)} |"
            + (f" {_recipe_cell(best_recipe(recipes, r['model'], r['target']), tfl, m.get('unit', '%') if m else '%')} |"
               if recipes is not None else ""))
    return "\n".join(lines) + "\n"


def _recipe_flash(recipe: dict[str, Any]) -> int:
    """Where a recipe row's weights and command stream live: flash, or DRAM on a U65 (``flash_bytes``'s sum)."""
    return int(recipe.get("flash_bytes", 0) + recipe.get("dram_bytes", 0))


def _recipe_name(recipe: dict[str, Any]) -> str:
    name = "default" if recipe["transform"] == "-" else recipe["transform"]
    if recipe.get("qat"):
        name += f", {recipe['qat']} steps at lr {recipe.get('learning_rate', QAT_BEFORE):g}"
    return name + (", NHWC" if recipe.get("layout") == "nhwc" else "")


def recipe_table(rows: Sequence[dict[str, Any]], recipes: Sequence[dict[str, Any]]) -> str:
    """Issue 59's model × NPU × recipe table: every row of ``benchmarks/weight_recipes.py`` (zoo's default and
    each recipe, passed or not) whose model and target the runs compared with the TFLite flow, against that
    flow's program: cycles and flash (DRAM on a U65), the metric in float and in zoo's int8 program, the
    TFLite program's int8 metric, the check, and the fine-tuning's wall and CPU seconds."""
    head = ("| model | target | recipe | cycles (vs TFLite) | flash KiB (vs TFLite) | metric: float → int8 zoo "
            "| int8 TFLite | within the drop | fine-tuning |")
    lines = [head, "|" + " --- |" * (head.count(" | ") + 1)]
    for r in rows:
        tfl = r["tflite"]
        if not tfl.vela:
            continue
        cycles, flash = tfl.vela.total["total_cycles"], flash_bytes(tfl.vela.total)
        m = (tfl.metrics or [{}])[0]
        places = ".2f" if m.get("unit", "%") == "%" else ".4f"
        tfl_int8 = f"{m['program']:{places}}" if m else "-"
        for x in (x for x in recipes if (x["model"], x["target"]) == (r["model"], r["target"])):
            mine = _recipe_flash(x)
            tuned = (f"{x['fine_tune_s']:,.0f} s, {x['fine_tune_cpu_s']:,.0f} CPU s" if "fine_tune_cpu_s" in x
                     else f"{x['fine_tune_s']:,.0f} s") if x.get("qat") else "-"
            lines.append(
                f"| {r['model']} | {r['target']} | {_recipe_name(x)} | {x['cycles']:,} ({x['cycles'] / cycles:.3f}) "
                f"| {mine / 1024:.1f} ({mine / flash:.3f}) | {x['metric']} {x['float']:{places}} → {x['int8']:{places}} "
                f"(drop ≤ {x['max_drop']:g}) | {tfl_int8} | {'yes' if x['passed'] else 'no'} | {tuned} |")
    return "\n".join(lines) + "\n"


def _drop(metrics: list[dict[str, Any]]) -> str:
    if not metrics:
        return "-"
    m = metrics[0]
    drop = (m["float"] - m["program"]) if m.get("higher_is_better", True) else (m["program"] - m["float"])
    return f"{drop:+.2f}" if m.get("unit") == "%" else f"{drop:+.4f}"


_STAGES = re.compile(r"\s*(.+?) (\d+) s(?:,|$)")


def stage_seconds(notes: Sequence[str], prefix: str) -> dict[str, int]:
    """The seconds by stage a side's note starting with ``prefix`` lists (zoo's build: ``seconds by stage,
    all targets``; the TensorFlow venv's process: ``seconds by stage in the TensorFlow venv``)."""
    note = next((n for n in notes if n.startswith(prefix)), None)
    if note is None:
        return {}
    listed = note.split(": ", 1)[1].split(";")[0]
    return {stage: int(s) for stage, s in _STAGES.findall(listed)}


def stage_table(rows: Sequence[dict[str, Any]]) -> str:
    """Per model and run, the seconds its comparison took on all its targets and where they went: zoo's build
    (its lowering and numerical check named) and the TFLite flow's process (onnx2tf named)."""
    lines = ["| model | targets | in all (s) | zoo's build (s) | of which lowering | of which numerical check "
             "| TFLite flow (s) | of which onnx2tf |", "|" + " --- |" * 8]
    for model, seconds in dict.fromkeys((r["model"], r["seconds"]) for r in rows):  # one comparison: its rows share both
        mine = [r for r in rows if (r["model"], r["seconds"]) == (model, seconds)]
        best, tfl = mine[0]["best"], mine[0]["tflite"]
        zoo = stage_seconds(best.notes, "seconds by stage, all targets")
        tf = stage_seconds(tfl.notes, "seconds by stage in the TensorFlow venv")
        onnx2tf = sum(s for stage, s in tf.items() if stage.startswith("onnx2tf"))
        lines.append(f"| {model} | {', '.join(r['target'] for r in mine)} | {mine[0]['seconds']:,.0f} "
                     f"| {sum(zoo.values()):,} | {zoo.get('lower', 0):,} | {zoo.get('verify', 0):,} "
                     f"| {tfl.seconds:,.0f} | {onnx2tf:,} |")
    return "\n".join(lines) + "\n"


_NOISE = re.compile(r"^(WARNING|[IWE]\d{4} |Call arguments|•|File \"|in user code:|lambda |.*Exception encountered when calling)")


def _gist(error: str) -> str:
    """The first line of an error, and the last line before any traceback that says what went wrong
    (onnx2tf's first line only names the layer; TensorFlow's start-up logs say nothing)."""
    message = error.split("Traceback (most recent call last)")[0]
    lines = [x.strip() for x in message.strip().splitlines() if x.strip()]
    said = [x for x in lines[1:] if not _NOISE.match(x) and x != lines[0]]
    return (lines[0] + (f" {said[-1]}" if said else ""))[:240]


