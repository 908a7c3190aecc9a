"""A U85 program in QEMU: the firmware of mnist and mv2 (random weights) for u85-256 laid out for the Corstone-300
(``zoo firmware --board corstone-300``), built with the stand-in, run in QEMU's Cortex-M55 machine, where
npu_model_u85.c computes the Ethos-U85 program (QEMU has no Cortex-M85). Reports the build, the ticks of one
inference at 32 MHz (SysTick: QEMU's clock, not the NPU's) and the wall time of the QEMU run, and checks every
delegate output against the host U85 interpreter on the bytes the firmware handed the NPU.
Goal (issue 58): one mv2 inference through the C model in QEMU within 3 minutes of wall time, on 2 cores.

Run: .venv/bin/python benchmarks/npu_model_u85_qemu.py [--models mnist mv2] [--precision a16w8] [--runtime DIR]
Uses the vendor snapshots (../shared/vendor, scripts/vendor_sources.py); the builds come from the zoo cache.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

from vendor_sources import lay_out  # noqa: E402


def _run(cmd: list[str]) -> tuple[float, str]:
    start = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"{' '.join(cmd[:3])} ... failed ({done.returncode}):\n{done.stdout[-3000:]}{done.stderr[-3000:]}")
    return time.perf_counter() - start, done.stdout


def main() -> None:
    from zoo import Zoo
    from zoo._api.firmware import write_firmware
    from zoo._options import FetchOptions
    from zoo.registry.command_stream.u85 import run as u85_run
    from zoo.registry.pte.vela_payload import find_payloads

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", nargs="+", default=["mnist", "mv2"])
    parser.add_argument("--precision", default=None, help="a16w8: 16-bit activations (default: int8)")
    parser.add_argument("--runtime", type=Path, default=None, help="a lasting runtime cache (default: a fresh one)")
    parser.add_argument("--vendor", type=Path, default=ROOT.parent / "shared" / "vendor", help="the source snapshots")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="zoo-u85-qemu-") as tmp:
        root = Path(tmp)
        sources = lay_out(root / "vendor", args.vendor)
        runtime = args.runtime or root / "runtime"
        print("| model, u85-256 | operations | ticks per inference | QEMU run (wall) | build | outputs |")
        print("| --- | --- | --- | --- | --- | --- |")
        for model in args.models:
            folder = root / model
            options = FetchOptions(weights="random" if model == "mv2" else None, precision=args.precision)
            art, _ = write_firmware(Zoo(), model, "u85-256", folder, options, board="corstone-300", samples=1)
            configure = ["cmake", "-S", str(folder), "-B", str(folder / "build"), "-G", "Ninja",
                         *(f"-D{k}={v}" for k, v in sources.items()), f"-DZOO_RUNTIME_CACHE={runtime}",
                         "-DZOO_NPU_STANDIN=ON", "-DZOO_NPU_STANDIN_BYTES=ON"]
            built = _run(configure)[0] + _run(["cmake", "--build", str(folder / "build")])[0]
            wall, out = _run(["qemu-system-arm", "-M", "mps3-an547", "-nographic", "-monitor", "none", "-serial", "none",
                              "-semihosting-config", "enable=on,target=native", "-kernel", str(folder / "build" / "firmware.elf")])
            records = [json.loads(line.split(" ", 1)[1]) for line in out.splitlines() if line.startswith("npu_standin {")]
            ops = next(r["operations"] for r in records if "operations" in r)
            given = [bytes.fromhex(t["hex"]) for t in next(r["inputs"] for r in records if "inputs" in r)]
            left = [bytes.fromhex(t["hex"]) for t in next(r["outputs"] for r in records if "outputs" in r)]
            (payload,) = find_payloads(art.pte.read_bytes())
            same = left == u85_run(payload, given)
            ticks = re.search(r"^A 0 .* ticks (\d+)", out, re.M)
            print(f"| {model}{f' ({args.precision})' if args.precision else ''} | {ops} | {int(ticks[1]) if ticks else '?':,} | {wall:.1f} s | {built:.0f} s | "
                  f"{'bit-equal to the host U85 interpreter' if same else 'DIFFERENT from the host U85 interpreter'} |")


if __name__ == "__main__":
    main()
