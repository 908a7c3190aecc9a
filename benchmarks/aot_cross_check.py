"""Lower one ``aot_arm_compiler`` model file with ExecuTorch's own compiler and with zoo, for one
target, and compare what each program leaves where: the Ethos-U delegates (partitions), the
operators on the CPU, and whether each delegate's Vela payload is the same bytes.

    .venv/bin/python benchmarks/aot_cross_check.py MODEL_FILE [MODEL_FILE ...] [--target ethos-u55-128]
        [--numerics stock|zoo] [--work DIR]

``--numerics zoo`` runs aot_arm_compiler in zoo's reproducible float mode (baseline ATen
kernels, no oneDNN, one thread), so both calibrate on the same floats.

The boundary's quantize and dequantize are compared as such: ``aot_arm_compiler`` leaves
CMSIS-NN's (``cortex_m::``), zoo the portable kernels (``quantized_decomposed::``), on
purpose (docs/c-header.md). Every other operator must match by name. Prints a markdown row
per model file. Minutes per model on two cores.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from zoo.registry.pte.pte_structure import ETHOSU_BACKEND_ID, read_pte
from zoo.registry.pte.vela_payload import find_payloads

_BOUNDARY = ("quantize_per_tensor", "dequantize_per_tensor")


def _program(pte: Path) -> dict[str, object]:
    data = pte.read_bytes()
    info = read_pte(data)
    ops = sorted({op for op in info.operators if not op.split("::")[-1].startswith(_BOUNDARY)})
    boundary = sorted({op.split("::")[-1] for op in info.operators if op.split("::")[-1].startswith(_BOUNDARY)})
    return {
        "delegates": sum(d.backend_id == ETHOSU_BACKEND_ID for d in info.delegates),
        "cpu": ops,
        "boundary": boundary,
        "kernels": sorted({op.split("::")[0] for op in info.operators}),
        # Sorted: the two compilers may number the same partitions differently.
        "payloads": sorted(data[p.offset:p.offset + p.length] for p in find_payloads(data)),
    }


def _run(command: list[str], env: dict[str, str]) -> tuple[float, subprocess.CompletedProcess[str]]:
    start = time.perf_counter()
    proc = subprocess.run(command, env=env, capture_output=True, text=True)
    return time.perf_counter() - start, proc


# aot_arm_compiler in the float numerics zoo builds in (zoo/registry/request/reproducible.py), so that
# calibration sees the same floats and any difference left is the compilers'.
_IN_ZOOS_NUMERICS = """
import runpy, sys
from zoo.registry.request import reproducible
reproducible.pin()
import torch
sys.argv = ["aot_arm_compiler", *sys.argv[1:]]
with reproducible.numerics(torch, "aot_arm_compiler"):
    runpy.run_module("executorch.backends.arm.scripts.aot_arm_compiler", run_name="__main__")
"""


def cross_check(model_file: Path, target: str, work: Path, numerics: str) -> str:
    env = {**os.environ, "ZOO_CACHE_DIR": str(work / "cache")}
    aot_pte = work / f"{model_file.stem}_aot_{numerics}.pte"
    launch = ["-c", _IN_ZOOS_NUMERICS] if numerics == "zoo" else ["-m", "executorch.backends.arm.scripts.aot_arm_compiler"]
    aot_seconds, aot = _run([sys.executable, *launch, "-m", str(model_file), "-t", target, "-q", "-d",
                             "-o", str(aot_pte)], env)
    out = work / f"{model_file.stem}_zoo"
    zoo_seconds, zoo = _run([sys.executable, "-m", "zoo", "--model-file", str(model_file), "fetch", model_file.stem,
                             "-t", target, "-o", str(out), "-q"], env)
    if aot.returncode != 0 or not aot_pte.is_file():
        return f"| {model_file.stem} | {target} | aot_arm_compiler failed: {aot.stderr.strip().splitlines()[-1:]} | | | |"
    theirs = _program(aot_pte)
    zoo_pte = next(out.glob("*.pte"), None) if zoo.returncode == 0 else None
    if zoo_pte is None:
        refused = (zoo.stderr.strip().splitlines() or ["?"])[-1]
        return (f"| {model_file.stem} | {target} | aot: {theirs['delegates']} partition(s), CPU {', '.join(theirs['cpu']) or 'none'} "
                f"({aot_seconds:.0f} s) | zoo refused it ({zoo_seconds:.0f} s): {refused} | - | - |")
    ours = _program(zoo_pte)
    same_split = theirs["delegates"] == ours["delegates"] and theirs["cpu"] == ours["cpu"]
    payloads = ("identical" if theirs["payloads"] == ours["payloads"] else
                f"{sum(a == b for a, b in zip(theirs['payloads'], ours['payloads'], strict=False))} of {len(theirs['payloads'])} identical")
    return (f"| {model_file.stem} | {target} | {theirs['delegates']} partition(s); CPU: {', '.join(theirs['cpu']) or 'none'}; "
            f"boundary from {', '.join(k for k in theirs['kernels'] if k != 'aten') or '-'} ({aot_seconds:.0f} s) "
            f"| {ours['delegates']} partition(s); CPU: {', '.join(ours['cpu']) or 'none'}; boundary from "
            f"{', '.join(k for k in ours['kernels'] if k != 'aten') or '-'} ({zoo_seconds:.0f} s) "
            f"| {'same' if same_split else 'DIFFERENT'} | {payloads} |")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model_files", nargs="+", type=Path)
    parser.add_argument("--target", default="ethos-u55-128")
    parser.add_argument("--work", type=Path, default=None, help="where the programs and zoo's cache go (default: a temporary folder)")
    parser.add_argument("--numerics", choices=("stock", "zoo"), default="stock",
                        help="run aot_arm_compiler as shipped (the host's fastest kernels), or in zoo's reproducible mode")
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="aot-cross-check-"))
    work.mkdir(parents=True, exist_ok=True)
    print("| model file | target | ExecuTorch's aot_arm_compiler | zoo | partitions and CPU operators | Vela payloads |")
    print("| --- | --- | --- | --- | --- | --- |")
    for model_file in args.model_files:
        print(cross_check(model_file.resolve(), args.target, work, args.numerics), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
