"""Wall time of commands in fresh interpreters, as a ratio to the interpreter's own start.

Each round runs ``python -c pass`` and then every command once, so a busy moment
slows the baseline and the commands alike; medians over the rounds. The bytecode
cache is allowed (``PYTHONDONTWRITEBYTECODE`` removed) and warmed by one unmeasured
round, as on a user's machine after the first run.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence


def environment(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return {**env, **extra}


def _once(cmd: Sequence[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(list(cmd), env=env, check=True, capture_output=True)
    return time.perf_counter() - start


def medians(commands: Sequence[Sequence[str]], runs: int, env: dict[str, str]) -> tuple[float, list[float]]:
    """(median of ``python -c pass``, median of each of ``commands``): zoo commands as argument lists."""
    baseline_cmd = [sys.executable, "-c", "pass"]
    full = [[sys.executable, "-m", "zoo", *c] for c in commands]
    for cmd in [baseline_cmd, *full]:  # warm the bytecode and file caches
        _once(cmd, env)
    base: list[float] = []
    each: list[list[float]] = [[] for _ in full]
    for _ in range(runs):
        base.append(_once(baseline_cmd, env))
        for samples, cmd in zip(each, full, strict=True):
            samples.append(_once(cmd, env))
    return statistics.median(base), [statistics.median(s) for s in each]
