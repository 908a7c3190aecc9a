"""Build the whole catalogue and time it: every model, random weights, per target.

Runs, in a fresh cache unless --cache-dir is given,

    zoo build --all-models -t TARGETS --weights random --keep-going --jobs N

(with ``--ray-nodes N``: ``--executor ray`` on a local cluster of N one-CPU nodes
started for it), then prints ``zoo report --all`` and the wall time, and writes
the catalogue page (``--html``). ``--same-as CACHE`` then compares every artifact
with the one of the same key in another cache (e.g. a local build's) and fails
if any file differs. A long run (tens of minutes): it belongs outside the test suite.

    .venv/bin/python benchmarks/catalogue.py [--targets u55-128,u85-256] [--jobs 2]
        [--ray-nodes 2] [--same-as CACHE] [--cache-dir CACHE]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from _ray_cluster import local_cluster  # benchmarks/, on sys.path as the script's folder

ZOO = Path(sys.executable).with_name("zoo")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--targets", default="u55-128,u85-256")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--weights", default="random")
    parser.add_argument("--cache-dir", type=Path, help="Reuse this cache (default: a fresh one, so every model compiles).")
    parser.add_argument("--html", type=Path, default=Path("out/catalogue.html"))
    parser.add_argument("--json", type=Path, help="Also write the report as JSON here.")
    parser.add_argument("--ray-nodes", type=int, help="Build with --executor ray on a local cluster of this many "
                                                      "one-CPU nodes (instead of --jobs).")
    parser.add_argument("--same-as", type=Path, help="Compare every artifact with the same key's in this cache.")
    parser.add_argument("--models", help="Only these models (comma-separated), one 'zoo build MODEL' each, "
                                         "instead of --all-models.")
    args = parser.parse_args()

    cache = args.cache_dir or Path(tempfile.mkdtemp(prefix="zoo-catalogue-"))
    env = {**os.environ, "ZOO_CACHE_DIR": str(cache)}
    env.pop("RAY_ADDRESS", None)
    command = [str(ZOO), "build", "-t", args.targets, "--weights", args.weights, "--keep-going", "-q"]
    models = args.models.split(",") if args.models else ["--all-models"]
    with contextlib.ExitStack() as stack:
        if args.ray_nodes:
            env["RAY_AUTH_MODE"] = "disabled"  # loopback only; a real cluster keeps token auth on
            work = Path(tempfile.mkdtemp(prefix="zoo-catalogue-ray-"))
            address = stack.enter_context(local_cluster(args.ray_nodes, work, env))
            command += ["--executor", "ray", "--ray-address", address]
            how = f"on a {args.ray_nodes}-node Ray cluster"
        else:
            command += ["--jobs", str(args.jobs)]
            how = f"with --jobs {args.jobs}"
        print("$", " ".join(command[1:]), "|".join(models), f"(cache: {cache})", flush=True)
        started = time.perf_counter()
        builds = [subprocess.run([*command, model], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
                  for model in models]
        seconds = time.perf_counter() - started
    failed_lines = [line for b in builds for line in b.stderr.splitlines() if line.startswith("failed:")]
    returncode = max(b.returncode for b in builds)

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
    print(f"\nbuilt the catalogue for {args.targets} {how} in {seconds / 60:.1f} min "
          f"({seconds:.0f} s wall) on {os.cpu_count()} cores, {platform.machine()}; exit code {returncode}")
    print(f"page: {args.html}")
    same = _same_bytes(cache, args.same_as) if args.same_as else True
    # A failed cell is a result, not an error; anything else (exit 2, a crash) is.
    return 0 if returncode in (0, 1) and report.returncode == 0 and same else 1


def _manifests(cache: Path) -> Iterator[dict[str, Any]]:
    for path in sorted(cache.glob("v*/entries/*/*/manifest.json")):
        yield json.loads(path.read_text())


def _same_bytes(cache: Path, other: Path) -> bool:
    """Every artifact of ``cache`` against the same key's in ``other``: True if no file differs."""
    theirs = {m["key"]: m for m in _manifests(other)}
    compared, differ, missing = 0, [], 0
    for m in _manifests(cache):
        there = theirs.get(m["key"])
        if there is None:
            missing += 1
            continue
        compared += 1
        mine = {f["name"]: f["sha256"] for f in m["files"]}
        if mine != {f["name"]: f["sha256"] for f in there["files"]}:
            differ.append(f"{m['model']} for {m['target']}")
    print(f"same bytes as {other}: {compared - len(differ)} of {compared} artifacts identical, file by file"
          f"{f'; {missing} not built there' if missing else ''}")
    for name in differ:
        print(f"  differs: {name}")
    return not differ


if __name__ == "__main__":
    sys.exit(main())
