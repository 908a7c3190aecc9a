"""``zoo --model-file f.onnx``: a real build through the CLI, and what light commands load."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import run_probed, run_zoo
from tests.onnx.graphs import conv_net, save


@pytest.mark.compile
def test_onnx_model_file_fetches_and_verifies(tmp_path: Path) -> None:
    path = save(conv_net(), tmp_path / "small.onnx")
    (tmp_path / "small.onnx.json").write_text('{"inputs": {"x": [1, 3, 16, 16]}}')
    out = tmp_path / "out"
    proc = run_zoo("--model-file", str(path), "fetch", "-t", "u55-128", "--verify", "--json", "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["manifest"]["model"] == "small"
    assert (out / "small_u55-128.pte").is_file() and (out / "small_u55-128.h").is_file()
    verification = result["verification"]
    assert verification["passed"] is True
    assert verification["structure"]["passed"] is True and verification["numerics"]["passed"] is True
    assert verification["numerics"]["samples"] == 8
    assert result["manifest"]["calibration"]["samples"] == 8


@pytest.mark.stack
def test_list_loads_onnx_and_torch_only_for_an_onnx_model_file(tmp_path: Path) -> None:
    watch = ("torch", "onnx")
    assert run_probed("list", watch=watch).loaded == []
    path = save(conv_net(), tmp_path / "small.onnx")
    missing = run_probed("--model-file", str(path), "list", watch=watch)
    assert "Declare them in" in missing.stderr and f"{path}.json" in missing.stderr
    (tmp_path / "small.onnx.json").write_text('{"inputs": {"x": [1, 3, 16, 16]}}')
    listed = run_probed("--model-file", str(path), "info", "small", watch=watch)
    assert listed.returncode == 0, listed.stderr
    assert "x [1, 3, 16, 16] float32" in listed.stdout and "random standard-normal" in listed.stdout
    assert listed.loaded == ["onnx", "torch"]


@pytest.mark.stack
def test_an_onnx_doc_string_reaches_the_terminal_escaped(tmp_path: Path) -> None:
    graph = conv_net()
    graph.doc_string = "A net\x1b]0;pwned\x07\x1b[2J that retitles the window"
    path = save(graph, tmp_path / "small.onnx")
    (tmp_path / "small.onnx.json").write_text('{"inputs": {"x": [1, 3, 16, 16]}}')
    for command in ("info", "list"):
        r = run_probed("--model-file", str(path), command, *(["small"] if command == "info" else []))
        assert r.returncode == 0, r.stderr
        assert "\x1b" not in r.stdout and "\x07" not in r.stdout, repr(r.stdout)
        assert r"A net\x1b]0;pwned\x07\x1b[2J that retitles the window" in r.stdout
