"""The same bytes whatever the host CPU: builds (and the trainings of the shipped weights) under
several CPU profiles on this one host, each in a fresh process and cache.

A profile makes this host pick the kernels another CPU would: ATen's SIMD level
(``ATEN_CPU_CAPABILITY``), MKL's and oneDNN's (``MKL_ENABLE_INSTRUCTIONS``,
``ONEDNN_MAX_CPU_ISA``) and glibc's (``GLIBC_TUNABLES``). First it shows that the
profiles really change float results outside zoo's numerics mode (a mv2 forward
pass), then it prints each artifact's sha256 and build time per profile, and
exits 1 if any differ.

It names the host's CPU first (``/proc/cpuinfo``): the profiles emulate others on it, so a run on
an Intel and one on an AMD host are two real CPUs besides. ``--train`` retrains mnist's weights under
each profile; ``--train-weights`` the packs' too (``sensors``: the four of zoo-sensors; ``digits``: zoo-vision's detector and segmenter), each against
its shipped file. ``--models ''`` builds nothing; ``--profiles`` runs some of the profiles, ``--skip-forward`` no mv2 pass.

Run: .venv/bin/python benchmarks/cross_cpu.py [--models mnist,mv2:random,mobilenet-v3-small:random]
     [--target u55-128] [--train] [--train-weights mnist,sensors,...] [--profiles NAME,...]
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


_SENSORS = ROOT / "plugins" / "zoo-sensors"
_VISION = ROOT / "plugins" / "zoo-vision"
TRAININGS: dict[str, tuple[list[str], Path]] = {
    "mnist": (["scripts/train_mnist.py"], ROOT / "zoo" / "plugins" / "weights" / "mnist.safetensors"),
    "har-cnn-spar": (["plugins/zoo-sensors/scripts/train_har.py"],
                     _SENSORS / "src/zoo_sensors/weights/har_cnn_spar.safetensors"),
    "ad-autoencoder-spar": (["plugins/zoo-sensors/scripts/train_ad_autoencoder.py"],
                            _SENSORS / "src/zoo_sensors/weights/ad_autoencoder_spar.safetensors"),
    "speaker-id-vowels": (["plugins/zoo-sensors/scripts/train_series.py", "speaker-id-vowels"],
                          _SENSORS / "src/zoo_sensors/weights/speaker_id_vowels.safetensors"),
    "appliance-id-plaid": (["plugins/zoo-sensors/scripts/train_series.py", "appliance-id-plaid"],
                           _SENSORS / "src/zoo_sensors/weights/appliance_id_plaid.safetensors"),
    "yolo-tiny-mcu": (["plugins/zoo-vision/scripts/train_digit_detector.py"],
                      _VISION / "src/zoo_vision/weights/yolo_tiny_mcu_digits.safetensors"),
    "seg-tiny-mcu": (["plugins/zoo-vision/scripts/train_digit_segmenter.py"],
                     _VISION / "src/zoo_vision/weights/seg_tiny_mcu_digits.safetensors"),
}
"""Each training script (and its arguments) by the weights it writes, and the file zoo ships."""
GROUPS = {"sensors": ["har-cnn-spar", "ad-autoencoder-spar", "speaker-id-vowels", "appliance-id-plaid"],
          "digits": ["yolo-tiny-mcu", "seg-tiny-mcu"]}


def host_cpu() -> str:
    """The vendor and model of this host's CPU, as /proc/cpuinfo names them."""
    try:
        info = Path("/proc/cpuinfo").read_text()
    except OSError:
        return "unknown (no /proc/cpuinfo)"
    fields = dict(line.split(":", 1) for line in info.splitlines() if ":" in line)
    fields = {k.strip(): v.strip() for k, v in fields.items()}
    flags = set(fields.get("flags", "").split())
    best = next((f for f in ("avx512f", "avx2", "sse4_2") if f in flags), "none of avx512f, avx2, sse4_2")
    return f"{fields.get('vendor_id', '?')}, {fields.get('model name', '?')}, best SIMD {best}"


def train(name: str, profile: dict[str, str]) -> tuple[str, float]:
    script, shipped = TRAININGS[name]
    with tempfile.TemporaryDirectory(prefix="zoo-xcpu-") as tmp:
        out = Path(tmp) / shipped.name
        start = time.perf_counter()
        subprocess.run([sys.executable, str(ROOT / script[0]), *script[1:], "--out", str(out)],
                       env=_env(profile), check=True, capture_output=True)
        return _sha(out), time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="mnist,mv2:random,mobilenet-v3-small:random")
    parser.add_argument("--target", default="u55-128")
    parser.add_argument("--train", action="store_true", help="also retrain mnist's weights under each profile")
    parser.add_argument("--train-weights", default="",
                        help=f"retrain these under each profile: {', '.join([*TRAININGS, *GROUPS])}")
    parser.add_argument("--profiles", default=",".join(PROFILES), help="the profiles to run (default: all)")
    parser.add_argument("--skip-forward", action="store_true",
                        help="skip the mv2 forward pass that shows the profiles change float results")
    args = parser.parse_args()
    trainings = (["mnist"] if args.train else []) + [n for item in args.train_weights.split(",") if item
                                                    for n in GROUPS.get(item, [item])]
    unknown = [n for n in [*trainings, *args.profiles.split(",")] if n not in TRAININGS and n not in PROFILES]
    if unknown:
        parser.error(f"unknown: {', '.join(unknown)}; trainings: {', '.join([*TRAININGS, *GROUPS])}; "
                     f"profiles: {', '.join(PROFILES)}")
    profiles = {name: PROFILES[name] for name in args.profiles.split(",")}

    print(f"host CPU: {host_cpu()}")
    print("outside zoo's numerics mode, a mv2 forward pass (sha256 of the outputs):")
    for name, profile in {} if args.skip_forward else profiles.items():
        proc = subprocess.run([sys.executable, "-c", _FORWARD], env=_env(profile), check=True,
                              capture_output=True, text=True)
        print(f"  {name:<16} {proc.stdout.strip()[:16]}")

    differ = False
    jobs: list[tuple[str, str | None]] = []
    for item in filter(None, args.models.split(",")):
        model, _, weights = item.partition(":")
        jobs.append((model, weights or None))
    for model, weights in jobs:
        print(f"zoo build {model}{' --weights ' + weights if weights else ''} -t {args.target} (.pte sha256, wall time):")
        shas = set()
        for name, profile in profiles.items():
            sha, seconds = build(model, weights, args.target, profile)
            shas.add(sha)
            print(f"  {name:<16} {sha}  {seconds:6.1f} s")
        differ |= len(shas) > 1
        print(f"  {'same bytes' if len(shas) == 1 else 'BYTES DIFFER'}")
    for training in trainings:
        script, shipped_file = TRAININGS[training]
        print(f"{' '.join(script)} (weights sha256, wall time):", flush=True)
        shipped = _sha(shipped_file)
        shas = set()
        for name, profile in profiles.items():
            sha, seconds = train(training, profile)
            shas.add(sha)
            print(f"  {name:<16} {sha}  {seconds:6.1f} s", flush=True)
        same = shas == {shipped}
        differ |= not same
        print(f"  {'the shipped weights' if same else 'DIFFER from the shipped ' + shipped[:16]}", flush=True)
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
