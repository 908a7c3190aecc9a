"""``zoo --model-file f.tflite``: what light commands load, the int8 notice, and a real build."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import run_probed, run_zoo
from tests.tflite.graphs import small_net


@pytest.mark.stack
def test_info_reads_a_tflite_model_file_without_torch(tmp_path: Path) -> None:
    path = tmp_path / "small.tflite"
    path.write_bytes(small_net().to_bytes())
    listed = run_probed("--model-file", str(path), "info", "small")
    assert listed.returncode == 0, listed.stderr
    assert "[1, 16, 16, 3] float32" in listed.stdout and "random standard-normal" in listed.stdout
    assert listed.loaded == []


@pytest.mark.stack
def test_an_unknown_operator_fails_the_listing_with_its_name(tmp_path: Path) -> None:
    from tests.tflite.graphs import OP

    g = small_net()
    (y,) = g.outputs
    g.outputs = g.op(OP.SIN, [y], [[1, 4]])
    path = tmp_path / "sin.tflite"
    path.write_bytes(g.to_bytes())
    r = run_probed("--model-file", str(path), "info", "sin")
    assert r.returncode != 0
    assert "operator 5 is SIN, which zoo does not read" in r.stderr


@pytest.mark.compile
def test_tflite_model_file_fetches_and_verifies(tmp_path: Path) -> None:
    path = tmp_path / "small.tflite"
    path.write_bytes(small_net().to_bytes())
    out = tmp_path / "out"
    proc = run_zoo("--model-file", str(path), "fetch", "-t", "u55-128", "--verify", "--json", "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["manifest"]["model"] == "small"
    assert (out / "small_u55-128.pte").is_file()
    assert result["verification"]["passed"] is True
