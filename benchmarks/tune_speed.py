"""How long ``zoo tune`` takes, end to end, in a fresh cache: the search, then int8, the recipe,
a16w8 and the weight transforms lowered, checked and costed by Vela, and which is the fastest
within the goal.

    .venv/bin/python benchmarks/tune_speed.py silero-vad -t u85-256 --max-drop f1=0.01 --no-transforms
    .venv/bin/python benchmarks/tune_speed.py mnist -t u55-128 --transform palette16 --transform palette8
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ZOO = Path(sys.executable).with_name("zoo")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model")
    parser.add_argument("-t", "--target", required=True)
    args, rest = parser.parse_known_args()  # the rest go to zoo tune as they are
    work = Path(tempfile.mkdtemp(prefix="zoo-tune-"))
    command = [str(ZOO), "tune", args.model, "-t", args.target, "-o", str(work / "recipe.json"), "--json", *rest]
    started = time.perf_counter()
    proc = subprocess.run(command, capture_output=True, text=True, env={**os.environ, "ZOO_CACHE_DIR": str(work / "cache")})
    seconds = time.perf_counter() - started
    if proc.returncode != 0:
        print(proc.stderr[-2000:], file=sys.stderr)
        return proc.returncode
    result = json.loads(proc.stdout)
    print(f"zoo tune {args.model} -t {args.target} {' '.join(rest)}: {seconds:.0f} s end to end "
          f"({result['seconds']:.0f} s of search, {os.cpu_count()} CPUs)")
    print(f"recipe: {result['chosen']['label']}: {json.dumps(result['chosen']['recipe']['modules'])}")
    for b in result["built"]:
        metrics = "; ".join(f"{m['name']} {m['program']:.4g}" for m in b["metrics"])
        vela = "-" if b["vela_ms"] is None else f"{b['vela_ms']:.3f} ms"
        print(f"  {b['label']}: numerics {'passed' if b['numerics_passed'] else 'FAILED'}; {metrics}; Vela {vela}; "
              f"SRAM {b['sram_bytes']} B{'; ' + b['error'] if b['error'] else ''}")
    fastest = result.get("fastest")
    print(f"fastest within the goal: {fastest['label']} ({fastest['precision']})" if fastest else
          "fastest within the goal: none")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
