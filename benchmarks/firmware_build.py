"""How long a firmware project takes: the first build (ExecuTorch's runtime for the CPU, then the
model's own files), a second model's build once the runtime exists, and a QEMU run.
Goals (issue 34): first build under 5 minutes, a second model under 15 s, a QEMU run of mnist
portable under 5 s, on 2 cores.

Run: .venv/bin/python benchmarks/firmware_build.py [--models mnist:portable ds-cnn-fsdd:portable]
Uses the vendor snapshots (../shared/vendor, scripts/vendor_sources.py) and a fresh runtime cache.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

from vendor_sources import lay_out  # noqa: E402


def _timed(cmd: list[str], **kw: object) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, check=True, capture_output=True, **kw)  # type: ignore[call-overload]
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", nargs="+", default=["mnist:portable", "ds-cnn-fsdd:portable"],
                        help="MODEL:TARGET, the first builds the runtime")
    parser.add_argument("--samples", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="zoo-fw-bench-") as tmp:
        root = Path(tmp)
        sources = lay_out(root / "vendor", ROOT.parent / "shared" / "vendor")
        runtime = root / "runtime"
        defines = [f"-D{k}={v}" for k, v in sources.items()] + [f"-DZOO_RUNTIME_CACHE={runtime}"]
        print(f"{'model':<24} {'zoo firmware':>13} {'configure':>10} {'build':>7} {'QEMU run':>9}  (s)")
        for given in args.models:
            model, target = given.split(":")
            folder = root / model
            write = _timed([sys.executable, "-m", "zoo", "firmware", model, "-t", target, "-o", str(folder),
                            "--samples", str(args.samples)], env={**os.environ})
            configure = _timed(["cmake", "-S", str(folder), "-B", str(folder / "build"), "-G", "Ninja", *defines])
            build = _timed(["cmake", "--build", str(folder / "build")])
            run = _timed(["qemu-system-arm", "-M", "mps3-an547", "-nographic", "-monitor", "none", "-serial", "none",
                          "-semihosting-config", "enable=on,target=native", "-kernel",
                          str(folder / "build" / "firmware.elf")])
            print(f"{given:<24} {write:>13.1f} {configure:>10.1f} {build:>7.1f} {run:>9.2f}")
        print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores; the first configure builds the runtime")


if __name__ == "__main__":
    main()
