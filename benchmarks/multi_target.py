"""Time building all 11 Ethos-U targets: one full pipeline per target vs ``--target all``.

In one process (imports paid once, before timing):
  one      ``compile_model`` for ethos-u55-128
  naive    ``compile_model`` once per target, as the seeds' scripts do
  all      ``compile_targets`` for every target: one lowering per TOSA spec, then Vela per target
and end to end, each in a fresh process with an empty cache:
  `zoo build MODEL -t u55-128`, `zoo build MODEL --target all` and `... --target all --jobs 2`.
It also checks that the naive and the multi-target .pte files are byte-identical.

    python benchmarks/multi_target.py [--models mv2,mnist] [--no-naive] [--no-cli]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time


def _cli(args: list[str]) -> float:
    with tempfile.TemporaryDirectory(prefix="zoo-bench-") as cache:
        env = {**os.environ, "ZOO_CACHE_DIR": cache}
        started = time.perf_counter()
        subprocess.run([sys.executable, "-m", "zoo", "build", *args, "-q"], env=env, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", default="mv2,mnist")
    parser.add_argument("--no-naive", action="store_true", help="skip the one-pipeline-per-target run")
    parser.add_argument("--no-cli", action="store_true", help="skip the fresh-process runs")
    args = parser.parse_args()

    from zoo import Zoo
    from zoo.registry.compile import compile_model, compile_targets
    from zoo.registry.compile.pipeline import _import_stack
    from zoo.registry.npu.targets import ACCELERATORS

    zoo = Zoo()
    _import_stack()
    print(f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at start", flush=True)
    for model in args.models.split(","):
        spec = zoo.model(model)
        weights = "random" if model == "mv2" else None
        targets = [zoo.target(a) for a in ACCELERATORS]
        one_target = zoo.target("ethos-u55-128")

        started = time.perf_counter()
        compile_model(spec, one_target, weights=weights)
        one = time.perf_counter() - started
        print(f"{model}: one target (u55-128), in process: {one:.1f} s", flush=True)

        started = time.perf_counter()
        multi = compile_targets(spec, targets, weights=weights)
        every = time.perf_counter() - started
        print(f"{model}: --target all ({len(targets)} targets), in process: {every:.1f} s "
              f"= {every / one:.2f}x one target", flush=True)

        if not args.no_naive:
            started = time.perf_counter()
            naive = [compile_model(spec, t, weights=weights) for t in targets]
            separate = time.perf_counter() - started
            same = sum(a.pte == b.pte for a, b in zip(naive, multi, strict=True))
            print(f"{model}: one pipeline per target, in process: {separate:.1f} s; "
                  f"--target all is {separate / every:.1f}x faster; {same}/{len(targets)} .pte byte-identical",
                  flush=True)

        if not args.no_cli:
            extra = ["--weights", weights] if weights else []
            single = _cli([model, "-t", "u55-128", *extra])
            print(f"{model}: `zoo build -t u55-128`, fresh process: {single:.1f} s", flush=True)
            for jobs in (1, 2):
                wall = _cli([model, "--target", "all", "--jobs", str(jobs), *extra])
                print(f"{model}: `zoo build --target all --jobs {jobs}`, fresh process: {wall:.1f} s "
                      f"= {wall / single:.2f}x one target", flush=True)
    print(f"load average {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
