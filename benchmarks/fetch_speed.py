"""Wall time of `zoo fetch` from the cache (goal: under 0.3 s), and of the
local compile that fills it.

Run: .venv/bin/python benchmarks/fetch_speed.py [--model mnist] [--target u55-128] [--runs N]
Uses a private cache directory so earlier runs do not count.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

GOAL_S = 0.3


def zoo(args: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "zoo", *args], env=env, check=True, capture_output=True)
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model", default="mnist")
    parser.add_argument("--target", default="u55-128")
    parser.add_argument("--weights", default=None)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    env = {**os.environ, "ZOO_CACHE_DIR": tempfile.mkdtemp(prefix="zoo-bench-")}
    cmd = ["fetch", args.model, "--target", args.target, "--quiet"]
    if args.weights:
        cmd += ["--weights", args.weights]
    compile_s = zoo(cmd, env)
    hits = [zoo(cmd, env) for _ in range(args.runs)]
    out_dir = tempfile.mkdtemp(prefix="zoo-bench-out-")
    export = [zoo([*cmd, "-o", out_dir], env) for _ in range(args.runs)]
    print(f"zoo {' '.join(cmd)}")
    print(f"  local compile (empty cache, fresh process): {compile_s:7.2f} s")
    print(f"  cache hit, median of {args.runs}:             {statistics.median(hits):7.3f} s  (goal < {GOAL_S} s)")
    print(f"  cache hit with -o DIR, median of {args.runs}:    {statistics.median(export):7.3f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
