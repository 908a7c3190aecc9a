"""What the weight recipes (issue 59) cost and buy on zoo's trained models: ``paletteN`` on a U55
or U65, ``sparse24`` (fine-tuned on the model's own training data) on a U85.

Each cell builds one model, with ``--io int8`` and the numerical check, for one TOSA family's
targets (``u55-128+u65-256`` share one lowering; Vela runs for each), in process, and records
per target: Vela's estimate (cycles, time, encoded weight bytes, the bytes of flash and DRAM the
program keeps, SRAM), the model's first metric in float and in the int8 program (the TOSA
reference run on its held-out data), whether the check passed, the fine-tuning time (first to
last QAT step; wall and the process's CPU seconds, with the 1-minute load average when the build
ended: on shared cores the CPU seconds are the fairer measure), and what the lowered TOSA
program holds: the most distinct int8 values in one layer's weights, how many layers' weights
are 2:4 sparse, and the layers Vela's optimisation database encoded ``Sparse2_4``.

    PYTHONPATH=. .venv/bin/python benchmarks/weight_recipes.py --models mnist --json out.json
    PYTHONPATH=. .venv/bin/python benchmarks/weight_recipes.py --cells ds-cnn-fsdd:u85-256:sparse24:300
    PYTHONPATH=. .venv/bin/python benchmarks/weight_recipes.py --cells har-cnn-spar:u85-256:sparse24:2000:nhwc
    PYTHONPATH=. .venv/bin/python benchmarks/weight_recipes.py --table benchmarks/results/weight_recipes.json

A cell's optional fifth field is the layout (``nhwc`` where the model offers it). ``--json``
merges into the file: a row is replaced by one of the same model, target, transform, steps and
layout, so the models can be measured one run at a time into one table. Each row records the
``zoo_pipeline`` version of its build key (``pipeline``); the table names it where a row's is older.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

MODELS = ("mnist", "vww-mobilenetv1-025", "ds-cnn-fsdd", "har-cnn-spar", "speaker-id-vowels", "appliance-id-plaid",
          "ad-autoencoder-spar", "yolo-tiny-mcu", "seg-tiny-mcu")
RECIPES = ("u55-128+u65-256:-:0", "u55-128+u65-256:palette16:0", "u55-128+u65-256:palette8:0",
           "u85-256:-:0", "u85-256:sparse24:300")
"""targets:transform:QAT steps; ``-`` for zoo's default. Each model's cells are these."""
RESULTS = Path(__file__).parent / "results" / "weight_recipes.json"
QAT_BEFORE = 1e-3
"""The learning rate every fine-tuned row was measured at before rows recorded theirs (``QAT``'s,
which ``sparse24`` used until it got its own)."""


def _vela_encodings(graph: bytes, target: Any) -> dict[str, int]:
    """How many layers of ``graph`` Vela encoded with each weight format (``Default|Sparse2_4``, …)."""
    from zoo.registry.npu.vela_report import weight_formats

    formats = weight_formats(graph, target)
    return {f: formats.count(f) for f in sorted(set(formats))}


def cell(spec: str) -> list[dict[str, Any]]:
    """One row per target of ``model:targets:transform:steps[:layout]`` (``nhwc`` where the model offers it)."""
    from zoo import Zoo
    from zoo.registry.compile import compile_targets
    from zoo.registry.compile.tosa_weights import convolution_weights, distinct_values, is_sparse24
    from zoo.registry.request.keys import PIPELINE_VERSION

    model, targets, transform, steps, *rest = spec.split(":")
    layout = rest[0] if rest else None
    zoo = Zoo()
    requests = [zoo.request(model, t, io="int8", layout=layout, qat=int(steps),
                            weights_transform=None if transform == "-" else transform) for t in targets.split("+")]
    seen: dict[str, float] = {}

    def progress(stage: str, done: int | None, total: int | None) -> None:
        if stage == "qat":
            seen.setdefault("start", time.perf_counter())
            seen.setdefault("cpu_start", time.process_time())
            seen["end"], seen["cpu_end"] = time.perf_counter(), time.process_time()

    first = requests[0]
    started = time.perf_counter()
    results = compile_targets(first.spec, [r.target for r in requests], verify=[True] + [False] * (len(requests) - 1),
                              precision=first.precision, boundary=first.boundary, progress=progress)
    seconds = time.perf_counter() - started
    numerics = results[0].numerics.record if results[0].numerics is not None else {}
    metric = first.spec.metrics[0].name
    measured = next((m for m in numerics.get("metrics") or [] if m["name"] == metric), {})
    weights = [w for g in results[0].tosa_graphs for w in convolution_weights(g)]
    rows = []
    for request, result in zip(requests, results, strict=True):
        total = result.vela["total"]
        encodings: dict[str, int] = {}
        for g in result.tosa_graphs:
            for name, n in _vela_encodings(g, request.target).items():
                encodings[name] = encodings.get(name, 0) + n
        rows.append({
            "model": model, "target": request.target.slug, "transform": transform, "qat": int(steps),
            "layout": request.boundary.layout,
            "precision": request.precision.name, "key": request.key(), "pipeline": PIPELINE_VERSION,
            "cycles": int(total["total_cycles"]), "ms": float(total["inference_time_ms"]),
            "weight_bytes": int(total["weights_encoded_bytes"]),
            "flash_bytes": int(total["off_chip_flash_bytes"]) + int(total["on_chip_flash_bytes"]),
            "dram_bytes": int(total["dram_bytes"]), "sram_bytes": int(total["sram_bytes"]),
            "metric": metric, "float": measured.get("float"), "int8": measured.get("program"),
            "max_drop": first.spec.metrics[0].max_drop, "passed": numerics.get("passed"),
            "max_distinct": max(distinct_values(w) for w in weights), "layers": len(weights),
            "sparse_layers": sum(is_sparse24(w) for w in weights), "vela_encodings": encodings,
            "fine_tune_s": round(seen["end"] - seen["start"], 1) if seen else 0.0,
            "fine_tune_cpu_s": round(seen["cpu_end"] - seen["cpu_start"], 1) if seen else 0.0,
            "load": round(os.getloadavg()[0], 1), "build_s": round(seconds, 1),
            "kept_step": (results[0].calibration.get("qat") or {}).get("kept_step"),
            **({"learning_rate": request.precision.learning_rate} if request.precision.qat else {}),
        })
    return rows


def _same(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return (all(a[k] == b[k] for k in ("model", "target", "transform", "qat"))
            and a.get("layout", "nchw") == b.get("layout", "nchw"))


def markdown(rows: list[dict[str, Any]]) -> str:
    """The rows as the docs' table; a row built by an older pipeline than the newest row's names its own."""
    newest = max((int(r["pipeline"]) for r in rows if "pipeline" in r), default=0)
    base = {(r["model"], r["target"], r.get("layout", "nchw")): r for r in rows if r["transform"] == "-" and not r["qat"]}
    out = ["| model | target | recipe | cycles (vs default) | weights (vs default) | flash / DRAM | SRAM "
           "| metric float → int8 program | check | values in a layer (most) | 2:4 layers (Vela: Sparse2_4) | fine-tuning |",
           "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in sorted(rows, key=lambda r: (MODELS.index(r["model"]) if r["model"] in MODELS else len(MODELS), r["model"],
                                         r["target"], r.get("layout", "nchw"), r["transform"] != "-", r["transform"],
                                         r["qat"])):
        b = base.get((r["model"], r["target"], r.get("layout", "nchw")))
        ratio = f" ({r['cycles'] / b['cycles']:.3f})" if b else ""
        wratio = f" ({r['weight_bytes'] / b['weight_bytes'] - 1:+.0%})" if b and r is not b else ""
        recipe = "default (int8)" if r["transform"] == "-" and not r["qat"] else r["precision"]
        recipe += ", NHWC" if r.get("layout", "nchw") == "nhwc" else ""
        recipe += f", pipeline {r['pipeline']}" if int(r.get("pipeline", newest)) != newest else ""
        cpu = f", {r['fine_tune_cpu_s']:.0f} CPU s, load {r['load']:g}" if "fine_tune_cpu_s" in r else ""
        rate = f", lr {r.get('learning_rate', QAT_BEFORE):g}"  # rows measured before sparse24 had its own rate
        tuned = f"{r['fine_tune_s']:.0f} s{cpu} ({r['qat']} steps{rate}, kept {r['kept_step']})" if r["qat"] else "–"
        store = " / ".join(f"{r[k]:,} B" for k in ("flash_bytes", "dram_bytes"))
        sparse = sum(n for f, n in r["vela_encodings"].items() if "Sparse2_4" in f)
        out.append(f"| {r['model']} | {r['target']} | {recipe} | {r['cycles']:,}{ratio} | {r['weight_bytes']:,}{wratio} "
                   f"| {store} | {r['sram_bytes']:,} B | {r['metric']} {r['float']:.4g} → {r['int8']:.4g} "
                   f"(drop ≤ {r['max_drop']:g}) | {'passed' if r['passed'] else 'FAILED'} | {r['max_distinct']} "
                   f"| {r['sparse_layers']} of {r['layers']} ({sparse}) | {tuned} |")
    return "\n".join(out)


def fine_tuning(rows: list[dict[str, Any]]) -> str:
    """The fine-tuned rows' times as the docs' table: wall and CPU seconds, first to last QAT step (one
    line per build: the targets of one lowering share its fine-tuning)."""
    out = ["| model | targets | recipe | steps | lr | wall s | CPU s | load | within the drop |",
           "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    builds: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for r in rows:
        if r["qat"]:
            lr = r.get("learning_rate", QAT_BEFORE)
            builds.setdefault((r["model"], r["transform"], r.get("layout", "nchw"), r["qat"], lr), []).append(r)
    for (model, transform, layout, steps, lr), same in sorted(builds.items()):
        r = same[0]
        cpu = f"{r['fine_tune_cpu_s']:,.0f} | {r['load']:g}" if "fine_tune_cpu_s" in r else "– | –"
        passed = " / ".join("yes" if s["passed"] else "no" for s in same)
        out.append(f"| {model} | {'+'.join(s['target'] for s in same)} | {transform}{', NHWC' if layout == 'nhwc' else ''} "
                   f"| {steps:,} | {lr:g} | {r['fine_tune_s']:,.0f} | {cpu} | {passed} |")
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default=",".join(MODELS), help="comma-separated; each gets every recipe's cell")
    parser.add_argument("--cells", help="model:targets:transform:steps, comma-separated, instead of --models")
    parser.add_argument("--json", type=Path, help="merge the rows into this file; benchmarks/results/weight_recipes.json holds the docs' table")
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--table", type=Path, help="only print the tables (recipes, fine-tuning times) of rows a --json run wrote")
    args = parser.parse_args()
    if args.table:
        rows = json.loads(args.table.read_text())
        print(markdown(rows) + "\n\n" + fine_tuning(rows))
        return
    sys.path.insert(0, str(Path(__file__).parents[1]))
    cells = args.cells.split(",") if args.cells else [f"{m}:{r}" for m in args.models.split(",") for r in RECIPES]
    rows: list[dict[str, Any]] = json.loads(args.json.read_text()) if args.json and args.json.exists() else []
    new: list[dict[str, Any]] = []
    for spec in cells:
        for row in cell(spec):
            print(json.dumps(row), file=sys.stderr, flush=True)
            new.append(row)
            rows = [r for r in rows if not _same(r, row)] + [row]
            if args.json:  # as it goes: a long run's finished cells are kept
                args.json.parent.mkdir(parents=True, exist_ok=True)
                args.json.write_text(json.dumps(rows, indent=1) + "\n")
    print(markdown(new) if args.markdown else json.dumps(new, indent=2))


if __name__ == "__main__":
    main()
