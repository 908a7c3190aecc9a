"""zoo's Ethos-U program against the int8 TFLite → Vela flow: the same network, weights and calibration data.

For each model and target, every run builds afresh (nothing stored is read):
  zoo best      what ``zoo fetch MODEL -t TARGET --io int8 [--layout nhwc]`` builds (``--layout nhwc``
                where the model offers it), compiled in this process without the cache, so that its
                TOSA graphs are at hand;
  zoo defaults  the same with zoo's default boundary (float I/O, NCHW);
  TFLite        the float model zoo quantizes (same plugin, weights variant and seed) → torch.onnx.export
                → onnx2tf → TensorFlow's converter, full-integer int8 with int8 input and output, the
                representative dataset being zoo's own calibration samples; TensorFlow runs in a venv
                of its own (``.venv-tflite``, made on first use) through ``benchmarks/_tflite_convert.py``.
Then Vela runs with the flags zoo's build recorded in its manifest (accelerator, ``--config``,
system config, memory mode, its extra flags) plus ``--verbose-performance``, on zoo's TOSA graphs
and on the ``.tflite``; it prints the totals of each, the ratios zoo / TFLite, and the layers,
matched by order, operator and MACs, whose cycles differ most.

    python benchmarks/vs_tflite.py mnist u55-128
    python benchmarks/vs_tflite.py mv2 u55-128 --weights random
    python benchmarks/vs_tflite.py --all --markdown out/vs_tflite.md   # 4 models × u55-128, u85-256
    python benchmarks/vs_tflite.py --catalogue --jobs 2 --markdown out/vs_tflite.md  # the whole table

``--jobs N`` runs N models at a time, each in a process of its own (its log in ``--logs``).

With ``--metrics`` (``--trained`` implies it) the table also holds each model's declared metric
(top-1, ROC-AUC, ...) on its own evaluation set: zoo's from its numerical check (float model and
int8 program on the TOSA reference model, ``--verify``), the TFLite flow's from ONNX Runtime (float)
and TensorFlow Lite's interpreter (its int8 ``.tflite``), computed by the model's own evaluators
(``benchmarks/_vs_tflite_metrics.py``). ``--trained`` is every model trained here that the converter
takes, on u55-128, u65-256 and u85-256; ``--no-defaults`` skips zoo's float-I/O NCHW build.

    python benchmarks/vs_tflite.py --trained --no-defaults --markdown out/vs_tflite_trained.md --json out/vs_tflite_trained.json
    python benchmarks/vs_tflite.py --table out/vs_tflite_trained.json out/ppocr.json --recipes out/weight_recipes.json  # the table again

``--recipes`` adds a column: the fastest of ``benchmarks/weight_recipes.py --json``'s recipes whose
numerical check passed, for each model and target. ``--table`` joins the rows of several runs, in the order
given; ``--stages`` prints instead where each run's seconds went (zoo's lowering and numerical check, onnx2tf).
docs/measured.md's table renders the runs in ``benchmarks/results/`` (``TRAINED_RESULTS``).

Where the ``.tflite`` holds a grouped ``CONV_2D`` (onnx2tf's form of a depthwise convolution whose two strides
differ), the TFLite side's notes name it and the Conv2D Vela splits it into, one per group, with their cycles.

Run with zoo's venv, under ``nice -n 19`` on a shared machine. ``--weights`` defaults to the
model's own weights where they load offline, else ``random``; both sides always get the same.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from zoo import Zoo

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

# The script's parts, each torch-free at import: the figures and their JSON, Vela, zoo's side, the TFLite
# flow, the per-layer comparison and the tables. Their names stay importable from here.
from benchmarks._vs_tflite_flow import (  # noqa: E402
    SAME_NETWORK,
    TFLITE_PACKAGES,
    TFLITE_VENV,
    build_tflite,
    convert_tflite,
    export_float,
    helper_result,
    outputs_path,
    tflite_python,
    vela_tflite,
)
from benchmarks._vs_tflite_groups import grouped_convolutions, split_notes  # noqa: E402
from benchmarks._vs_tflite_layers import match_layers, print_comparison  # noqa: E402
from benchmarks._vs_tflite_metrics import export_evaluation  # noqa: E402
from benchmarks._vs_tflite_sides import NOT_BUILT, Layer, Side, VelaRun, rows_from_json, rows_json  # noqa: E402
from benchmarks._vs_tflite_table import (  # noqa: E402
    best_recipe,
    markdown,
    recipe_table,
    side_by_side,
    stage_table,
    time_ratio,
)
from benchmarks._vs_tflite_vela import combine, flash_bytes, run_vela  # noqa: E402
from benchmarks._vs_tflite_zoo import build_zoo, choose_weights  # noqa: E402

__all__ = [
    "ALL_MODELS", "ALL_TARGETS", "CATALOGUE_MODELS", "CATALOGUE_TARGETS", "NOT_BUILT", "RECIPES", "RESULTS",
    "SAME_NETWORK", "TFLITE_PACKAGES", "TFLITE_VENV", "TRAINED_MODELS", "TRAINED_RESULTS", "Layer", "Side",
    "VelaRun", "best_recipe", "build_tflite", "build_zoo", "choose_weights", "combine", "compare_model",
    "convert_tflite", "export_float", "flash_bytes", "grouped_convolutions", "helper_result", "joined_rows", "main",
    "markdown", "match_layers", "outputs_path", "recipe_table", "rows_from_json", "rows_json", "run_jobs", "run_vela",
    "side_by_side", "stage_table", "tflite_python", "vela_tflite",
]

ALL_MODELS = ("mv2", "mnist", "mobilenet-v3-small", "resnet8-cifar")
ALL_TARGETS = ("u55-128", "u85-256")
# Issue 45's table: every image classifier, the audio and vision packs' networks it names, cheapest first.
CATALOGUE_MODELS = (
    "mnist", "resnet8-cifar", "ds-cnn-fsdd", "vww-mobilenetv1-025", "silero-vad", "crepe-tiny", "ppocr-cls",
    "shufflenet-v2-x0-5", "mobilenet-v3-small", "squeezenet1-1", "mnasnet0-5", "shufflenet-v2-x1-0", "mnasnet0-75",
    "mv2", "squeezenet1-0", "mnasnet1-0", "shufflenet-v2-x1-5", "mobilenet-v3-large", "regnet-x-400mf",
    "regnet-y-400mf", "mnasnet1-3", "efficientnet-b0", "shufflenet-v2-x2-0", "regnet-x-800mf", "regnet-y-800mf",
    "ppocr-rec", "ppocr-det", "googlenet", "efficientnet-b1", "deit-tiny", "mobilevit-xs", "resnet18",
    "regnet-x-1-6gf", "regnet-y-1-6gf", "efficientnet-b2", "ssdlite320-mobilenetv3-large", "lraspp-mobilenetv3-large",
)
CATALOGUE_TARGETS = ("u55-128", "u65-256", "u85-256")
# Issue 59: the trained models onnx2tf converts: those trained here (the sensors pack's four and the two digit
# models with them), then PP-OCR's (its detector and recogniser take 15 and 24 minutes for u55-128 and u65-256
# on 2 shared cores, nearly all of it zoo's lowering and numerical check: docs/measured.md).
# silero-vad's and crepe-tiny's 1-D convolutions are beyond onnx2tf (see the catalogue's table).
TRAINED_MODELS = ("mnist", "ds-cnn-fsdd", "vww-mobilenetv1-025", "har-cnn-spar", "ad-autoencoder-spar",
                  "speaker-id-vowels", "appliance-id-plaid", "yolo-tiny-mcu", "seg-tiny-mcu", "ppocr-cls", "ppocr-det",
                  "ppocr-rec")

# The committed runs docs/measured.md's trained-model table renders (``--table``), in its rows' order, and the
# weight recipes' rows its last column reads.
RESULTS = ROOT / "benchmarks" / "results"
TRAINED_RESULTS = tuple(RESULTS / f"vs_tflite_{name}.json"
                        for name in ("trained", "ppocr_det", "ppocr_rec", "ppocr_rec_u85"))
RECIPES = RESULTS / "weight_recipes.json"


def run_jobs(models: Sequence[str], targets: Sequence[str], args: argparse.Namespace, work: Path) -> list[dict[str, Any]]:
    """Each model in a fresh process of this script, ``args.jobs`` at a time, in the order given;
    each one's output goes to its log, its rows to a JSON file this run reads back."""
    from concurrent.futures import ThreadPoolExecutor

    logs = (args.logs or work / "logs").resolve()
    logs.mkdir(parents=True, exist_ok=True)
    print(f"{len(models)} models × {', '.join(targets)}, {args.jobs} at a time; logs in {logs}", flush=True)
    env = {**os.environ, "OMP_NUM_THREADS": "1", "TF_NUM_INTRAOP_THREADS": "1", "TF_NUM_INTEROP_THREADS": "1"}
    done: list[str] = []
    finished: dict[str, list[dict[str, Any]]] = {}

    def one(model: str) -> list[dict[str, Any]]:
        rows_file = work / f"rows-{model}.json"
        rows_file.unlink(missing_ok=True)
        command = [sys.executable, str(Path(__file__).resolve()), "--models", model, "--targets", ",".join(targets),
                   "--top", str(args.top), "--venv", str(args.venv), "--keep", str(work / model),
                   "--rows", str(rows_file), *(["--weights", args.weights] if args.weights else []),
                   *(["--metrics"] if args.metrics else []), *(["--no-defaults"] if args.no_defaults else [])]
        started = time.perf_counter()
        with (logs / f"{model}.log").open("w") as log:
            code = subprocess.run(command, stdout=log, stderr=subprocess.STDOUT, env=env).returncode
        seconds = time.perf_counter() - started
        done.append(model)
        if not rows_file.is_file():
            print(f"[{len(done)}/{len(models)}] {model}: no result, exit status {code} after {seconds:.0f} s "
                  f"(see {logs / f'{model}.log'})", flush=True)
            return [{"model": model, "target": t, "weights": "?", "seconds": seconds,
                     **{k: Side(k, error=f"the comparison process ended with status {code}; see its log")
                        for k in ("best", "defaults", "tflite")}} for t in targets]
        rows = rows_from_json(json.loads(rows_file.read_text()))
        ratios = ", ".join(f"{r['target']} {time_ratio(r['best'], r['tflite'])}" for r in rows)
        print(f"[{len(done)}/{len(models)}] {model}: {seconds:.0f} s; zoo best / TFLite: {ratios}", flush=True)
        finished[model] = rows
        if args.markdown:  # the table so far, in the models' order: a run stopped early leaves what it measured
            so_far = [row for m in models for row in finished.get(m, [])]
            _write(args.markdown, markdown(so_far) + f"\n{len(finished)} of {len(models)} models measured so far.\n")
        return rows

    with ThreadPoolExecutor(args.jobs) as pool:
        return [row for rows in pool.map(one, models) for row in rows]


