"""Wall time of `zoo fetch` from the cache, as a ratio to the interpreter's own start
(``python -c pass``, measured in the same rounds), and of the local compile that fills it.

Goals: a cache hit of any model at most 4x the interpreter, and mv2's hit at most
1.2x mnist's: a hand-out's cost must not grow with the model (mv2's header is 20 MB).

Run: .venv/bin/python benchmarks/fetch_speed.py [--target u55-128] [--runs N]
Uses a private cache directory so earlier runs do not count.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time

from _timing import environment, medians

GOAL_RATIO = 4.0
GOAL_GROWTH = 1.2
MODELS = {"mnist": [], "mv2": ["--weights", "random"]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--target", default="u55-128")
    parser.add_argument("--runs", type=int, default=9)
    args = parser.parse_args()
    env = environment(ZOO_CACHE_DIR=tempfile.mkdtemp(prefix="zoo-bench-"))
    out = tempfile.mkdtemp(prefix="zoo-bench-out-")
    commands = []
    for model, extra in MODELS.items():
        cmd = ["fetch", model, "--target", args.target, "--quiet", *extra]
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "zoo", *cmd], env=env, check=True, capture_output=True)
        print(f"zoo {' '.join(cmd)}: compiled in a fresh process, empty cache: {time.perf_counter() - start:.1f} s")
        commands += [cmd, [*cmd, "-o", f"{out}/{model}"]]
    base, times = medians(commands, args.runs, env)
    print(f"python -c pass: {base:.3f} s (median of {args.runs})")
    ok = True
    for cmd, t in zip(commands, times, strict=True):
        ratio = t / base
        ok &= ratio <= GOAL_RATIO
        print(f"zoo {' '.join(cmd):<62} cache hit {t:6.3f} s {ratio:5.1f}x  (goal <= {GOAL_RATIO:.0f}x)")
    growth = [times[2] / times[0], times[3] / times[1]]
    ok &= max(growth) <= GOAL_GROWTH
    print(f"mv2 hit / mnist hit: {growth[0]:.2f} (plain), {growth[1]:.2f} (with -o)  (goal <= {GOAL_GROWTH})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
