"""The tiny-network figures the docs quote, measured: Vela 5.1.0's per-layer cycles of zoo's program.

- RegNet's grouped convolutions on u65-256 (docs/measured.md, "Ratios above 1.00"): the 1×1
  convolution before the grouped one and the grouped one's per-group convolutions, for groups of
  24, groups of 32, and the TFLite flow's form (each group a convolution over all 72 channels).
- The transposed convolution's unfused rescale on u55-128 and u65-256 (docs/upstream.md).

Each network (``benchmarks/_tiny_networks.py``) is built as ``zoo fetch NAME -t TARGET --io int8
--layout nhwc`` would (or with zoo's defaults, float I/O and NCHW), in this process and without the cache; Vela runs again on its TOSA graphs
with the flags the build records, plus ``--verbose-performance`` (``vs_tflite.build_zoo``).

    PYTHONPATH=. nice -n 10 .venv/bin/python benchmarks/tiny_networks.py [--json out/tiny.json]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

CASES = ("tiny-regnet-g24:u65-256", "tiny-regnet-g32:u65-256", "tiny-regnet-tflite-form:u65-256",
         "tiny-convt:u55-128", "tiny-convt:u65-256", "tiny-convt:u55-128:defaults", "tiny-convt:u65-256:defaults")
"""model:target, and ``:defaults`` for zoo's default boundary (float I/O, NCHW) instead of ``--io int8 --layout nhwc``."""


def measure(case: str, work: Path) -> dict[str, Any]:
    from benchmarks.vs_tflite import build_zoo
    from zoo import Zoo

    model, target, *boundary = case.split(":")
    side = build_zoo(Zoo(), model, [target], None, boundary != ["defaults"], work)[0]
    if side.vela is None:
        raise RuntimeError(f"{model} on {target}: {side.error}")
    layers = [{"op": x.op, "original": x.original, "macs": x.macs, "cycles": x.cycles, "activation": x.activation,
               "name": x.name} for x in side.vela.layers]
    return {"model": model, "target": target, "boundary": side.label, "total_cycles": side.vela.total["total_cycles"], "layers": layers}


def summary(row: dict[str, Any]) -> str:
    """The figures the docs quote, picked out by their MACs."""
    from benchmarks._tiny_networks import GROUPS, REGNET, STEM

    layers = row["layers"]
    if row["model"] in REGNET:
        width, full = REGNET[row["model"]]
        channels = GROUPS * width
        before = [x["cycles"] for x in layers if x["macs"] == 112 * 112 * STEM * channels]
        per_group = 112 * 112 * 9 * width * (channels if full else width)
        groups = [x["cycles"] for x in layers if x["macs"] == per_group][:GROUPS]  # not the last 1×1 (g24: same MACs)
        return (f"{row['model']} on {row['target']} ({row['boundary']}): the 1×1 before it {' + '.join(f'{c:,}' for c in before)}; "
                f"the {len(groups)} group convolutions {' + '.join(f'{c:,}' for c in groups)}")
    convt = [x for x in layers if x["original"] == "TransposeConv2D"]
    rest = [x for x in layers if x not in convt and x["cycles"]]
    return (f"{row['model']} on {row['target']} ({row['boundary']}): transposed convolution "
            + ", ".join(f"{x['cycles']:,}" for x in convt) + "; the other layers: "
            + "; ".join(f"{x['op']} ({x['original']}) {x['cycles']:,}" for x in rest))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", help="model:target[:defaults], comma-separated (default: all)")
    parser.add_argument("--json", type=Path, help="also write every layer here")
    args = parser.parse_args()
    os.environ["ZOO_PLUGINS"] = ",".join(x for x in (os.environ.get("ZOO_PLUGINS"), "benchmarks._tiny_networks") if x)
    from zoo.registry.request import reproducible
    reproducible.pin()
    cases = args.cases.split(",") if args.cases else list(CASES)
    rows = []
    with tempfile.TemporaryDirectory(prefix="zoo-tiny-") as tmp:
        for case in cases:
            row = measure(case, Path(tmp))
            rows.append(row)
            print(f"\n{row['model']} on {row['target']} ({row['boundary']}): {row['total_cycles']:,} cycles")
            for x in row["layers"]:
                act = f"+{x['activation']}" if x["activation"] else ""
                print(f"  {x['op'] + act:28} {x['original']:20} {x['macs']:>14,} MACs {x['cycles']:>12,} cycles")
            print(summary(row), flush=True)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(rows, indent=1) + "\n")
    print("\n" + "\n".join(summary(r) for r in rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
