"""Vela on one network (a TOSA graph of zoo's or the TFLite flow's ``.tflite``) with ``--verbose-performance``:
its totals, as zoo's build reports them, and its per-layer rows (``benchmarks/vs_tflite.py``)."""

from __future__ import annotations

import csv
import re
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from benchmarks._vs_tflite_sides import Layer, VelaRun

__all__ = ["VELA", "combine", "flash_bytes", "run_vela", "tail"]

VELA = Path(sys.executable).with_name("vela")
_OPERATORS = re.compile(r"^(CPU|NPU) operators = (\d+)", re.MULTILINE)
# Vela lists an activation it fused into the operator before it as a row of its own with no
# cycles and no MACs (see vela's npu_performance.py); such rows are folded into that operator.
_ACTIVATIONS = {"Relu", "Relu6", "ReluN1To1", "Clamp", "Clip", "Sigmoid", "Tanh", "LUT", "HardSwish", "LeakyRelu"}


def run_vela(network: Path, flags: Sequence[str], out_dir: Path, partition: int = 0) -> VelaRun:
    """Vela's summary and per-layer figures for ``network`` (.tosa or .tflite) with ``flags``."""
    from zoo.registry.npu import vela_report
    command = [str(VELA), *flags, "--verbose-performance", f"--output-dir={out_dir}", str(network)]
    proc = subprocess.run(command, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"Vela failed ({' '.join(command[1:])}):\n" + tail(proc.stdout + proc.stderr))
    stem = network.stem
    summaries = sorted(out_dir.glob(f"{stem}_summary_*.csv"))
    if len(summaries) != 1:
        raise RuntimeError(f"Vela wrote {len(summaries)} summary CSVs for {network.name}:\n{tail(proc.stdout)}")
    total = vela_report._from_summary(vela_report._read_summary(summaries[0]))
    counts = {kind.lower(): int(n) for kind, n in _OPERATORS.findall(proc.stdout)}
    total["npu_operators"], total["cpu_operators"] = counts.get("npu", 0), counts.get("cpu", 0)
    layers: list[Layer] = []
    with (out_dir / f"{stem}_per-layer.csv").open(newline="") as f:
        for row in csv.DictReader(f):
            layer = Layer(partition, row["Original Operator"], row["NNG Operator"], round(float(row["Op Cycles"])),
                          round(float(row["NPU"])), round(float(row["MAC Count"])), row["Name"])
            fused = layer.op in _ACTIVATIONS and layer.cycles == 0 and layer.macs == 0
            if fused and layers and layers[-1].name == layer.name:
                layers[-1] = replace(layers[-1], activation=layer.op)
            else:
                layers.append(layer)
    return VelaRun(total, layers, list(flags))


def combine(runs: Sequence[VelaRun]) -> VelaRun:
    """Several partitions as one program: ``vela_report.summarize``'s rules, layers in program order."""
    from zoo.registry.npu import vela_report
    total = vela_report.summarize([r.total for r in runs])["total"]
    for key in ("cpu_operators", "npu_operators"):
        total[key] = sum(r.total[key] for r in runs)
    return VelaRun(total, [layer for r in runs for layer in r.layers], runs[0].flags)


def flash_bytes(total: dict[str, Any]) -> int:
    """Where the weights and command stream live: flash, or DRAM in the DRAM memory modes."""
    return int(total["off_chip_flash_bytes"] + total["on_chip_flash_bytes"] + total["dram_bytes"])


def tail(text: str, lines: int = 20) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])

