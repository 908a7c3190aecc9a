"""``zoo --model-file f.onnx``: a real build through the CLI, and what light commands load."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest
from onnx import helper

from tests.conftest import run_probed, run_zoo
from tests.onnx.graphs import conv_net, model, save


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
def test_list_loads_onnx_alone_for_an_onnx_model_file(tmp_path: Path) -> None:
    watch = ("torch", "onnx")
    assert run_probed("list", watch=watch).loaded == []
    path = save(conv_net(), tmp_path / "small.onnx")
    missing = run_probed("--model-file", str(path), "list", watch=watch)
    assert "Declare them in" in missing.stderr and f"{path}.json" in missing.stderr
    (tmp_path / "small.onnx.json").write_text('{"inputs": {"x": [1, 3, 16, 16]}}')
    listed = run_probed("--model-file", str(path), "info", "small", watch=watch)
    assert listed.returncode == 0, listed.stderr
    assert "x [1, 3, 16, 16] float32" in listed.stdout and "random standard-normal" in listed.stdout
    assert listed.loaded == ["onnx"]


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


HUGE = [1, 64, 2048, 2048]  # float32: 1 GiB a tensor


def _four_nodes(path: Path, shape: list[int]) -> Path:
    nodes = [helper.make_node("Relu", ["x"], ["a"]), helper.make_node("Sigmoid", ["a"], ["b"]),
             helper.make_node("Tanh", ["b"], ["c"]), helper.make_node("Relu", ["c"], ["y"])]
    return save(model(nodes, {"x": shape}, ["y"]), path)


_ADDRESS_SPACE = 3 << 29  # 1.5 GiB: zoo lists in about 0.5, and one of the model's tensors is 1 GiB


def _capped() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (_ADDRESS_SPACE, _ADDRESS_SPACE))


@pytest.mark.skipif(sys.platform != "linux", reason="RLIMIT_AS caps the address space on Linux")
@pytest.mark.parametrize("command", [["list"], ["info", "huge"]])
@pytest.mark.slow
def test_listing_a_model_with_a_huge_input_fits_in_less_than_the_input(tmp_path: Path, command: list[str]) -> None:
    """Issue 43 item 14: listing planned the graph on zero inputs and drew its 8 random samples
    (3 GB for a 256 MB input). In 1.5 GiB of address space, 1 GiB of input cannot be allocated
    once: the listing must not allocate it at all."""
    path = _four_nodes(tmp_path / "huge.onnx", HUGE)
    # One BLAS thread: its per-thread buffers would otherwise grow with the host's cores.
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    proc = subprocess.run([sys.executable, "-m", "zoo", "--model-file", str(path), *command], capture_output=True,
                          text=True, env=env, preexec_fn=_capped, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert "skipped" not in proc.stderr, proc.stderr
    if command == ["list"]:
        assert any(line.split()[:2] == ["huge", "custom"] for line in proc.stdout.splitlines()), proc.stdout
    else:
        assert "x [1, 64, 2048, 2048] float32" in proc.stdout, proc.stdout


@pytest.mark.stack
def test_listing_neither_plans_the_graph_nor_draws_samples(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The module and the calibration samples are made when a build asks for them, once."""
    import torch

    import zoo._onnx.build
    from zoo.registry.catalog.plugin_loader import LoadOptions, Registry

    path = _four_nodes(tmp_path / "huge.onnx", HUGE)
    calls: list[str] = []

    def refused(*args: object, **kwargs: object) -> None:
        calls.append("made")
        raise AssertionError("listing planned the graph or drew a sample")

    with monkeypatch.context() as patch:
        patch.setattr(zoo._onnx.build, "build", refused)
        patch.setattr(torch, "randn", refused)
        registry = Registry(strict=True).load(LoadOptions(model_files=(path,), entry_points=False))
        spec = registry.catalog.get("huge")
        assert spec.summary()["inputs"][0]["shape"] == [1, 64, 2048, 2048]
        assert spec.calibration.size == 8 and spec.weights[0].identity()
    assert calls == []

    # Small enough to make: built on demand, the same module each time.
    small = _four_nodes(tmp_path / "small.onnx", [1, 2, 4, 4])
    spec = Registry(strict=True).load(LoadOptions(model_files=(small,), entry_points=False)).catalog.get("small")
    assert spec.build("file") is spec.build("file")
    assert [tuple(t.shape) for t in spec.example_inputs()] == [i.shape for i in spec.inputs]
    assert len(spec.calibration.load()) == 8 and spec.calibration.identity() == spec.calibration.identity()
