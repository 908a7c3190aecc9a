"""Vela's performance estimate for one Ethos-U partition, read from Vela's own output.

Vela is run in-process on the TOSA graph that ExecuTorch handed to it, with
the same flags, and its summary CSV (plus the operator counts it prints) is
parsed into a JSON-friendly dict. Nothing here imports torch or ExecuTorch.
"""

from __future__ import annotations

import contextlib
import csv
import io
import math
import re
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from zoo._errors import BuildError, MissingExtraError
from zoo.registry.npu import vela_layers
from zoo.registry.npu.targets import Target
from zoo.registry.npu.vela_options import vela_flags

NOTE = "CPU operators between partitions are not included in these estimates"

# Vela's memory areas, as named in its summary CSV (MemArea.identifier_name()).
MEMORY_AREAS = ("sram", "dram", "on_chip_flash", "off_chip_flash")
# Vela's cycle kinds (PassCycles.identifier_name()), each a "cycles_<kind>" column.
_CYCLE_KINDS = (
    "npu", "sram_access", "dram_access", "on_chip_flash_access", "off_chip_flash_access", "total",
)
_TRAFFIC = (
    "feature_map_read_bytes", "feature_map_write_bytes",
    "weight_read_bytes", "weight_write_bytes", "total_bytes",
)
_OPERATORS = re.compile(r"^(CPU|NPU) operators = (\d+)", re.MULTILINE)

# Summed over partitions: they run one after another and each has its own
# command stream, weights and I/O traffic.
_SUMMED = (
    "npu_cycles", "total_cycles", "sram_access_cycles", "dram_access_cycles",
    "on_chip_flash_access_cycles", "off_chip_flash_access_cycles",
    "inference_time_ms", "macs", "npu_operators", "cpu_operators",
    "dram_bytes", "on_chip_flash_bytes", "off_chip_flash_bytes",
    "weights_original_bytes", "weights_encoded_bytes",
)
_TOTAL_KEYS = (*_SUMMED, "inferences_per_second", "sram_bytes")


def run_vela(tosa: bytes, target: Target, *, extra_flags: Sequence[str] = ()) -> dict[str, Any]:
    """Run Vela on a TOSA flatbuffer and return its performance summary, with
    ``input_transposes``: the operators it runs to transpose the graph's input (``vela_layers``)."""
    try:
        from ethosu.vela import vela
    except ImportError as e:
        raise MissingExtraError("the Vela report") from e
    flags = vela_flags(target, extra_flags)
    with tempfile.TemporaryDirectory(prefix="zoo-vela-") as tmp:
        network = Path(tmp) / "partition.tosa"
        network.write_bytes(tosa)
        out_dir = Path(tmp) / "out"
        # The database is output only: ``flags`` (what the manifest records) stay the backend's.
        argv = [*flags, vela_layers.DEBUG_DB_FLAG, f"--output-dir={out_dir}", str(network)]
        text = _run_in_process(vela.main, argv, target)
        summaries = sorted(out_dir.glob("partition_summary_*.csv"))
        if len(summaries) != 1:
            raise BuildError(
                f"Vela wrote no summary CSV for target {target.name!r}; its output:\n{_tail(text)}"
            )
        row = _read_summary(summaries[0])
        try:
            transposes = vela_layers.input_transposes(vela_layers.read_tables(out_dir / f"{network.stem}_debug.xml"))
        except ValueError as exc:
            raise BuildError(f"Vela's per-layer figures for target {target.name!r}: {exc}") from None
    report = _from_summary(row)
    report.update(_operator_counts(text, target))
    report["flags"] = flags
    report["input_transposes"] = transposes
    return report


def weight_formats(tosa: bytes, target: Target) -> list[str]:
    """How Vela encodes each weighted operator of ``tosa`` for ``target`` (``vela_layers.weight_formats``):
    ``Default|Sparse2_4`` where the U85 reads 2:4 sparse weights."""
    from ethosu.vela import vela

    with tempfile.TemporaryDirectory(prefix="zoo-vela-") as tmp:
        network = Path(tmp) / "partition.tosa"
        network.write_bytes(tosa)
        _run_in_process(vela.main, [*vela_flags(target), vela_layers.DEBUG_DB_FLAG, f"--output-dir={tmp}/out",
                                    str(network)], target)
        try:
            return vela_layers.weight_formats(Path(tmp) / "out" / f"{network.stem}_debug.xml")
        except ValueError as exc:
            raise BuildError(f"Vela's per-layer figures for target {target.name!r}: {exc}") from None


