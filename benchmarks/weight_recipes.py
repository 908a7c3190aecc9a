"""What the weight recipes (issue 59) cost and buy on mnist: ``paletteN`` on a U55, ``sparse24`` on a U85.

For each cell it builds mnist (as ``benchmarks/_mnist_training.py``'s twin ``mnist-ft``, which
declares the digits the weights were trained on, so ``--qat`` can fine-tune) with the numerical
check, in process, and records Vela's estimate (cycles, time, encoded weight bytes, flash bytes),
top-1 in float and in the int8 program (the TOSA reference run on the 1,000 held-out digits),
whether the check passed, the fine-tuning time (first to last QAT step), and what the lowered
TOSA program holds: the most distinct int8 values in one layer's weights, and how many
layers' weights are 2:4 sparse. Vela's own word on the encoding comes from its optimisation
database: the layers it encoded ``SPARSE_2_4`` and ``PALETTE``.

    PYTHONPATH=. .venv/bin/python benchmarks/weight_recipes.py --markdown
    PYTHONPATH=. .venv/bin/python benchmarks/weight_recipes.py --cells u85-256:sparse24:0
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

CELLS = ("u55-128:-:0", "u55-128:palette16:0", "u55-128:palette8:0", "u55-128:palette16:300",
         "u85-256:-:0", "u85-256:sparse24:0", "u85-256:sparse24:300")
"""target:transform:QAT steps; ``-`` for zoo's default."""


def _vela_encodings(graph: bytes, target: Any) -> dict[str, int]:
    """How many layers of ``graph`` Vela encoded with each weight format (``Default|Sparse2_4``, …)."""
    from zoo.registry.npu.vela_report import weight_formats

    formats = weight_formats(graph, target)
    return {f: formats.count(f) for f in sorted(set(formats))}


def cell(spec: str) -> dict[str, Any]:
    from zoo import Zoo
    from zoo.registry.compile import compile_targets
    from zoo.registry.compile.tosa_weights import convolution_weights, distinct_values, is_sparse24

    target_name, transform, steps = spec.split(":")
    zoo = Zoo()
    request = zoo.request("mnist-ft", target_name, io="int8", qat=int(steps),
                          weights_transform=None if transform == "-" else transform)
    seen: dict[str, float] = {}

    def progress(stage: str, done: int | None, total: int | None) -> None:
        if stage == "qat":
            seen.setdefault("start", time.perf_counter())
            seen["end"] = time.perf_counter()

    started = time.perf_counter()
    result = compile_targets(request.spec, [request.target], verify=[True], precision=request.precision,
                             boundary=request.boundary, progress=progress)[0]
    seconds = time.perf_counter() - started
    total = result.vela["total"]
    numerics = result.numerics.record if result.numerics is not None else {}
    top1 = next((m for m in numerics.get("metrics") or [] if m["name"] == "top1"), {})
    weights = [w for g in result.tosa_graphs for w in convolution_weights(g)]
    encodings: dict[str, int] = {}
    for g in result.tosa_graphs:
        for name, n in _vela_encodings(g, request.target).items():
            encodings[name] = encodings.get(name, 0) + n
    return {
        "target": target_name, "transform": transform, "qat": int(steps), "precision": request.precision.name,
        "cycles": int(total["total_cycles"]), "ms": float(total["inference_time_ms"]),
        "weight_bytes": int(total["weights_encoded_bytes"]), "flash_bytes": int(total["off_chip_flash_bytes"]),
        "top1_float": top1.get("float"), "top1_int8": top1.get("program"), "passed": numerics.get("passed"),
        "max_distinct": max(distinct_values(w) for w in weights), "layers": len(weights),
        "sparse_layers": sum(is_sparse24(w) for w in weights), "vela_encodings": encodings,
        "fine_tune_s": round(seen["end"] - seen["start"], 1) if seen else 0.0, "build_s": round(seconds, 1),
        "kept_step": (result.calibration.get("qat") or {}).get("kept_step"),
    }


def markdown(rows: list[dict[str, Any]]) -> str:
    base = {r["target"]: r for r in rows if r["transform"] == "-"}
    out = ["| target | recipe | cycles (vs default) | Vela time | weights (vs default) | flash | top-1 float → int8 program "
           "| check | most values in a layer | 2:4 layers (Vela: Sparse2_4) | fine-tuning |",
           "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        b = base.get(r["target"])
        ratio = f" ({r['cycles'] / b['cycles']:.3f})" if b else ""
        wratio = f" ({r['weight_bytes'] / b['weight_bytes'] - 1:+.0%})" if b and r is not b else ""
        recipe = "default (int8)" if r["transform"] == "-" else r["precision"]
        tuned = f"{r['fine_tune_s']:.0f} s ({r['qat']} steps, kept {r['kept_step']})" if r["qat"] else "–"
        out.append(f"| {r['target']} | {recipe} | {r['cycles']:,}{ratio} | {r['ms']:.3f} ms | {r['weight_bytes']:,}{wratio} "
                   f"| {r['flash_bytes']:,} B | {r['top1_float']} → {r['top1_int8']} % | "
                   f"{'passed' if r['passed'] else 'FAILED'} | {r['max_distinct']} | {r['sparse_layers']} of {r['layers']} "
                   f"({sum(n for f, n in r['vela_encodings'].items() if 'Sparse2_4' in f)}) | {tuned} |")
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", default=",".join(CELLS), help="target:transform:steps, comma-separated")
    parser.add_argument("--json", type=Path, help="also write the rows here")
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--table", type=Path, help="only print the table of rows a --json run wrote")
    args = parser.parse_args()
    if args.table:
        print(markdown(json.loads(args.table.read_text())))
        return
    os.environ.setdefault("ZOO_PLUGINS", "benchmarks._mnist_training")
    sys.path.insert(0, str(Path(__file__).parents[1]))
    rows = []
    for spec in args.cells.split(","):
        rows.append(cell(spec))
        print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
        if args.json:  # as it goes: a long run's finished cells are kept
            args.json.write_text(json.dumps(rows, indent=2) + "\n")
    print(markdown(rows) if args.markdown else json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