# --- driver -------------------------------------------------------------------------------------


def compare_model(zoo: Zoo, python: Path, model: str, targets: Sequence[str], asked: str | None, top: int,
                  work: Path, metrics: bool = False, defaults_too: bool = True) -> list[dict[str, Any]]:
    started = time.perf_counter()
    weights = choose_weights(zoo, model, asked)
    print(f"\n### {model} ({weights} weights) for {', '.join(targets)}", flush=True)
    best = build_zoo(zoo, model, targets, weights, True, work, metrics=metrics)
    defaults = (build_zoo(zoo, model, targets, weights, False, work) if defaults_too
                else [Side("zoo defaults", error=NOT_BUILT) for _ in targets])
    tfl_path: Path | None = None
    try:
        exported = time.perf_counter()
        onnx_path, npz, digest = export_float(zoo, model, weights, work)
        evaluation = export_evaluation(zoo.model(model), work) if metrics else None
        exported = time.perf_counter() - exported
        tfl_path, tfl_template = build_tflite(python, model, onnx_path, npz, work, evaluation, zoo.model(model))
        tfl_template.notes.append(f"ONNX export and the samples' .npz files in zoo's venv: {exported:.0f} s")
        recorded = [n for s in best if s.vela for n in s.notes if n.startswith("calibration sha256")]
        if recorded and digest[:12] not in recorded[0]:
            tfl_template.notes.append(f"calibration sha256 {digest[:12]} differs from zoo's build")
        else:
            tfl_template.notes.append(f"calibration sha256 {digest[:12]}, as zoo's build")
    except Exception as exc:
        tfl_template = Side("TFLite int8", error=f"torch.onnx.export: {type(exc).__name__}: {exc}")
    rows = []
    for i, target in enumerate(targets):
        tfl = Side(tfl_template.label, cpu_ops=0, input_quant=tfl_template.input_quant,
                   seconds=tfl_template.seconds, error=tfl_template.error, notes=list(tfl_template.notes),
                   metrics=list(tfl_template.metrics))
        flags = next((s.vela.flags for s in (best[i], defaults[i]) if s.vela), None)
        if tfl_path and flags:
            vela_tflite(tfl_path, tfl, flags, work, target)
            if tfl.vela:  # what Vela makes of onnx2tf's grouped convolutions (ppocr-rec's 912 Conv2D)
                tfl.notes += split_notes(grouped_convolutions(tfl_path), tfl.vela.layers)
        elif tfl_path:
            tfl.error = "no zoo build to take Vela's flags from"
        print_comparison(model, target, weights, best[i], defaults[i], tfl, top)
        rows.append({"model": model, "target": target, "weights": weights,
                     "best": best[i], "defaults": defaults[i], "tflite": tfl})
    seconds = time.perf_counter() - started
    for row in rows:
        row["seconds"] = seconds
    print(f"{model}: {seconds:.1f} s for {len(targets)} target(s)", flush=True)
    return rows


