"""benchmarks/pack_catalogue.py's tables label each build's precision (issue 56's leftover): ``zoo report
--all`` shows one artifact per model, weights and target, so an a16w8 build stood in an int8 row, unlabelled,
where int8 failed, and was left out where int8 built. No build: the report's JSON is made here."""

from __future__ import annotations

from typing import Any

from benchmarks import pack_catalogue


def _artifact(target: str, precision: str, ms: float, program: float, built_at: str = "2026-12-07T10:00:00") -> dict[
        str, Any]:
    return {"model": "palm", "weights": "mediapipe", "target": target, "precision": precision, "key": f"{target}{ms}",
            "built_at": built_at, "sram_budget_bytes": None, "extra_flags": [], "npu_ops": 200, "cpu_ops": 0,
            "partitions": 1, "cpu_fallback": [], "inference_time_ms": ms, "sram_bytes": 1 << 20, "flash_bytes": 1 << 20,
            "dram_bytes": 0, "npu_program": None,
            "metrics": [{"name": "box-agreement", "unit": "%", "float": 100.0, "program": program,
                         "passed": program >= 70}]}


def _report() -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """u55-128: int8 built, a16w8 refused by Vela; u65-256: int8 only; u85-256: int8 failed, a16w8 built."""
    int8_u55 = _artifact("ethos-u55-128", "int8", 82.0, 35.0)
    int8_u65 = _artifact("ethos-u65-256", "int8", 22.9, 35.0)
    a16_u85 = _artifact("ethos-u85-256", "a16w8", 17.4, 81.67)
    older = _artifact("ethos-u85-256", "a16w8", 99.0, 10.0, built_at="2026-12-01T10:00:00")
    vela = {"model": "palm", "weights": "mediapipe", "target": "ethos-u55-128", "stage": "vela", "operator": None,
            "pass_name": None, "message": "Non-passthrough operation could not run on NPU",
            "variant": {"precision": "a16w8"}}
    lost = {**vela, "target": "ethos-u85-256", "stage": "lower", "message": "lost output", "variant": {}}
    judged = {"best": "a16w8", "tried": [{"precision": "a16w8", "inference_time_ms": 17.4, "meets": True}]}
    cells = [{"model": "palm", "weights": "mediapipe", "target": t, "artifact": a, "failure": None,
              "precisions": judged if a is a16_u85 else None}
             for t, a in (("ethos-u55-128", int8_u55), ("ethos-u65-256", int8_u65), ("ethos-u85-256", a16_u85))]
    return {"cells": cells, "failures": [vela, lost]}, [older, int8_u55, int8_u65, a16_u85]


def test_each_precision_is_a_row_of_its_own_and_says_so() -> None:
    data, artifacts = _report()
    cells = {(c["target"], c["precision"]): c for c in pack_catalogue.by_precision(data, artifacts)}
    assert sorted(cells) == [("ethos-u55-128", "a16w8"), ("ethos-u55-128", "int8"), ("ethos-u65-256", "int8"),
                             ("ethos-u85-256", "a16w8"), ("ethos-u85-256", "int8")]
    assert cells[("ethos-u85-256", "a16w8")]["artifact"]["inference_time_ms"] == 17.4  # the newest of its precision
    assert cells[("ethos-u85-256", "int8")]["failure"]["message"] == "lost output"
    assert cells[("ethos-u85-256", "a16w8")]["precisions"]["best"] == "a16w8"

    long = [pack_catalogue.row(c) for c in cells.values()]
    assert any(r.startswith("| palm | mediapipe | a16w8 | ethos-u85-256 | built | 200 / 0 / 1 |") for r in long), long
    assert any(r.startswith("| palm | mediapipe | int8 | ethos-u85-256 | failed: lower: lost output |") for r in long)
    assert any(r.startswith("| palm | mediapipe | a16w8 | ethos-u55-128 | failed: vela: Non-passthrough") for r in long)

    grid = pack_catalogue.matrix(list(cells.values()), {"palm": "mediapipe"}, ["u55-128", "u65-256", "u85-256"])
    assert grid[0] == "| model | weights | u55-128 | u65-256 | u85-256 | metric (float → program) |"
    assert grid[2:] == [
        "| palm | mediapipe | 1p, 82 ms | 1p, 22.9 ms | fails at lower | box-agreement 100 → 35% (over its allowed drop) |",
        "| palm, a16w8 | mediapipe | fails at vela | - | 1p, 17.4 ms | box-agreement 100 → 81.67% |"]
