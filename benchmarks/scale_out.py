"""Build a subset of the catalogue several ways and compare: --jobs 1, --jobs 2,
--executor ray on a two-node local Ray cluster (one CPU per node), and the same
with the results handed over through a shared remote (--ray-results).

Each run builds every model × target with ``--weights random --keep-going``
into a fresh cache, through the same ``zoo build`` code path (the Python API,
since the CLI takes one model or all of them). It reports the wall time of
each, the sum of the units' own compile times (recorded in their manifests),
Ray's overhead per task, and whether all the caches hold the same bytes as the
first run's.
Then it estimates the whole catalogue on a 10-node cluster from measured
per-unit compile times (``--unit-times CACHE``: a cache the full catalogue
was built into, e.g. by benchmarks/catalogue.py), by scheduling the units
longest first onto 10 nodes.

    .venv/bin/python benchmarks/scale_out.py [--models add,softmax,mnist,squeezenet1-1,resnet18,mv2]
        [--targets u55-128,u85-256] [--runs jobs1,jobs2,ray,ray-results] [--ray-results URL]
        [--unit-times /tmp/zoo-catalogue-cache] [--json out.json]

``--ray-results`` defaults to a fresh folder (the two nodes share this machine's disk).
"""

from __future__ import annotations

import argparse
import hashlib
import heapq
import json
import os
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path
from typing import Any

from _ray_cluster import local_cluster  # benchmarks/, on sys.path as the script's folder

PYTHON = sys.executable
NODES_FOR_ESTIMATE = 10

# Runs in a fresh interpreter, so each mode pays its own imports, as a user's command would.
_BUILD = textwrap.dedent("""
    import json, sys, time
    from zoo import FetchOptions, Zoo
    models, targets, executor, jobs, address, results = json.loads(sys.argv[1])
    opts = FetchOptions(weights="random", keep_going=True, force_build=True, jobs=jobs,
                        executor=executor, ray_address=address, ray_results=results)
    started = time.perf_counter()
    outcomes = Zoo().fetch_outcomes(models, targets, opts, notice=lambda m: print(m, file=sys.stderr))
    wall = time.perf_counter() - started
    print(json.dumps({"wall_s": wall, "failed": [o.to_json() for o in outcomes if not hasattr(o, "pte")]}))
""")


