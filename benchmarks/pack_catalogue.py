"""Build a model pack's models (audio, vision, sensors or mediapipe) for three Ethos-U targets and print their catalogue as a markdown table.

Runs, in a fresh cache unless --cache-dir is given, for each model named (default: every model
of the pack) and each of its weights variants

    zoo build MODEL --weights W -t u55-128,u65-256,u85-256 --keep-going --verify --jobs 2

then reads ``zoo report --all --json`` (the failures) and ``zoo report MODEL --json`` (every artifact) and
prints one row per model, weights, precision and target: built or the failure (stage and operator or pass), operators on the NPU and
the CPU with the partitions, Vela's estimated time, SRAM and flash, the metric
(float → int8, beside the declared figure) and the NPU-program level of ``--verify``. A variant whose weights cannot be had (torchvision's
COCO weights offline, MTCNN's facenet weights without ZOO_MTCNN_WEIGHTS, MediaPipe's .tflite files
without `make setup`) is a failed row at the load stage. --precision a16w8 builds every model at
int16 activations too (the MediaPipe palm, pose and hand networks meet their allowed drops only so);
each precision is a row of its own, labelled in the precision column (--matrix: the model's name gets
``, a16w8``). Tens of minutes on two cores.

    .venv/bin/python benchmarks/pack_catalogue.py {audio,vision,sensors,mediapipe} [MODEL ...] [--targets u55-128,u65-256,u85-256]
        [--cache-dir CACHE] [--report-only] [--no-random] [--precision P ...] [--matrix full|compact] [--json PATH]
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ZOO = [sys.executable, "-m", "zoo"]
PACKS = ("audio", "vision", "sensors", "mediapipe")
"""The entry-point name of each pack in plugins/ (its folder is plugins/zoo-NAME)."""


def pack_models(pack_name: str, env: dict[str, str]) -> list[str]:
    listed = json.loads(subprocess.run([*ZOO, "plugins", "--json"], env=env, check=True, capture_output=True,
                                       text=True).stdout)
    (pack,) = [p for p in listed if p["name"] == pack_name] or [None]
    if pack is None or pack["status"] != "ok":
        raise SystemExit(f"the {pack_name} pack is not loaded ({pack}): pip install --no-deps -e plugins/zoo-{pack_name}")
    return list(pack["models"])


def weights_of(model: str, env: dict[str, str]) -> list[str]:
    info = json.loads(subprocess.run([*ZOO, "info", model, "--json"], env=env, check=True, capture_output=True,
                                     text=True).stdout)
    return [w["name"] for w in info["weights"]]


def size(n: int | None) -> str:
    return "-" if n is None else f"{n / 1024:,.0f} KiB" if n < 1024 * 1024 else f"{n / 1024 / 1024:,.2f} MiB"


def row(cell: dict[str, Any]) -> str:
    head = f"| {cell['model']} | {cell['weights']} | {cell['precision']} | {cell['target']} |"
    failure = cell.get("failure")
    if failure:
        culprit = failure.get("operator") or failure.get("pass_name")
        where = (failure.get("stage") or "build") + (f" ({culprit})" if culprit else "")
        message = " ".join(str(failure["message"]).split())
        message = message if len(message) <= 160 else message[:157] + "..."
        return f"{head} failed: {where}: {message.replace('|', '/')} | | | | | | | |"
    a = cell["artifact"]
    ops = f"{a['npu_ops']} / {a['cpu_ops']} / {a['partitions']}"
    # The operators left on the CPU besides the boundary's quantize/dequantize.
    fallback = ", ".join(sorted(set(a.get("cpu_fallback") or []))) or "-"
    ms = "-" if a["inference_time_ms"] is None else f"{a['inference_time_ms']:.3g}"
    # Vela puts the weights in flash, or in DRAM where the system config has it (U65's).
    stored = f"{size(a['flash_bytes'])} flash" if a["flash_bytes"] else f"{size(a['dram_bytes'])} DRAM"
    metrics = "; ".join(
        f"{m['name']} {m['float']:.4g} → {m['program']:.4g}{m.get('unit') or ''}"
        + (f" (declared {m['reference']:.4g})" if m.get("reference") is not None else "")
        + ("" if m.get("passed", True) else " FAILED")
        for m in a["metrics"]
    ) or "elementwise only"
    judged = cell.get("precisions") or {}
    tried = "; ".join(f"{t['precision']} {t['inference_time_ms']:.3g} ms{'' if t['meets'] else ' (misses)'}"
                      for t in judged.get("tried", []) if t.get("inference_time_ms") is not None)
    if judged:
        metrics += f"; meets the goal: {judged.get('best') or 'none'} ({tried})"
    return (f"{head} built | {ops} | {fallback} | {ms} | {size(a['sram_bytes'])} | {stored} | {metrics} "
            f"| {npu_program(a.get('npu_program'))} |")


def failure_precision(failure: dict[str, Any]) -> str:
    """The precision a recorded failure was built at: its key names it where it is not int8."""
    return str((failure.get("variant") or {}).get("precision") or "int8")


def by_precision(data: dict[str, Any], artifacts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One cell per model, weights, target and precision: ``zoo report --all`` shows one artifact per model,
    weights and target (int8's where it built), so an a16w8 build beside it would be lost, or shown in its
    place unlabelled where int8 failed. ``artifacts`` are every cached artifact (``zoo report MODEL --json``'s
    rows); of one precision, the one built with the target's own Vela options and no SRAM budget, newest first,
    as ``zoo report --all`` picks. A failure shows where nothing of its precision built. Each cell gets its
    ``precision``; the judgement of the precisions tried (``precisions``) stays with the cell --all shows."""
    newest = sorted(artifacts, key=lambda a: (a.get("built_at") or "", a["key"]), reverse=True)
    plainest = sorted(newest, key=lambda a: (a.get("sram_budget_bytes") is not None, len(a.get("extra_flags") or [])))
    cells: dict[tuple[str, str, str, str], dict[str, Any]] = {}
    for a in plainest:
        where = (a["model"], a.get("weights") or "", a["target"], a.get("precision") or "int8")
        cells.setdefault(where, {"model": where[0], "weights": where[1], "target": where[2], "precision": where[3],
                                 "artifact": a, "failure": None})
    for f in data.get("failures") or []:
        where = (f["model"], f["weights"], f["target"], failure_precision(f))
        cells.setdefault(where, {"model": where[0], "weights": where[1], "target": where[2], "precision": where[3],
                                 "artifact": None, "failure": f})
    for c in data.get("cells") or []:
        shown = c.get("artifact") or {}
        precision = shown.get("precision") or failure_precision(c.get("failure") or {})
        mine = cells.get((c["model"], c["weights"], c["target"], precision))
        if mine is not None and c.get("precisions"):
            mine["precisions"] = c["precisions"]
    return list(cells.values())


