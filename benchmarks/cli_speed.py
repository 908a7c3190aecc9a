"""Wall time of the commands that must stay light, and its ratio to the interpreter's
own start (``python -c pass``, measured in the same rounds). Goals: under 0.3 s, and
``list``, ``targets`` and ``info`` at most 3x the interpreter.

Two columns: a repeated command, answered from its snapshot (zoo.cli.snapshot), and
the full run that the first command after any change makes (``ZOO_SNAPSHOTS=0``).
The goals are judged on the first; the second must stay under 0.3 s.

Run: .venv/bin/python benchmarks/cli_speed.py [--runs N] [--extra "report --all" ...]
"""

from __future__ import annotations

import argparse
import sys
import tempfile

from _timing import environment, medians

GOAL_S = 0.3
GOAL_RATIO = 3.0
RATIO_GOAL_FOR = {"list", "targets", "info"}
COMMANDS = [
    ["--help"],
    ["--version"],
    ["list"],
    ["targets"],
    ["info", "mv2"],
    ["plugins"],
    ["cache", "ls"],
]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--extra", nargs="*", default=[], help="extra commands, each a quoted string")
    args = parser.parse_args()
    env = environment()
    env.setdefault("ZOO_CACHE_DIR", tempfile.mkdtemp(prefix="zoo-bench-"))
    commands = COMMANDS + [extra.split() for extra in args.extra]
    base, times = medians(commands, args.runs, env)
    full_base, full = medians(commands, args.runs, {**env, "ZOO_SNAPSHOTS": "0"})
    print(f"python -c pass: {base:.3f} s (median of {args.runs}); {full_base:.3f} s in the full runs' rounds")
    print(f"goals: < {GOAL_S:.1f} s; list/targets/info <= {GOAL_RATIO:.0f}x (repeated)")
    print(f"{'command':<36} {'repeated':>9} {'ratio':>6} {'full run':>9} {'ratio':>6}")
    ok = True
    for cmd, t, f in zip(commands, times, full, strict=True):
        ratio = t / base
        good = t < GOAL_S and f < GOAL_S and (cmd[0] not in RATIO_GOAL_FOR or ratio <= GOAL_RATIO)
        ok &= good
        print(f"zoo {' '.join(cmd):<32} {t:8.3f}s {ratio:5.1f}x {f:8.3f}s {f / full_base:5.1f}x  {'ok' if good else 'MISSED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
