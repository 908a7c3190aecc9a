"""What each ``--precision`` costs and buys: models × targets × precisions, one table.

For each cell it runs ``zoo build MODEL -t TARGET --precision P --verify --json`` in
one cache (a fresh temporary one unless ``--cache``) and records Vela's estimate,
SRAM, whether the numerical check passed, the model's metrics (float → program)
and each output's SQNR against float, for the program (the TOSA reference run)
and for the fake-quantized model it was lowered from. A build that fails is a
row with its cause.

    .venv/bin/python benchmarks/precision.py --models mnist --targets u55-128,u85-256
    .venv/bin/python benchmarks/precision.py --models silero-vad --targets u55-128,u85-256 --markdown
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ZOO = Path(sys.executable).with_name("zoo")


def build(model: str, target: str, precision: str, weights: str | None, cache: str) -> dict[str, Any]:
    command = [str(ZOO), "build", model, "-t", target, "--precision", precision, "--verify", "--json"]
    command += ["--weights", weights] if weights else []
    started = time.perf_counter()
    proc = subprocess.run(command, capture_output=True, text=True, env={**os.environ, "ZOO_CACHE_DIR": cache})
    row: dict[str, Any] = {"model": model, "target": target, "precision": precision,
                           "seconds": round(time.perf_counter() - started, 1)}
    if proc.returncode != 0:
        lines = [ln for ln in proc.stderr.strip().splitlines() if ln.strip()]
        return {**row, "error": lines[-1] if lines else f"exit {proc.returncode}"}
    art = json.loads(proc.stdout)
    m = art["manifest"]
    total = (m.get("vela") or {}).get("total") or {}
    numerics = (m.get("verification") or {}).get("numerics") or {}
    outputs = numerics.get("outputs") or []
    return {
        **row,
        "vela_ms": total.get("inference_time_ms"), "sram_bytes": total.get("sram_bytes"),
        "partitions": m["delegation"].get("partitions"), "cpu_ops": m["delegation"].get("cpu_ops"),
        "numerics_passed": numerics.get("passed"),
        "failed_checks": [c["name"] for c in numerics.get("checks") or [] if not c["passed"]],
        "max_steps_vs_fake_quant": [o["vs_fake_quant"].get("max_error_steps") for o in outputs],
        "sqnr_db": [o["vs_float"].get("sqnr_db") for o in outputs],
        "fake_quant_sqnr_db": [o["fake_quant_vs_float"].get("sqnr_db") for o in outputs],
        "min_cosine": [o["vs_float"].get("min_cosine") for o in outputs],
        "metrics": {x["name"]: (x["float"], x["program"]) for x in numerics.get("metrics") or []},
    }


def _num(values: list[Any], fmt: str) -> str:
    return "/".join("-" if v is None else format(v, fmt) for v in values) or "-"


def render(rows: list[dict[str, Any]], markdown: bool) -> str:
    head = ["model", "target", "precision", "Vela time", "SRAM", "numerics", "steps vs fake-quant",
            "SQNR vs float (dB)", "fake-quant SQNR (dB)", "min cosine", "metrics (float → program)"]
    body = []
    for r in rows:
        if "error" in r:
            body.append([r["model"], r["target"], r["precision"], "failed: " + r["error"][:160], *[""] * 7])
            continue
        metrics = "; ".join(f"{k} {f:.4g} → {p:.4g}" for k, (f, p) in r["metrics"].items()) or "-"
        passed = "passed" if r["numerics_passed"] else "FAILED " + ",".join(r["failed_checks"])
        body.append([r["model"], r["target"], r["precision"],
                     "-" if r["vela_ms"] is None else f"{r['vela_ms']:.3f} ms",
                     "-" if r["sram_bytes"] is None else f"{r['sram_bytes'] / 1024:.1f} KiB", passed,
                     _num(r["max_steps_vs_fake_quant"], ".1f"), _num(r["sqnr_db"], ".1f"),
                     _num(r["fake_quant_sqnr_db"], ".1f"), _num(r["min_cosine"], ".4f"), metrics])
    if markdown:
        lines = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
        lines += ["| " + " | ".join(str(c) for c in line) + " |" for line in body]
        return "\n".join(lines)
    return "\n".join("  ".join(str(c) for c in line) for line in [head, *body])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="mnist")
    parser.add_argument("--targets", default="u55-128,u85-256")
    parser.add_argument("--precisions", default="int8,a16w8")
    parser.add_argument("--weights", default="", help="'' for each model's default")
    parser.add_argument("--cache", help="Build in this cache (default: a fresh temporary one).")
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--json", type=Path, help="Also write the rows here.")
    args = parser.parse_args()
    cache = args.cache or tempfile.mkdtemp(prefix="zoo-precision-")
    rows = [build(model, target, precision, args.weights or None, cache)
            for model in args.models.split(",") for target in args.targets.split(",")
            for precision in args.precisions.split(",")]
    print(render(rows, args.markdown))
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
