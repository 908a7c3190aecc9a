"""Wall time of `zoo fetch` from the cache, as a ratio to the interpreter's own start
(``python -c pass``, measured in the same rounds), and of the local compile that fills it.

Goals: a cache hit of any model at most 4x the interpreter, and mv2's hit at most
1.2x mnist's: a hand-out's cost must not grow with the model (mv2's header is 20 MB).

Two columns: a repeated fetch, answered from its snapshot (zoo.cli.snapshot: the
hand-out's files hashed again and copied where missing), and the full run that the
first fetch after any change makes (``ZOO_SNAPSHOTS=0``).

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
    full_base, full = medians(commands, args.runs, {**env, "ZOO_SNAPSHOTS": "0"})
    print(f"python -c pass: {base:.3f} s (median of {args.runs}); {full_base:.3f} s in the full runs' rounds")
    print(f"cache hits; goal <= {GOAL_RATIO:.0f}x (repeated)")
    print(f"{'command':<64} {'repeated':>9} {'ratio':>6} {'full run':>9} {'ratio':>6}")
    ok = True
    for cmd, t, f in zip(commands, times, full, strict=True):
        ratio = t / base
        ok &= ratio <= GOAL_RATIO
        print(f"zoo {' '.join(cmd):<60} {t:8.3f}s {ratio:5.1f}x {f:8.3f}s {f / full_base:5.1f}x")
    growth = [times[2] / times[0], times[3] / times[1]]
    full_growth = [full[2] / full[0], full[3] / full[1]]
    ok &= max(growth) <= GOAL_GROWTH
    print(f"mv2 hit / mnist hit, repeated: {growth[0]:.2f} (plain), {growth[1]:.2f} (with -o); full runs: "
          f"{full_growth[0]:.2f}, {full_growth[1]:.2f}  (goal <= {GOAL_GROWTH})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
