"""Write tests/data/fake_compile/: real compile results of the built-in ``add``
for u55-128 and portable, which the fast test tier's fake compile hands out
instead of lowering (tests/fake_compile.py).

Run it again after a toolchain upgrade: ``python scripts/make_fake_compile_data.py``.
"""

from __future__ import annotations

import json
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "tests" / "data" / "fake_compile"
TARGETS = ("u55-128", "portable")


def main() -> None:
    from zoo import Zoo
    from zoo.registry.compile import compile_targets

    zoo = Zoo()
    spec = zoo.model("add")
    targets = [zoo.target(t) for t in TARGETS]
    OUT.mkdir(parents=True, exist_ok=True)
    for name, result in zip(TARGETS, compile_targets(spec, targets), strict=True):
        (OUT / f"add_{name}.pte").write_bytes(result.pte)
        fields = {
            "vela": result.vela,
            "delegation": result.delegation,
            "cpu_operators": result.cpu_operators,
            "calibration": result.calibration,
            "warnings": result.warnings,
        }
        (OUT / f"add_{name}.json").write_text(json.dumps(fields, indent=2, sort_keys=True) + "\n")
        print(OUT / f"add_{name}.pte", len(result.pte), "bytes")


if __name__ == "__main__":
    main()