def _build(models: list[str], targets: list[str], executor: str | None, jobs: int, address: str | None,
           cache: Path, env: dict[str, str], results: str | None = None) -> dict[str, Any]:
    proc = subprocess.run([PYTHON, "-c", _BUILD, json.dumps([models, targets, executor, jobs, address, results])],
                          capture_output=True, text=True, env={**env, "ZOO_CACHE_DIR": str(cache)})
    if proc.returncode != 0:
        raise SystemExit(f"the {executor or 'local'} build failed:\n{proc.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    result["artifacts"] = _artifacts(cache)
    result["unit_s"] = _unit_seconds(cache)
    return result


def _manifests(cache: Path) -> list[dict[str, Any]]:
    return [json.loads(path.read_text()) for path in cache.glob("v*/entries/*/*/manifest.json")]


def _artifacts(cache: Path) -> dict[str, str]:
    """(model, target) → sha256 of the .pte and the header together."""
    out = {}
    for m in _manifests(cache):
        digests = sorted(f["sha256"] for f in m["files"] if f["kind"] in ("pte", "header"))
        out[f"{m['model']} {m['target']}"] = hashlib.sha256("".join(digests).encode()).hexdigest()[:16]
    return out


def _unit_seconds(cache: Path) -> dict[str, float]:
    """Each build unit's own compile time: the targets of a unit share it."""
    units: dict[str, float] = {}
    for m in _manifests(cache):
        family = "u85" if "u85" in m["target"] else ("portable" if m["target"] == "portable" else "u55/u65")
        units[f"{m['model']} {family}"] = float(m["build"]["seconds"])
    return units


def _schedule(times: list[float], workers: int) -> float:
    """Makespan of longest-first list scheduling: each unit to the node that frees up first."""
    nodes = [0.0] * workers
    heapq.heapify(nodes)
    for t in sorted(times, reverse=True):
        heapq.heappush(nodes, heapq.heappop(nodes) + t)
    return max(nodes)


def _ray_runs(models: list[str], targets: list[str], wanted: list[str], results: str, work: Path,
              env: dict[str, str]) -> dict[str, dict[str, Any]]:
    """The Ray runs in ``wanted``, on a two-node cluster started for them and stopped after."""
    ray_env = {**env, "RAY_AUTH_MODE": "disabled"}  # loopback only; a real cluster keeps token auth on
    runs: dict[str, dict[str, Any]] = {}
    with local_cluster(2, work, ray_env) as address:
        if "ray" in wanted:
            runs["ray 2 nodes"] = _build(models, targets, "ray", 1, address, work / "ray", ray_env)
            print(f"ray 2 nodes: {runs['ray 2 nodes']['wall_s']:.1f} s", flush=True)
        if "ray-results" in wanted:
            runs["ray results"] = _build(models, targets, "ray", 1, address, work / "ray-results", ray_env, results)
            print(f"ray results: {runs['ray results']['wall_s']:.1f} s (handed over through {results})", flush=True)
    return runs


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="add,softmax,mnist,squeezenet1-1,resnet18,mv2")
    parser.add_argument("--targets", default="u55-128,u85-256")
    parser.add_argument("--runs", default="jobs1,jobs2,ray,ray-results",
                        help="Which of jobs1, jobs2, ray and ray-results to run; the first is the byte reference.")
    parser.add_argument("--ray-results", help="Where the ray-results run hands artifacts over (default: a fresh folder).")
    parser.add_argument("--unit-times", type=Path, help="A cache holding the whole catalogue, for the 10-node estimate.")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    models, targets, wanted = args.models.split(","), args.targets.split(","), args.runs.split(",")
    unknown = set(wanted) - {"jobs1", "jobs2", "ray", "ray-results"}
    if unknown:
        parser.error(f"--runs: unknown run(s) {', '.join(sorted(unknown))}")
    work = Path(tempfile.mkdtemp(prefix="zoo-scale-out-"))
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    runs: dict[str, dict[str, Any]] = {}
    for name, jobs in (("jobs 1", 1), ("jobs 2", 2)):
        if name.replace(" ", "") in wanted:
            runs[name] = _build(models, targets, None, jobs, None, work / name.replace(" ", ""), env)
            print(f"{name}: {runs[name]['wall_s']:.1f} s", flush=True)

    if {"ray", "ray-results"} & set(wanted):
        runs.update(_ray_runs(models, targets, wanted, args.ray_results or str(work / "results"), work, env))

    first = next(iter(runs))
    base = runs[first]["artifacts"]
    if len(base) != len(models) * len(targets):
        raise SystemExit(f"expected {len(models) * len(targets)} artifacts, found {len(base)} in the {first} cache")
    same = {name: r["artifacts"] == base for name, r in runs.items()}
    units = len(runs[first]["unit_s"])
    print(f"\n{len(models)} models × {len(targets)} targets: {len(base)} artifacts in {units} units")
    print(f"{'run':12} {'wall':>8} {'sum of unit compile times':>26}  same bytes as {first}")
    for name, r in runs.items():
        print(f"{name:12} {r['wall_s']:>7.1f}s {sum(r['unit_s'].values()):>25.1f}s  {same[name]}")
    overhead = 0.0
    for name in ("ray 2 nodes", "ray results"):
        if name in runs:
            # Two nodes run two units at once: what the wall time exceeds the ideal schedule by, per unit.
            ideal = _schedule(list(runs[name]["unit_s"].values()), 2)
            runs[name]["overhead_s_per_task"] = per_task = (runs[name]["wall_s"] - ideal) / units
            overhead = overhead or per_task
            print(f"{name}: overhead {per_task:.2f} s per task (wall time beyond the best 2-node schedule of the "
                  f"units' own times, {ideal:.1f} s; those sum to {sum(runs[name]['unit_s'].values()):.1f} s)")
    estimate = None
    if args.unit_times:
        times = list(_unit_seconds(args.unit_times).values())
        one = sum(times)
        ten = _schedule(times, NODES_FOR_ESTIMATE) + max(overhead, 0.0) * len(times) / NODES_FOR_ESTIMATE
        estimate = {"units": len(times), "one_node_s": one, "ten_nodes_s": ten, "longest_unit_s": max(times)}
        print(f"Whole catalogue ({len(times)} units, from {args.unit_times}): {one / 60:.1f} min of compile time on one "
              f"node; on {NODES_FOR_ESTIMATE} nodes about {ten / 60:.1f} min (the longest unit alone is "
              f"{max(times) / 60:.1f} min).")
    if args.json:
        args.json.write_text(json.dumps({"models": models, "targets": targets, "runs": runs, "same_bytes": same,
                                         "ray_overhead_s_per_task": overhead, "estimate": estimate}, indent=2) + "\n")
    return 0 if all(same.values()) and not any(r["failed"] for r in runs.values()) else 1


if __name__ == "__main__":
    raise SystemExit(main())
