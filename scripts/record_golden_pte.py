"""Write tests/data/golden_pte.json: the sha256 of mnist's .pte for u55-128 and u85-256 as
built here, with this host's CPU and the tool versions. tests/test_reproducible.py checks
that every host that runs the suite (CI's runners are Intel and AMD) builds these bytes.

Run it again after a toolchain upgrade, on any x86_64 host: the bytes must not depend on it.
    .venv/bin/python scripts/record_golden_pte.py
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "tests" / "data" / "golden_pte.json"
BUILDS = (("mnist", "u55-128"), ("mnist", "u85-256"))


def cpu() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return "unknown"


def main() -> None:
    os.environ["ZOO_CACHE_DIR"] = tempfile.mkdtemp(prefix="zoo-golden-")
    from zoo import Zoo
    from zoo.registry.request.keys import tool_versions

    zoo = Zoo()
    digests = {f"{model}/{target}": hashlib.sha256(zoo.fetch(model, target, force_build=True).pte.read_bytes()).hexdigest()
               for model, target in BUILDS}
    record = {"pte_sha256": digests, "recorded_on": cpu(), "tools": tool_versions()}
    OUT.write_text(json.dumps(record, indent=2, sort_keys=True) + "\n")
    print(f"{OUT}: {digests}")


if __name__ == "__main__":
    main()
