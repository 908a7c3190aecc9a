"""A partition output that Vela drops is a recorded failure that says why, never an
entry, and the report shows it (issue 22's LRASPP case, in miniature)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import run_zoo
from tests.lost_output_model import LOST_OUTPUT_MODEL

pytestmark = pytest.mark.compile


def test_the_lost_output_fails_on_the_u55_with_its_cause_and_the_u85_builds(tmp_path: Path) -> None:
    model = tmp_path / "two_heads.py"
    model.write_text(LOST_OUTPUT_MODEL)
    cache = {"ZOO_CACHE_DIR": str(tmp_path / "cache")}
    built = run_zoo("--model-file", str(model), "build", "-t", "u55-128,u85-256", "--keep-going", "--json", env=cache)
    assert built.returncode == 1, built.stderr
    said = " ".join(built.stderr.split())
    assert "fails its structure check io_shapes: delegate 0 is called with 3 value(s), but its Vela payload has 1 input(s) and 1 output(s)" in said
    assert "partition 0's TOSA graph has 2 outputs, and 1 of them (1x8x16x16) is also read inside the partition" in said
    outcomes = json.loads(built.stdout)
    failed = next(o["failure"] for o in outcomes if "failure" in o)
    assert failed["target"] == "ethos-u55-128" and failed["stage"] == "structure check" and failed["recorded"]
    u85 = next(o for o in outcomes if "failure" not in o)
    assert u85["manifest"]["delegation"]["partitions"] == 1

    entries = list((tmp_path / "cache").glob("v1/entries/*/*/manifest.json"))
    assert [json.loads(p.read_text())["target"] for p in entries] == ["ethos-u85-256"]  # never an entry

    again = run_zoo("--model-file", str(model), "fetch", "-t", "u55-128", env=cache)
    assert again.returncode == 1 and "an earlier build failed and was recorded" in again.stderr
    report = json.loads(run_zoo("--model-file", str(model), "report", "two_heads", "--json", env=cache).stdout)
    assert [r["target"] for r in report["rows"]] == ["ethos-u85-256"]
    assert [(f["target"], f["stage"]) for f in report["failures"]] == [("ethos-u55-128", "structure check")]
    catalogue = json.loads(run_zoo("--model-file", str(model), "report", "--all", "--json", env=cache).stdout)
    cells = {c["target"]: c["status"] for c in catalogue["cells"]}
    assert cells == {"ethos-u55-128": "failed", "ethos-u85-256": "built"}


def test_the_npu_program_level_fails_on_the_output_vela_dropped(tmp_path: Path) -> None:
    """Compiled past the structure check's refusal (compile_model alone, as the firmware test does), with
    --verify's check: the TOSA graph's run agrees with torch, and the NPU-program level fails on the
    output Vela's program never writes, not on a count of outputs."""
    from zoo.registry.compile.pipeline import compile_model
    from zoo.registry.model_files.py_file import spec_from_model_file
    from zoo.registry.npu.targets import TargetTable

    model = tmp_path / "two_heads.py"
    model.write_text(LOST_OUTPUT_MODEL)
    result = compile_model(spec_from_model_file(model), TargetTable().resolve("u55-128"), verify=True)
    assert result.numerics is not None
    record = result.numerics.record
    checks = {c["name"]: c for c in record["checks"]}
    assert checks["vs_fake_quant"]["passed"] and checks["vs_float"]["passed"], checks
    level = record["npu_program"]
    assert level["outcome"] == "failed" and level["error"] is None, level
    first = level["first_difference"]
    assert (first["output"], first["in_program"], first["written_by"], first["interpreter"]) == (0, False, None, 0)
    assert first["reference"] != 0
    assert "Vela's program has no such output: nothing writes it" in checks["npu_program"]["detail"]
