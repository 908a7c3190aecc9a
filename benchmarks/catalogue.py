"""Build the whole catalogue and time it: every model, random weights, per target.

Runs, in a fresh cache unless --cache-dir is given,

    zoo build --all-models -t TARGETS --weights random --keep-going --jobs N

then prints ``zoo report --all`` and the wall time, and writes the catalogue
page (``--html``). A long run (tens of minutes): it belongs outside the test suite.

    .venv/bin/python benchmarks/catalogue.py [--targets u55-128,u85-256] [--jobs 2]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ZOO = Path(sys.executable).with_name("zoo")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--targets", default="u55-128,u85-256")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--weights", default="random")
    parser.add_argument("--cache-dir", type=Path, help="Reuse this cache (default: a fresh one, so every model compiles).")
    parser.add_argument("--html", type=Path, default=Path("out/catalogue.html"))
    parser.add_argument("--json", type=Path, help="Also write the report as JSON here.")
    args = parser.parse_args()

    cache = args.cache_dir or Path(tempfile.mkdtemp(prefix="zoo-catalogue-"))
    env = {**os.environ, "ZOO_CACHE_DIR": str(cache)}
    command = [str(ZOO), "build", "--all-models", "-t", args.targets, "--weights", args.weights,
               "--keep-going", "--jobs", str(args.jobs), "-q"]
    print("$", " ".join(command[1:]), f"(cache: {cache})", flush=True)
    started = time.perf_counter()
    build = subprocess.run(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    seconds = time.perf_counter() - started
    failed_lines = [line for line in build.stderr.splitlines() if line.startswith("failed:")]

    # Not filtered by --weights: models without that variant (add, softmax) build with their own.
    report = subprocess.run([str(ZOO), "report", "--all"], env=env, capture_output=True, text=True)
    print(report.stdout or report.stderr)
    args.html.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run([str(ZOO), "report", "--all", "--html", str(args.html)], env=env, check=True, capture_output=True)
    if args.json:
        data = subprocess.run([str(ZOO), "report", "--all", "--json"], env=env,
                              check=True, capture_output=True, text=True).stdout
        args.json.write_text(data)
        cells = json.loads(data)["cells"]
        print(f"{sum(c['status'] == 'built' for c in cells)} built, {sum(c['status'] == 'failed' for c in cells)} failed")
    for line in failed_lines:
        print(line)
    print(f"\nbuilt the catalogue for {args.targets} with --jobs {args.jobs} in {seconds / 60:.1f} min "
          f"({seconds:.0f} s wall) on {os.cpu_count()} cores, {platform.machine()}; exit code {build.returncode}")
    print(f"page: {args.html}")
    # A failed cell is a result, not an error; anything else (exit 2, a crash) is.
    return 0 if build.returncode in (0, 1) and report.returncode == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
