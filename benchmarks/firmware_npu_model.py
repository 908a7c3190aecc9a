"""A delegated program computed in QEMU by the stand-in's C model of the NPU (npu_model.c), against the host
interpreter (issue 58): ``zoo firmware mv2 -t u55-128 --weights random --io int8 --layout nhwc``, built with
``-DZOO_NPU_STANDIN=ON`` for QEMU's mps3-an547 (Cortex-M55, no NPU), run there; every output byte must equal
``zoo.registry.command_stream.run`` on the same input bytes (the samples the firmware holds, quantized by the
I/O helper's rule, checked against the input hashes the stand-in prints). Prints the operations the model ran,
the QEMU ticks of one inference, and the wall time of each step. Goal: one mv2 inference in QEMU in at most
3 minutes of wall time.

Run: .venv/bin/python benchmarks/firmware_npu_model.py [--model mv2 --target u55-128 --samples 1]
     [--runtime-cache DIR] [--vendor DIR]  (a lasting runtime cache skips ExecuTorch's build, about 5 minutes on 2 cores)
Uses the vendor snapshots (../shared/vendor, scripts/vendor_sources.py).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

from vendor_sources import lay_out  # noqa: E402

_cpu: dict[str, float] = {}
"""The CPU seconds of the last run of each command (its children included): on a busy machine, wall time is not."""
COMPUTED = " [npu stand-in: computed by zoo's model of the NPU, not the NPU]"


def _timed(cmd: list[str], **kw: Any) -> tuple[float, subprocess.CompletedProcess[str]]:
    start = time.perf_counter()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(cmd, capture_output=True, text=True, **kw)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    _cpu[cmd[0]] = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    if done.returncode != 0 and cmd[0] != "qemu-system-arm":
        raise SystemExit(f"{' '.join(cmd[:4])} ... failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return time.perf_counter() - start, done


def _fnv1a(data: bytes) -> str:
    h = 2166136261
    for b in data:
        h = ((h ^ b) * 16777619) & 0xFFFFFFFF
    return f"{h:08x}"


def _host_outputs(folder: Path, model: str, target: str, choices: dict[str, str], samples: int
                  ) -> tuple[list[bytes], list[list[bytes]]]:
    """The input bytes the firmware feeds (its samples through the I/O helper's rule) and the host interpreter's
    outputs for each, from the artifact zoo fetch hands out for the same choices (the project's .pte)."""
    import torch

    from zoo import Zoo
    from zoo.registry import command_stream
    from zoo.registry.numerics.io import IoParams
    from zoo.registry.numerics.samples import firmware_samples
    from zoo.registry.pte.vela_payload import find_payloads

    zoo = Zoo()
    art = zoo.fetch(model, target, build=False, **choices)  # type: ignore[arg-type]
    if art.pte.read_bytes() != (folder / "model" / art.pte.name).read_bytes():
        raise SystemExit("the project's .pte is not the artifact zoo fetch hands out")
    (payload,) = find_payloads(art.pte.read_bytes())
    io = dict(art.manifest.io or {})
    fed = firmware_samples(zoo.model(model), io, samples)
    (param,) = IoParams.from_record(io).inputs
    given = [param.quantize(torch.tensor(s[0], dtype=torch.float32)).numpy().tobytes() for s in fed.inputs]
    return given, [command_stream.run(payload, [g]) for g in given]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="mv2")
    parser.add_argument("--target", default="u55-128")
    parser.add_argument("--samples", type=int, default=1)
    parser.add_argument("--runtime-cache", type=Path, default=None)
    parser.add_argument("--vendor", type=Path, default=ROOT.parent / "shared" / "vendor",
                        help="the source snapshots (default: ../shared/vendor)")
    parser.add_argument("--weights", default="random")
    parser.add_argument("--io", default="int8")
    parser.add_argument("--layout", default="nhwc")
    args = parser.parse_args()
    choices = {"weights": args.weights, "io": args.io, "layout": args.layout}
    flags = [x for k, v in choices.items() for x in (f"--{k}", v)]
    with tempfile.TemporaryDirectory(prefix="zoo-npu-model-bench-") as tmp:
        root = Path(tmp)
        folder = root / "fw"
        write, _ = _timed([sys.executable, "-m", "zoo", "firmware", args.model, "-t", args.target, "-o", str(folder),
                           "--samples", str(args.samples), *flags], env={**os.environ})
        sources = lay_out(root / "vendor", args.vendor)
        runtime = args.runtime_cache or root / "runtime"
        defines = [f"-D{k}={v}" for k, v in sources.items()] + [f"-DZOO_RUNTIME_CACHE={runtime}", "-DZOO_NPU_STANDIN=ON"]
        configure, _ = _timed(["cmake", "-S", str(folder), "-B", str(folder / "build"), "-G", "Ninja", *defines])
        build, _ = _timed(["cmake", "--build", str(folder / "build")])
        qemu, done = _timed(["qemu-system-arm", "-M", "mps3-an547", "-nographic", "-monitor", "none", "-serial", "none",
                             "-semihosting-config", "enable=on,target=native", "-kernel",
                             str(folder / "build" / "firmware.elf")], timeout=1800)
        out = done.stdout
        if done.returncode != 0 or "DONE 0" not in out:
            raise SystemExit(f"the firmware failed (exit {done.returncode}):\n{out[-3000:]}")
        records = [json.loads(line.split(" ", 1)[1]) for line in out.splitlines() if line.startswith("npu_standin {")]
        ops = [r["operations"] for r in records if "operations" in r]
        stops = [r for r in records if "not_implemented" in r or "stream_error" in r]
        ticks = [int(m) for m in re.findall(r"^A \d+ \d+ label -?\d+ ticks (\d+)", out, re.M)]
        device: dict[int, bytes] = {}
        for line in out.splitlines():
            if line.startswith("Y ") and line.endswith(COMPUTED):
                _, sample, index, *values = line.removesuffix(COMPUTED).split()
                if index == "0":
                    device[int(sample)] = bytes(int(v) & 0xFF for v in values)
        given, host = _host_outputs(folder, args.model, args.target, choices, args.samples)
        hashes = [r["inputs"][0]["fnv1a"] for r in records if "inputs" in r]
        same_input = hashes == [_fnv1a(g) for g in given]
        equal = same_input and not stops and [device.get(s) for s in range(args.samples)] == [h[0] for h in host]
        hz = re.search(r"ticks per run at (\d+) Hz", out)
        print(f"{args.model} for {args.target} ({' '.join(flags)}), {args.samples} sample(s), built with the stand-in")
        print(f"  operations run by npu_model per inference: {ops[:1]}; stops: {stops or 'none'}")
        print(f"  outputs bit-equal to the host interpreter's on the same input bytes: {equal} "
              f"(input hashes match: {same_input})")
        print(f"  QEMU ticks per inference: {ticks} at {hz.group(1) if hz else '?'} Hz")
        print(f"  wall time (s): zoo firmware {write:.1f}, configure {configure:.1f}, build {build:.1f}, "
              f"QEMU run {qemu:.1f} ({qemu / max(args.samples, 1):.1f} per inference, with start-up; "
              f"{_cpu['qemu-system-arm']:.1f} s of CPU)")
        print(f"  load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
        if not equal:
            raise SystemExit(1)


if __name__ == "__main__":
    main()