def npu_program(level: dict[str, Any] | None) -> str:
    """``--verify``'s NPU-program level: Vela's program on zoo's command-stream interpreter (a stand-in for the
    NPU) against the TOSA reference model, bit-exact on how many samples, where it first differs, or why skipped."""
    if not level:
        return "-"
    if level.get("outcome") == "passed":
        return f"bit-exact on {level.get('samples')} samples"
    if level.get("outcome") == "skipped":
        return f"skipped: {' '.join(str(level.get('skipped')).split()).replace('|', '/')}"
    where = json.dumps(level.get("first_difference")) if level.get("first_difference") else str(level.get("error"))
    return f"differs: {where.replace('|', '/')[:157]}"


def _short(target: str) -> str:
    return target.removeprefix("ethos-")


def matrix_cell(cell: dict[str, Any], compact: bool = False) -> str:
    """One target's result in a few words: partitions and Vela's time, what the CPU keeps, or where it failed.
    ``compact``: the time alone when the NPU runs it whole; else the partitions, ``+CPU`` if operators
    are left on the CPU; ``✗`` and the cause for a failure."""
    failure = cell.get("failure")
    if failure:
        check = re.search(r"structure check (\w+):", str(failure.get("message")))
        culprit = failure.get("operator") or failure.get("pass_name") or (check.group(1) if check else None)
        if compact:
            return f"✗ {culprit or failure.get('stage') or 'build'}"
        return f"fails at {failure.get('stage') or 'build'}" + (f" ({culprit})" if culprit else "")
    a = cell["artifact"]
    t = a["inference_time_ms"]
    ms = "-" if t is None else f"{t:.3g}" if t < 100 else f"{t:,.0f}"
    # "aten.upsample_bilinear2d.vec" → "upsample_bilinear2d"
    fallback = sorted({op.replace("::", ".").split(".")[1] for op in a.get("cpu_fallback") or []})
    if compact:
        if fallback:
            return f"{a['partitions']}p+CPU {ms}"
        return ms if a["partitions"] == 1 else f"{a['partitions']}p {ms}"
    return f"{a['partitions']}p, {ms} ms" + (f"; CPU: {', '.join(fallback)}" if fallback else "")


