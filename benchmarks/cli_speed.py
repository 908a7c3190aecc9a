"""Wall time of the commands that must stay light (goal: under 0.3 s each).

Run: .venv/bin/python benchmarks/cli_speed.py [--runs N]
Each command runs N times in a fresh interpreter; the median is reported.
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
COMMANDS = [
    ["--help"],
    ["--version"],
    ["list"],
    ["targets"],
    ["info", "mv2"],
    ["plugins"],
    ["cache", "ls"],
]


def time_command(args: list[str], runs: int, env: dict[str, str]) -> float:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "zoo", *args], env=env, check=True, capture_output=True)
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--extra", nargs="*", default=[], help="extra commands, each a quoted string")
    args = parser.parse_args()
    env = dict(os.environ)
    env.setdefault("ZOO_CACHE_DIR", tempfile.mkdtemp(prefix="zoo-bench-"))
    commands = COMMANDS + [extra.split() for extra in args.extra]
    worst = 0.0
    print(f"{'command':<40} {'median':>8}   goal {GOAL_S:.1f} s")
    for cmd in commands:
        t = time_command(cmd, args.runs, env)
        worst = max(worst, t)
        flag = "ok" if t < GOAL_S else "SLOW"
        print(f"zoo {' '.join(cmd):<36} {t:8.3f}s  {flag}")
    print(f"slowest: {worst:.3f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