def _run_in_process(main: Any, argv: list[str], target: Target) -> str:
    """Call ``vela.main`` with its printout captured.

    In-process costs a few ms against ~0.3 s for a fresh interpreter. Vela's
    only global side effect is ``sys.setrecursionlimit``, which is restored.
    """
    out = io.StringIO()
    limit = sys.getrecursionlimit()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            status = main(argv)
    except SystemExit as e:  # argparse rejects a bad flag this way
        status = e.code
    except Exception as e:
        raise BuildError(
            f"Vela failed for target {target.name!r}: {type(e).__name__}: {e}\n{_tail(out.getvalue())}"
        ) from e
    finally:
        sys.setrecursionlimit(limit)
    if status not in (0, None):
        raise BuildError(
            f"Vela failed for target {target.name!r} (exit status {status}) "
            f"with flags {' '.join(argv[:-2])}:\n{_tail(out.getvalue())}"
        )
    return out.getvalue()


def _read_summary(path: Path) -> dict[str, str]:
    with path.open(newline="") as f:
        rows = list(csv.DictReader(f))
    if len(rows) != 1:
        raise BuildError(f"Vela's summary CSV has {len(rows)} rows, expected 1")
    return rows[0]


def _from_summary(row: dict[str, str]) -> dict[str, Any]:
    def num(column: str) -> float:
        return float(row[column])

    def count(column: str) -> int:
        return round(num(column))

    def kib(column: str) -> int:
        return round(num(column) * 1024)  # Vela writes memory use in KiB

    seconds = num("inference_time")
    fps = num("inferences_per_second")
    report: dict[str, Any] = {
        "npu_cycles": count("cycles_npu"),
        "total_cycles": count("cycles_total"),
        "inference_time_ms": seconds * 1000.0,
        "inferences_per_second": None if math.isnan(fps) else fps,
        "macs": count("nn_macs"),
    }
    for kind in _CYCLE_KINDS[1:-1]:
        report[f"{kind}_cycles"] = count(f"cycles_{kind}")
    for area in MEMORY_AREAS:
        report[f"{area}_bytes"] = kib(f"{area}_memory_used")
    report.update(
        {
            "weights_original_bytes": count("total_original_weights"),
            "weights_encoded_bytes": count("total_npu_encoded_weights"),
            "passes_before_fusing": count("passes_before_fusing"),
            "passes_after_fusing": count("passes_after_fusing"),
            "accelerator_configuration": row["accelerator_configuration"],
            "system_config": row["system_config"],
            "memory_mode": row["memory_mode"],
            "core_clock_hz": count("core_clock"),
            "arena_cache_size_bytes": kib("arena_cache_size"),
            "weights_storage_area": row["weights_storage_area"],
            "feature_map_storage_area": row["feature_map_storage_area"],
            "traffic_bytes": {
                area: {kind: count(f"{area}_{kind}") for kind in _TRAFFIC} for area in MEMORY_AREAS
            },
            "peak_bandwidth_gib_per_s": {area: num(f"{area}_bandwidth") for area in MEMORY_AREAS},
        }
    )
    return report


def _operator_counts(text: str, target: Target) -> dict[str, int]:
    # Not in the CSV; Vela prints "CPU operators = N (x%)" and "NPU operators = N (y%)".
    found = {kind.lower(): int(n) for kind, n in _OPERATORS.findall(text)}
    if set(found) != {"cpu", "npu"}:
        raise BuildError(
            f"could not read the operator counts from Vela's output for target {target.name!r}:\n"
            f"{_tail(text)}"
        )
    return {"npu_operators": found["npu"], "cpu_operators": found["cpu"]}


def summarize(partitions: list[dict[str, Any]]) -> dict[str, Any]:
    """Combine per-partition reports into one, keeping the partitions."""
    if len(partitions) == 1:
        total = {k: partitions[0][k] for k in _TOTAL_KEYS}
    else:
        total = {k: sum(p[k] for p in partitions) for k in _SUMMED}
        ms = total["inference_time_ms"]
        total["inferences_per_second"] = 1000.0 / ms if ms > 0 else None
        # The runtime takes each delegate's scratch arena from the method's
        # temp allocator, which is reset after every delegate call, so peak
        # SRAM is the largest single need. Flash and DRAM hold every
        # partition's weights and command streams at once, so those add up.
        total["sram_bytes"] = max((p["sram_bytes"] for p in partitions), default=0)
    return {"partitions": partitions, "total": total, "note": NOTE}


def _tail(text: str, lines: int = 20) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])
