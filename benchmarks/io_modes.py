"""What each I/O boundary costs and saves: one model, every ``--io`` / ``--layout``, one target.

For each variant it runs ``zoo build MODEL -t TARGET --io IO --layout LAYOUT --json``
in a fresh cache and records the build time, Vela's estimate, the CPU work
(operator nodes and kernels to link), the input the firmware fills, and the
delegate payload's digest (int8 I/O must leave it unchanged), Vela's total cycles and the
cycles of the NPU operators that transpose the input (the manifest's ``input_transposes``), and
the line ``zoo fetch`` prints about what ``--io int8 --layout nhwc`` would save (a cache hit,
fetched after the build). Then it builds the second variant again in another fresh cache to show
the bytes repeat.

    .venv/bin/python benchmarks/io_modes.py [--model mv2] [--target u55-128] [--weights random]
    .venv/bin/python benchmarks/io_modes.py --model mnist --weights '' --verify \
        --variants float:nchw,int8:nchw,uint8:nchw,pixels:nchw   # + top-1 on the held-out digits
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from zoo.registry.pte.vela_payload import find_payloads

ZOO = Path(sys.executable).with_name("zoo")
VARIANTS = [("float", "nchw"), ("int8", "nchw"), ("int8", "nhwc"), ("uint8", "nhwc"), ("pixels", "nhwc")]


def build(model: str, target: str, weights: str | None, io: str, layout: str, verify: bool = False) -> dict[str, Any]:
    cache = tempfile.mkdtemp(prefix="zoo-io-")
    command = [str(ZOO), "build", model, "-t", target, "--io", io, "--layout", layout, "--json"]
    command += ["--verify"] if verify else []
    command += ["--weights", weights] if weights else []
    started = time.perf_counter()
    proc = subprocess.run(command, capture_output=True, text=True, env={**os.environ, "ZOO_CACHE_DIR": cache})
    seconds = time.perf_counter() - started
    if proc.returncode != 0:
        return {"io": io, "layout": layout, "error": proc.stderr.strip().splitlines()[-1]}
    art = json.loads(proc.stdout)
    m = art["manifest"]
    fetch = [str(ZOO), "fetch", model, "-t", target, "--io", io, "--layout", layout, "--no-build"]
    fetch += ["--weights", weights] if weights else []
    hit = subprocess.run(fetch, capture_output=True, text=True, env={**os.environ, "ZOO_CACHE_DIR": cache})
    saving = [line.strip() for line in hit.stderr.splitlines() if " would save " in line]
    transposes = [t for p in m["vela"]["partitions"] for t in p["input_transposes"]]
    pte = Path(art["pte"]).read_bytes()
    payloads = b"".join(pte[p.offset:p.offset + p.length] for p in find_payloads(pte))
    total = m["vela"]["total"]
    given = m["io"]["inputs"][0]
    return {
        "io": io, "layout": layout, "key": m["key"][:12], "build_s": round(seconds, 1),
        "vela_ms": round(total["inference_time_ms"], 3), "sram_bytes": total["sram_bytes"],
        "total_cycles": total["total_cycles"], "input_transposes": len(transposes),
        "transpose_cycles": sum(t["cycles"] for t in transposes), "saving": saving[0] if saving else "",
        "cpu_ops": m["delegation"]["cpu_ops"] + m["delegation"].get("cpu_quantize_ops", 0),
        "kernels": m["cpu_operators"], "npu_ops": m["delegation"]["npu_ops"],
        "input": f"{given['dtype']} {[given['shape'][d] for d in given['dim_order']]}",
        "pte_sha256": hashlib.sha256(pte).hexdigest()[:16], "payload_sha256": hashlib.sha256(payloads).hexdigest()[:16],
        "metrics": ((m.get("verification") or {}).get("numerics") or {}).get("metrics") or [],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="mv2")
    parser.add_argument("--target", default="u55-128")
    parser.add_argument("--weights", default="random", help="'random' works offline; '' for the model's default")
    parser.add_argument("--variants", default=",".join(f"{io}:{layout}" for io, layout in VARIANTS),
                        help="IO:LAYOUT pairs; the second is also rebuilt to compare the bytes")
    parser.add_argument("--verify", action="store_true", help="Also run the numerical check and show the model's metrics.")
    parser.add_argument("--json", type=Path, help="Also write the rows here.")
    args = parser.parse_args()
    variants = [tuple(v.split(":")) for v in args.variants.split(",")]
    rows = [build(args.model, args.target, args.weights or None, io, layout, args.verify) for io, layout in variants]
    again = build(args.model, args.target, args.weights or None, *variants[1])
    print(f"{args.model} for {args.target} ({args.weights or 'default'} weights)")
    print(f"{'io':7} {'layout':6} {'build':>7} {'Vela':>9} {'cycles':>10} {'transposes':>16} {'SRAM':>9} {'CPU ops':>7}  "
          f"{'input':24} payload           pte")
    for r in rows:
        if "error" in r:
            print(f"{r['io']:7} {r['layout']:6} failed: {r['error']}")
            continue
        transposes = f"{r['input_transposes']} ({r['transpose_cycles']:,})"
        print(f"{r['io']:7} {r['layout']:6} {r['build_s']:>6.1f}s {r['vela_ms']:>7.3f}ms {r['total_cycles']:>10,} "
              f"{transposes:>16} {r['sram_bytes'] / 1024:>7.1f}Ki "
              f"{r['cpu_ops']:>7}  {r['input']:24} {r['payload_sha256']}  {r['pte_sha256']}"
              + "".join(f"  {a['name']} float {a['float']:.4g}{a['unit']}, program {a['program']:.4g}{a['unit']} "
                        f"on {a['samples']} {a['dataset']} samples" for a in r.get("metrics", [])))
    for r in rows:
        if r.get("saving"):
            print(f"zoo fetch, {r['io']} {r['layout']}: {r['saving']}")
    repeat = "identical" if again.get("pte_sha256") == rows[1].get("pte_sha256") else "DIFFERENT"
    print(f"rebuild of {variants[1][0]}/{variants[1][1]} in a fresh cache: {repeat} bytes")
    if args.json:
        args.json.write_text(json.dumps({"model": args.model, "target": args.target, "rows": rows, "rebuild": again}, indent=2) + "\n")
    return 0 if all("error" not in r for r in rows) and repeat == "identical" else 1


if __name__ == "__main__":
    raise SystemExit(main())