def matrix(cells: list[dict[str, Any]], weights: dict[str, str], targets: list[str], compact: bool = False) -> list[str]:
    """Model × target: one row per model (its ``weights[model]`` variant) and precision, int8's first, the others
    named after the model (``palm-detection-lite, a16w8``); the metric of the row's first built cell."""
    lines = ["| model | weights | " + " | ".join(targets) + " | metric (float → program) |",
             "| --- | --- | " + " | ".join("---" for _ in targets) + " | --- |"]
    for model, variant in weights.items():
        precisions = sorted({c["precision"] for c in cells if c["model"] == model and c["weights"] == variant},
                            key=lambda p: (p != "int8", p))
        for precision in precisions:
            mine = {_short(c["target"]): c for c in cells
                    if (c["model"], c["weights"], c["precision"]) == (model, variant, precision)}
            built = [mine[t]["artifact"] for t in targets if t in mine and not mine[t].get("failure")]
            metric = "; ".join(f"{m['name']} {m['float']:.4g} → {m['program']:.4g}{m.get('unit') or ''}"
                               + ("" if m.get("passed", True) else " (over its allowed drop)")
                               for m in (built[0]["metrics"] if built else [])) or "-"
            name = model if precision == "int8" else f"{model}, {precision}"
            lines.append(f"| {name} | {variant} | "
                         + " | ".join(matrix_cell(mine[t], compact) if t in mine else "-" for t in targets)
                         + f" | {metric} |")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("pack", choices=PACKS)
    parser.add_argument("models", nargs="*", help="Models to build (default: every model of the pack).")
    parser.add_argument("--targets", default="u55-128,u65-256,u85-256")
    parser.add_argument("--precision", action="append", default=[],
                        help="Also build at this precision (repeatable), e.g. a16w8; int8 is always built.")
    parser.add_argument("--cache-dir", type=Path, help="Reuse this cache (default: a fresh one).")
    parser.add_argument("--json", type=Path, help="Also write zoo report --all --json here.")
    parser.add_argument("--report-only", action="store_true", help="Build nothing: the table of --cache-dir as it is.")
    parser.add_argument("--no-random", action="store_true",
                        help="Skip a model's random variant where it has trained or shipped weights.")
    parser.add_argument("--matrix", choices=("full", "compact"),
                        help="Print the model × target grid (one weights variant per model) instead of the long table; "
                             "compact: Vela's ms alone where the NPU runs it whole.")
    args = parser.parse_args()

    cache = args.cache_dir or Path(tempfile.mkdtemp(prefix=f"zoo-{args.pack}-catalogue-"))
    env = {**os.environ, "ZOO_CACHE_DIR": str(cache)}
    known = pack_models(args.pack, env)
    unknown = [m for m in args.models if m not in known]
    if unknown:
        raise SystemExit(f"not models of the {args.pack} pack: {', '.join(unknown)} (it has: {', '.join(known)})")
    models = args.models or known
    print(f"# cache: {cache}", flush=True)
    seconds: dict[str, float] = {}
    for model in [] if args.report_only else models:
        variants = weights_of(model, env)
        if args.no_random and len(variants) > 1:
            variants = [v for v in variants if v != "random"]
        for variant in variants:
            # Worker processes (--jobs 2): a crash in native code then fails only its own targets, and is recorded.
            for precision in ["int8", *args.precision]:
                command = [*ZOO, "build", model, "--weights", variant, "-t", args.targets, "--keep-going", "--verify",
                           "--jobs", "2", "-q", *([] if precision == "int8" else ["--precision", precision])]
                print("$ zoo", " ".join(command[3:]), flush=True)
                started = time.perf_counter()
                proc = subprocess.run(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
                seconds[f"{model} ({variant}, {precision})"] = time.perf_counter() - started
                for line in proc.stderr.splitlines():
                    if line.startswith(("failed:", "zoo: error")):
                        print("  " + line, flush=True)

    report = subprocess.run([*ZOO, "report", "--all", "--json"], env=env, check=True, capture_output=True, text=True)
    data = json.loads(report.stdout)
    if args.json:
        args.json.write_text(report.stdout)
    cached = {c["model"] for c in data["cells"] if c["model"] in models and c.get("artifact")}
    artifacts = [a for model in sorted(cached) for a in json.loads(subprocess.run(
        [*ZOO, "report", model, "--json"], env=env, check=True, capture_output=True, text=True).stdout)["rows"]]
    targets = args.targets.split(",")
    order = {t: i for i, t in enumerate(targets)}
    ranks = {p: i for i, p in enumerate(["int8", *args.precision])}
    cells = sorted((c for c in by_precision(data, artifacts) if c["model"] in models),
                   key=lambda c: (models.index(c["model"]), c["weights"], ranks.get(c["precision"], len(ranks)),
                                  c["precision"], order.get(_short(c["target"]), len(order))))
    if args.matrix:
        # One variant per model: the first that is not random (the real weights), else random.
        chosen = {}
        for c in cells:
            if c["model"] not in chosen or chosen[c["model"]] == "random":
                chosen[c["model"]] = c["weights"]
        print("\n".join(matrix(cells, chosen, targets, compact=args.matrix == "compact")))
        return 0
    print(f"\nzoo {args.pack} pack, {datetime.date.today().isoformat()}, targets {args.targets}\n")
    print("| model | weights | precision | target | result | NPU / CPU ops / partitions | CPU operators | est. ms "
          "| SRAM | flash or DRAM | metric | NPU program |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for cell in cells:
        print(row(cell))
    if seconds:
        print("\nwall time per model and weights (build of every target, --verify): "
              + ", ".join(f"{m} {s:.0f} s" for m, s in seconds.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
