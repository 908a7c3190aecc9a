"""Which Ethos-U runs the vision pack's segmentation and transformer models, and what the
upsampling rewrite costs: the numbers of docs/vision-limits.md.

For each model, in a fresh cache unless --cache-dir is given:

    zoo build MODEL --weights random -t u55-128,u65-256,u85-256 --keep-going --verify --json

then, with --each-target, every target that failed alone (``zoo build MODEL -t TARGET``), since
a build unit retargets the U55/U65 family and a failure there fails the whole unit. It reads
``zoo report MODEL --json`` and the failure records, and prints one row per model and target:
built or the failure (stage, message), partitions, NPU / CPU operators, the operators left on
the CPU, SRAM, flash, Vela's estimated ms and the metric (float → int8). Last, the rewrite's
accuracy cost: mIoU of the rewrite's float argmax against the original's on the evaluation crops.

    .venv/bin/python benchmarks/vision_limits.py [--models M,...] [--targets ...] [--cache-dir CACHE]
        [--each-target] [--report-only] [--json PATH]
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ZOO = [sys.executable, "-m", "zoo"]
MODELS = ("lraspp-mobilenetv3-large", "lraspp-mobilenetv3-large-nearest", "lraspp-mobilenetv3-large-convt",
          "deeplabv3-mobilenetv3-large", "deeplabv3-mobilenetv3-large-convt", "deit-tiny", "mobilevit-xs")
REWRITES = {"lraspp-mobilenetv3-large-nearest": "lraspp-mobilenetv3-large",
            "lraspp-mobilenetv3-large-convt": "lraspp-mobilenetv3-large",
            "deeplabv3-mobilenetv3-large-convt": "deeplabv3-mobilenetv3-large"}
ALIASES = {"u55-128": "ethos-u55-128", "u65-256": "ethos-u65-256", "u85-256": "ethos-u85-256"}


def size(n: int | None) -> str:
    return "-" if not n else f"{n / 1024:,.0f} KiB" if n < 1024 * 1024 else f"{n / 1024 / 1024:,.2f} MiB"


def failures(cache: Path, model: str) -> dict[str, dict[str, Any]]:
    """The recorded failures of ``model`` (random weights) by accelerator (a success removes its record)."""
    out: dict[str, dict[str, Any]] = {}
    for path in sorted((cache / "v1" / "failures").glob("*/*.json")):
        record = json.loads(path.read_text())
        if record.get("model") == model and record.get("weights") == "random":
            out[record["target"]] = record
    return out


def cpu_operators(row: dict[str, Any]) -> str:
    left = sorted({op.split("::")[-1].removesuffix(".out").removesuffix(".default") for op in row["cpu_fallback"]})
    return ", ".join(left) or "none (boundary quantize/dequantize only)"


def table(models: list[str], targets: list[str], cache: Path, env: dict[str, str]) -> tuple[list[str], list[Any]]:
    lines = ["| model | target | result | partitions | NPU / CPU ops | left on the CPU | SRAM | flash | est. ms "
             "| metric (float → int8) |", "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    raw: list[Any] = []
    for model in models:
        proc = subprocess.run([*ZOO, "report", model, "--json"], env=env, capture_output=True, text=True)
        report = json.loads(proc.stdout) if proc.returncode == 0 else {"rows": []}  # 2: nothing built yet
        rows = {r["accelerator"]: r for r in report["rows"] if r["weights"] == "random"}
        failed = failures(cache, model)
        raw.append({"report": report, "failures": failed})
        for target in targets:
            accelerator = ALIASES.get(target, target)
            row = rows.get(accelerator)
            if row is None:
                record = failed.get(accelerator)
                message = " ".join(str(record["message"]).split()).replace("|", "/") if record else "not built"
                stage = record.get("stage", "build") if record else "-"
                lines.append(f"| {model} | {target} | failed: {stage}: {message[:200]} | | | | | | | |")
                continue
            metrics = "; ".join(f"{m['name']} {m['float']:.4g} → {m['program']:.4g}{m['unit']}"
                                + ("" if m["passed"] else " (beyond max_drop)") for m in row["metrics"]) or "-"
            lines.append(
                f"| {model} | {target} | built | {row['partitions']} | {row['npu_ops']} / {row['cpu_ops']} | "
                f"{cpu_operators(row)} | {size(row['sram_bytes'])} | {size(row['flash_bytes'] or row['dram_bytes'])} | "
                f"{row['inference_time_ms']:.3g} | {metrics} |")
    return lines, raw


def rewrite_costs(models: list[str]) -> list[str]:
    """mIoU (%) of each rewrite's float argmax against its original's, random weights, on the
    original's evaluation crops (and its calibration crops)."""
    from zoo.registry.request import reproducible
    reproducible.pin()  # before torch computes anything, as a build does
    import torch
    from zoo_vision import segmentation

    from zoo import miou

    out = []
    for rewrite, original in REWRITES.items():
        if rewrite not in models:
            continue
        with reproducible.numerics(torch, "the rewrite's cost"):
            a, b = segmentation.network(original), segmentation.network(rewrite)
            first, second = segmentation.build(a, "random"), segmentation.build(b, "random")
            for name, dataset in (("evaluation", segmentation.evaluation(a)), ("calibration", segmentation.calibration(a))):
                samples = [item[0][0] if name == "evaluation" else item[0] for item in dataset.load()]
                with torch.no_grad():
                    masks = [first(x)[0].argmax(0).numpy() for x in samples]
                    outputs = [[second(x)] for x in samples]
                value = miou(21, ignore_index=None)(outputs, masks)
                out.append(f"{rewrite} against {original} (random weights, float), {len(samples)} {name} crops: "
                           f"mIoU {value:.2f} %")
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--targets", default="u55-128,u65-256,u85-256")
    parser.add_argument("--cache-dir", type=Path, help="Reuse this cache (default: a fresh one).")
    parser.add_argument("--each-target", action="store_true", help="Build each failed target again on its own.")
    parser.add_argument("--report-only", action="store_true", help="Build nothing: the table of --cache-dir as it is.")
    parser.add_argument("--no-verify", action="store_true", help="Build without --verify: no metric, faster.")
    parser.add_argument("--json", type=Path, help="Also write the reports and failure records here.")
    args = parser.parse_args()

    models, targets = args.models.split(","), args.targets.split(",")
    cache = args.cache_dir or Path(tempfile.mkdtemp(prefix="zoo-vision-limits-"))
    env = {**os.environ, "ZOO_CACHE_DIR": str(cache)}
    print(f"# cache: {cache}", flush=True)
    seconds: dict[str, float] = {}
    for model in [] if args.report_only else models:
        runs = [args.targets]
        for target_list in runs:
            command = [*ZOO, "build", model, "--weights", "random", "-t", target_list, "--keep-going", "-q",
                       *([] if args.no_verify else ["--verify"])]
            print("$ zoo", " ".join(command[3:]), flush=True)
            started = time.perf_counter()
            proc = subprocess.run(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            seconds[f"{model} -t {target_list}"] = time.perf_counter() - started
            for line in proc.stderr.splitlines():
                if line.startswith(("zoo:", "failed:", "  ")) and "Warning" not in line:
                    print("  " + line, flush=True)
            if args.each_target and target_list == args.targets:
                failed = failures(cache, model)
                runs += [t for t in targets if ALIASES.get(t, t) in failed]

    lines, raw = table(models, targets, cache, env)
    print(f"\nzoo vision limits, {datetime.date.today().isoformat()}, random weights, targets {args.targets}\n")
    print("\n".join(lines))
    print()
    for line in rewrite_costs(models):
        print(line)
    if seconds:
        print("\nwall time per command: " + ", ".join(f"{m} {s:.0f} s" for m, s in seconds.items()))
    if args.json:
        args.json.write_text(json.dumps(raw, indent=1, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
