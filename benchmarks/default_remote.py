"""What the default remote costs a fetch while no catalogue is published for this version.

A cache miss (``zoo fetch add -t u55-128 --no-build``, which then fails: nothing is
built) runs in fresh interpreters, two ways in alternating rounds:

- ``default``: no zoo.toml, so the default remote is tried, with ``HF_ENDPOINT`` at a
  loopback port where nothing listens (the connection is refused);
- ``none``: zoo.toml says ``remotes = []``, as fetches ran before the default remote.

The goal is under 50 ms between their medians. A refused connection is the quick
case; a network that drops packets costs up to ``PROBE_TIMEOUT_S`` instead.

Run: .venv/bin/python benchmarks/default_remote.py [--runs N]
"""

from __future__ import annotations

import argparse
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _timing import environment

GOAL_MS = 50.0
COMMAND = ["fetch", "add", "-t", "u55-128", "--no-build"]


def refusing_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])  # closed on return: nothing listens there


def once(cwd: Path, env: dict[str, str]) -> tuple[float, str]:
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "zoo", *COMMAND], cwd=cwd, env=env, capture_output=True, text=True)
    took = time.perf_counter() - start
    if done.returncode != 1 or "not in the cache" not in done.stderr:
        raise SystemExit(f"expected a cache miss that fails without building, got {done.returncode}: {done.stderr}")
    return took, done.stderr


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="zoo-bench-default-"))
    with_default, without = root / "default", root / "none"
    with_default.mkdir()
    without.mkdir()
    (without / "zoo.toml").write_text("remotes = []\n")
    env = environment(ZOO_CACHE_DIR=str(root / "cache"), HF_ENDPOINT=f"http://127.0.0.1:{refusing_port()}")
    env.pop("ZOO_CONFIG", None)
    env.pop("ZOO_OFFLINE", None)

    _, said = once(with_default, env)  # warms the bytecode and file caches, and shows the line
    once(without, env)
    times: dict[str, list[float]] = {"default": [], "none": []}
    for _ in range(args.runs):
        times["default"].append(once(with_default, env)[0])
        times["none"].append(once(without, env)[0])
    default, none = (statistics.median(times[k]) * 1000 for k in ("default", "none"))
    extra = default - none
    print(f"what the default remote said: {said.splitlines()[0]}")
    print(f"median of {args.runs}: default remote {default:.1f} ms, no remote {none:.1f} ms; "
          f"extra {extra:.1f} ms (goal: under {GOAL_MS:.0f} ms)")
    return 0 if extra < GOAL_MS else 1


if __name__ == "__main__":
    raise SystemExit(main())
