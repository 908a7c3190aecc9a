"""What verification costs and finds: the numerical check at build time, and
`zoo verify` afterwards (structure afresh, numerics as recorded).

Run: .venv/bin/python benchmarks/verify_numbers.py [--model mnist] [--target u55-128] [--weights W] [--runs N]
Uses a private cache directory, so it compiles once (with --verify).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time


def zoo(args: list[str], env: dict[str, str]) -> tuple[float, str]:
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "zoo", *args], env=env, check=True, capture_output=True, text=True)
    return time.perf_counter() - start, proc.stdout


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model", default="mnist")
    parser.add_argument("--target", default="u55-128")
    parser.add_argument("--weights", default=None)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    env = {**os.environ, "ZOO_CACHE_DIR": tempfile.mkdtemp(prefix="zoo-bench-")}
    weights = ["--weights", args.weights] if args.weights else []
    build_s, out = zoo(["build", args.model, "-t", args.target, "--verify", "--json", *weights], env)
    art = json.loads(out)
    n = art["manifest"]["verification"]["numerics"]
    pte = art["pte"]
    hits = [zoo(["verify", args.model, "-t", args.target, *weights], env)[0] for _ in range(args.runs)]
    files = [zoo(["verify", pte], env)[0] for _ in range(args.runs)]
    print(f"zoo build {args.model} -t {args.target} --verify {' '.join(weights)}")
    print(f"  whole build, fresh process:               {build_s:7.2f} s")
    print(f"  numerical check ({n['samples']} {n['dataset']} samples, {n['method']}): {n['seconds']:.2f} s")
    if n.get("reference_runs"):
        per = n["reference_seconds"] / n["reference_runs"]
        print(f"  TOSA reference model, per delegate run:  {per * 1000:7.1f} ms ({n['reference_runs']} runs)")
    for out_ in n["outputs"]:
        fq = out_.get("vs_fake_quant")
        if fq:
            vf = out_["vs_float"]
            versus = (f"min cosine {vf['min_cosine']:.4f}" if vf["min_cosine"] is not None
                      else f"not compared on {vf['skipped_samples']} samples (float output below one step)")
            print(f"  output {out_['index']}: vs fake-quantized max error {fq['max_abs_error']:.4g} "
                  f"({fq['max_error_steps']:.2f} steps); vs float {versus}")
    for acc in n.get("metrics") or []:
        print(f"  {acc['name']} on {acc['samples']} {acc['dataset']} samples: float {acc['float']:.4g}{acc['unit']}, "
              f"{acc['program_kind']} {acc['program']:.4g}{acc['unit']} (drop {acc['drop']:+.4g}; allowed {acc['max_drop']:g})")
    if n.get("top1_agreement"):
        from zoo.cli.format import top1_text

        print(f"  top-1: {top1_text(n['top1_agreement'])}")
    print(f"  zoo verify {args.model} -t {args.target} (cached), median of {args.runs}: {statistics.median(hits):.3f} s")
    print(f"  zoo verify PATH.pte, median of {args.runs}:            {statistics.median(files):.3f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
