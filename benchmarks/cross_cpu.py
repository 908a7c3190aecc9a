"""The same bytes whatever the host CPU: builds (and the mnist training) under
several CPU profiles on this one host, each in a fresh process and cache.

A profile makes this host pick the kernels another CPU would: ATen's SIMD level
(``ATEN_CPU_CAPABILITY``), MKL's and oneDNN's (``MKL_ENABLE_INSTRUCTIONS``,
``ONEDNN_MAX_CPU_ISA``) and glibc's (``GLIBC_TUNABLES``). First it shows that the
profiles really change float results outside zoo's numerics mode (a mv2 forward
pass), then it prints each artifact's sha256 and build time per profile, and
exits 1 if any differ.

Run: .venv/bin/python benchmarks/cross_cpu.py [--models mnist,mv2:random,mobilenet-v3-small:random]
     [--target u55-128] [--train]
"""

from __future__ import annotations

import argparse
import hashlib
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROFILES: dict[str, dict[str, str]] = {
    "host's best": {},
    "ATen default": {"ATEN_CPU_CAPABILITY": "default"},
    "an AVX2 host": {
        "ATEN_CPU_CAPABILITY": "avx2", "MKL_ENABLE_INSTRUCTIONS": "AVX2", "ONEDNN_MAX_CPU_ISA": "AVX2",
        "GLIBC_TUNABLES": "glibc.cpu.hwcaps=-AVX512F,-AVX512DQ,-AVX512BW,-AVX512VL",
    },
    "an SSE4.2 host": {
        "ATEN_CPU_CAPABILITY": "default", "MKL_ENABLE_INSTRUCTIONS": "SSE4_2", "ONEDNN_MAX_CPU_ISA": "SSE41",
        "GLIBC_TUNABLES": "glibc.cpu.hwcaps=-AVX2,-FMA,-AVX512F,-AVX512DQ,-AVX512BW,-AVX512VL",
    },
}
_FORWARD = """
import hashlib, torch, torchvision
torch.set_num_threads(1); torch.manual_seed(0)
m = torchvision.models.mobilenet_v2().eval()
with torch.no_grad():
    y = m(torch.randn(2, 3, 224, 224))
print(hashlib.sha256(y.numpy().tobytes()).hexdigest())
"""


def _env(profile: dict[str, str], **extra: str) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if k not in ("ATEN_CPU_CAPABILITY", "MKL_CBWR")}
    return {**base, **profile, **extra}


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def build(model: str, weights: str | None, target: str, profile: dict[str, str]) -> tuple[str, float]:
    with tempfile.TemporaryDirectory(prefix="zoo-xcpu-") as tmp:
        out = Path(tmp) / "out"
        cmd = [sys.executable, "-m", "zoo", "build", model, "-t", target, "-o", str(out), "--quiet"]
        if weights:
            cmd += ["--weights", weights]
        start = time.perf_counter()
        subprocess.run(cmd, env=_env(profile, ZOO_CACHE_DIR=str(Path(tmp) / "cache")), check=True,
                       capture_output=True)
        seconds = time.perf_counter() - start
        return _sha(next(out.glob("*.pte"))), seconds


def train(profile: dict[str, str]) -> tuple[str, float]:
    with tempfile.TemporaryDirectory(prefix="zoo-xcpu-") as tmp:
        out = Path(tmp) / "mnist.safetensors"
        start = time.perf_counter()
        subprocess.run([sys.executable, str(ROOT / "scripts" / "train_mnist.py"), "--out", str(out)],
                       env=_env(profile), check=True, capture_output=True)
        return _sha(out), time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="mnist,mv2:random,mobilenet-v3-small:random")
    parser.add_argument("--target", default="u55-128")
    parser.add_argument("--train", action="store_true", help="also retrain mnist's weights under each profile")
    args = parser.parse_args()

    print("outside zoo's numerics mode, a mv2 forward pass (sha256 of the outputs):")
    for name, profile in PROFILES.items():
        proc = subprocess.run([sys.executable, "-c", _FORWARD], env=_env(profile), check=True,
                              capture_output=True, text=True)
        print(f"  {name:<16} {proc.stdout.strip()[:16]}")

    differ = False
    jobs: list[tuple[str, str | None]] = []
    for item in args.models.split(","):
        model, _, weights = item.partition(":")
        jobs.append((model, weights or None))
    for model, weights in jobs:
        print(f"zoo build {model}{' --weights ' + weights if weights else ''} -t {args.target} (.pte sha256, wall time):")
        shas = set()
        for name, profile in PROFILES.items():
            sha, seconds = build(model, weights, args.target, profile)
            shas.add(sha)
            print(f"  {name:<16} {sha}  {seconds:6.1f} s")
        differ |= len(shas) > 1
        print(f"  {'same bytes' if len(shas) == 1 else 'BYTES DIFFER'}")
    if args.train:
        print("scripts/train_mnist.py (weights sha256, wall time):")
        shipped = _sha(ROOT / "zoo" / "plugins" / "weights" / "mnist.safetensors")
        shas = set()
        for name, profile in PROFILES.items():
            sha, seconds = train(profile)
            shas.add(sha)
            print(f"  {name:<16} {sha}  {seconds:6.1f} s")
        same = shas == {shipped}
        differ |= not same
        print(f"  {'the shipped weights' if same else 'DIFFER from the shipped ' + shipped[:16]}")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
