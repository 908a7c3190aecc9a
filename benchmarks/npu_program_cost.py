"""What the NPU-program level costs on a built program: the interpreter's runs of 8 samples and, where
zoo's interpreter has it (issue 58), the decoding of every convolution's constants that the level
compares with the TOSA graph's. Each .pte is timed in a process of its own, cold (no decoded weights
kept from before), on 8 random int8 inputs (the level's time does not depend on the values).

    .venv/bin/python benchmarks/npu_program_cost.py PTE[:FAST_SCRATCH] [PTE[:FAST_SCRATCH] ...] [--samples 8]

``FAST_SCRATCH`` is the size of region 2 in bytes (a U65 program's arena cache, as the build used:
``zoo.registry.npu.memory_fit.fast_scratch``); 0 if not given. Run it with ``PYTHONPATH`` at another
checkout to time that checkout's interpreter (the before of a change).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from typing import Any


def _one(pte: str, fast_scratch: int, samples: int) -> dict[str, object]:
    import numpy as np

    import zoo.registry.command_stream as cs
    from zoo.registry.pte.vela_payload import find_payloads

    try:  # the U85's interpreter where the checkout has one, picked as the level picks it
        from zoo.registry.command_stream import u85
    except ImportError:
        u85 = None  # type: ignore[assignment]

    def machine(payload: Any) -> Any:
        return u85 if u85 is not None and u85.is_u85(payload) else cs

    payloads = find_payloads(open(pte, "rb").read())  # noqa: SIM115
    rng = np.random.default_rng(0)
    out: dict[str, object] = {"pte": pte, "payloads": len(payloads)}
    started = time.perf_counter()
    try:
        if all(hasattr(machine(p), "constants") for p in payloads):
            for payload in payloads:
                machine(payload).constants(payload, fast_scratch=fast_scratch)
            out["constants_s"] = round(time.perf_counter() - started, 3)
        for _ in range(samples):
            for payload in payloads:
                given = [rng.integers(-128, 128, i.elements * i.element_size, dtype=np.int8).tobytes()
                         for i in payload.inputs]
                machine(payload).run(payload, given, fast_scratch=fast_scratch)
        out["outcome"] = "ran"
    except cs.StreamError as e:
        out["outcome"] = str(e)
    out["seconds"] = round(time.perf_counter() - started, 3)
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("ptes", nargs="+", help="PTE or PTE:FAST_SCRATCH")
    parser.add_argument("--samples", type=int, default=8)
    parser.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.one:
        pte, _, fast = args.ptes[0].partition(":")
        print(json.dumps(_one(pte, int(fast or 0), args.samples)))
        return
    print("| program | outcome | constants (s) | level, all (s) |\n| --- | --- | --- | --- |")
    for spec in args.ptes:
        proc = subprocess.run([sys.executable, __file__, spec, "--samples", str(args.samples), "--one"],
                              capture_output=True, text=True, check=True)
        r = json.loads(proc.stdout)
        print(f"| {r['pte'].rsplit('/', 1)[-1]} | {r['outcome']} | {r.get('constants_s', '-')} | {r['seconds']} |")


if __name__ == "__main__":
    main()