def joined_rows(files: Sequence[Path]) -> list[dict[str, Any]]:
    """The rows of several ``--json`` runs, in the files' order; a model and target measured twice is refused."""
    rows: list[dict[str, Any]] = []
    for file in files:
        for row in rows_from_json(json.loads(file.read_text())):
            if any((r["model"], r["target"]) == (row["model"], row["target"]) for r in rows):
                raise SystemExit(f"{file}: {row['model']} on {row['target']} is in an earlier file too; "
                                 "give each comparison once")
            rows.append(row)
    return rows


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    partial.write_text(text)
    partial.replace(path)



def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    parser.add_argument("model", nargs="?", help="a zoo model, e.g. mnist; or --models")
    parser.add_argument("target", nargs="?", help="an Ethos-U target, e.g. u55-128; or --targets")
    parser.add_argument("--models", help="comma-separated models")
    parser.add_argument("--targets", help="comma-separated targets")
    parser.add_argument("--all", action="store_true", help=f"{', '.join(ALL_MODELS)} × {', '.join(ALL_TARGETS)}")
    parser.add_argument("--catalogue", action="store_true",
                        help=f"the {len(CATALOGUE_MODELS)} models of issue 45's table × {', '.join(CATALOGUE_TARGETS)}")
    parser.add_argument("--jobs", type=int, default=1, help="models compared at a time, each in a process of its own")
    parser.add_argument("--logs", type=Path, help="with --jobs: each model's output here (default: the work folder)")
    parser.add_argument("--rows", type=Path, help=argparse.SUPPRESS)  # a --jobs child writes its rows here
    parser.add_argument("--weights", help="weights variant for every model (default: its own if offline, else random)")
    parser.add_argument("--top", type=int, default=8, help="layers to show per comparison")
    parser.add_argument("--markdown", type=Path, help="also write the table here")
    parser.add_argument("--venv", type=Path, default=TFLITE_VENV, help="the TensorFlow venv (made if missing)")
    parser.add_argument("--keep", type=Path, help="keep the .onnx, .tflite, .tosa and Vela's output here")
    parser.add_argument("--venv-only", action="store_true", help="make the TensorFlow venv and stop (make tflite-venv)")
    parser.add_argument("--trained", action="store_true",
                        help=f"the models trained here ({', '.join(TRAINED_MODELS)}) × {', '.join(CATALOGUE_TARGETS)}, "
                             "with --metrics")
    parser.add_argument("--metrics", action="store_true",
                        help="also the model's metric, float and int8, for zoo (its --verify) and the TFLite flow")
    parser.add_argument("--no-defaults", action="store_true", help="skip zoo's float-I/O NCHW build")
    parser.add_argument("--json", type=Path, help="also write the rows here (JSON)")
    parser.add_argument("--table", type=Path, nargs="+",
                        help="only print the side-by-side table of the rows --json runs wrote, files in the order given")
    parser.add_argument("--recipes", type=Path, help="with --table: benchmarks/weight_recipes.py's --json rows")
    parser.add_argument("--every-recipe", action="store_true",
                        help="with --table and --recipes: every recipe's row against the TFLite flow instead")
    parser.add_argument("--stages", action="store_true",
                        help="with --table: where each model's comparison spent its seconds instead")
    args = parser.parse_args()
    if args.table:
        recipes = json.loads(args.recipes.read_text()) if args.recipes else None
        rows = joined_rows(args.table)
        if args.every_recipe and recipes is None:
            parser.error("--every-recipe needs --recipes: benchmarks/weight_recipes.py's --json rows")
        print(stage_table(rows) if args.stages else recipe_table(rows, recipes) if args.every_recipe and recipes
              else side_by_side(rows, recipes), end="")
        return 0
    if args.venv_only:
        print(tflite_python(args.venv))
        return 0
    models = list(ALL_MODELS) if args.all else (args.models.split(",") if args.models else [args.model])
    targets = list(ALL_TARGETS) if args.all else (args.targets.split(",") if args.targets else [args.target])
    if args.catalogue:
        models, targets = list(CATALOGUE_MODELS), list(CATALOGUE_TARGETS)
    if args.trained:
        models, targets, args.metrics = list(TRAINED_MODELS), list(CATALOGUE_TARGETS), True
    if None in models or None in targets:
        parser.error("give MODEL TARGET, --models/--targets, or --all")

    started = time.perf_counter()
    from zoo import Zoo
    from zoo.registry.request import reproducible
    reproducible.pin()  # before torch computes anything, as a zoo build needs

    python = tflite_python(args.venv)
    zoo = Zoo()
    print(f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at start", flush=True)
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="zoo-vs-tflite-") as tmp:
        work = (args.keep or Path(tmp)).resolve()
        work.mkdir(parents=True, exist_ok=True)
        if args.jobs > 1:
            rows = run_jobs(models, targets, args, work)
        else:
            for model in models:
                rows += compare_model(zoo, python, model, targets, args.weights, args.top, work,
                                      metrics=args.metrics, defaults_too=not args.no_defaults)
                if args.json:
                    _write(args.json, json.dumps(rows_json(rows), indent=1))
                if args.markdown:  # after each model, as run_jobs does: a run stopped early keeps what it measured
                    _write(args.markdown, markdown(rows) + f"\n{len(rows)} comparisons so far.\n")
    if args.rows:
        args.rows.write_text(json.dumps(rows_json(rows), indent=1))
    if args.json:
        _write(args.json, json.dumps(rows_json(rows), indent=1))
    elapsed = time.perf_counter() - started
    table = markdown(rows)
    print("\n" + table)
    print(f"{len(rows)} comparison(s) in {elapsed:.1f} s ({elapsed / 60:.1f} min); "
          f"load average {os.getloadavg()[0]:.1f} at the end")
    if args.markdown:
        _write(args.markdown, table + f"\n{len(rows)} comparisons in {elapsed / 60:.1f} min on {os.cpu_count()} cores.\n")
    failed = any(s.error and s.error != NOT_BUILT for r in rows for s in (r["best"], r["defaults"], r["tflite"]))
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
