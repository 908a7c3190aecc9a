"""What ``--io int8`` and ``--layout nhwc`` would save (issue 45), in the fast tier: ``zoo fetch``'s
line over the fake compile's real ``add`` program, with the manifest's record of the input transposes
as it is, changed, or missing (a manifest from before it). The real builds' figures are checked
against Vela's per-layer report in tests/test_pipeline.py and tests/test_io_modes.py."""

from __future__ import annotations

import copy
import json
from dataclasses import replace
from typing import Any

import pytest

from tests.conftest import run_probed
from tests.fake_compile import FakeCompile
from zoo import Artifact, Zoo
from zoo.cli.format import _summary
from zoo.registry.io_saving import boundary_kernels, input_partitions
from zoo.registry.pte.pte_structure import read_pte
from zoo.registry.store.manifest import Manifest


@pytest.fixture
def add(fake_compile: FakeCompile) -> Artifact:
    return Zoo().fetch("add", "u55-128")


def _with_transposes(art: Artifact, rows: list[dict[str, Any]] | None) -> Artifact:
    """``art`` with its manifest's record of the input transposes replaced (None: a manifest from before it)."""
    data = copy.deepcopy(art.manifest.to_json())
    for partition in data["vela"]["partitions"]:
        if rows is None:
            del partition["input_transposes"]
        else:
            partition["input_transposes"] = rows
    return replace(art, manifest=Manifest.from_json(json.loads(json.dumps(data))))


def _saving_line(art: Artifact, layouts: tuple[str, ...]) -> str | None:
    lines = [line.strip() for line in _summary(art, layouts=layouts).splitlines() if " would save " in line]
    assert len(lines) <= 1
    return lines[0] if lines else None


def test_the_boundary_kernels_are_counted_in_the_pte(add: Artifact) -> None:
    info = read_pte(add.pte.read_bytes())
    assert boundary_kernels(info) == 3  # two inputs quantized, one output dequantized
    assert input_partitions(info) == [True]
    assert add.manifest.vela is not None and add.manifest.vela["partitions"][0]["input_transposes"] == []


def test_a_float_build_is_told_what_int8_io_saves_on_the_cpu(add: Artifact) -> None:
    # add offers no NHWC (its inputs have one channel): only --io int8 is suggested.
    assert _saving_line(add, ("nchw",)) == "--io int8 would save 3 quantize/dequantize operator(s) on the CPU"
    assert "; 3 on the CPU (3 quantize/dequantize at the boundary); kernels to link" in _summary(add, layouts=("nchw",))


def test_the_npu_transposes_are_summed_from_the_manifest_where_the_model_offers_nhwc(add: Artifact) -> None:
    art = _with_transposes(add, [{"operator": "Transpose", "cycles": 1000}, {"operator": "MaxPool", "cycles": 24}])
    assert _saving_line(art, ("nchw", "nhwc")) == (
        "--io int8 --layout nhwc would save 2 transpose operator(s) on the NPU (1,024 cycles, 2.0 µs) "
        "and 3 quantize/dequantize operator(s) on the CPU")
    # Not offered: not suggested, whatever the NPU pays.
    assert _saving_line(art, ("nchw",)) == "--io int8 would save 3 quantize/dequantize operator(s) on the CPU"


def test_nothing_is_said_where_the_build_uses_the_options(add: Artifact) -> None:
    data = copy.deepcopy(add.manifest.to_json())
    data["io"] = {**data["io"], "mode": "int8", "layout": "nhwc"}
    data["vela"]["partitions"][0]["input_transposes"] = [{"operator": "Transpose", "cycles": 1000}]
    art = replace(add, manifest=Manifest.from_json(data))
    assert _saving_line(art, ("nchw", "nhwc")) is None
    # An int8 NCHW build of a model that offers NHWC is told about the layout alone.
    data["io"]["layout"] = "nchw"
    art = replace(add, manifest=Manifest.from_json(data))
    assert _saving_line(art, ("nchw", "nhwc")) == "--layout nhwc would save 1 transpose operator(s) on the NPU (1,000 cycles, 2.0 µs)"


def test_a16w8_is_not_told_to_take_int8_io(add: Artifact) -> None:
    m = add.manifest
    key_inputs = {**m.key_inputs, "quantization": {**(m.key_inputs.get("quantization") or {}), "precision": "a16w8"}}
    art = replace(add, manifest=replace(m, key_inputs=key_inputs))
    assert art.manifest.precision == "a16w8"
    assert _saving_line(art, ("nchw",)) is None
    assert "(3 quantize/dequantize at the boundary; a16w8 takes --io float only)" in _summary(art, layouts=("nchw",))


def test_a_manifest_from_before_the_record_still_summarises(add: Artifact) -> None:
    old = _with_transposes(add, None)
    assert "input_transposes" not in json.dumps(old.manifest.to_json())
    assert _saving_line(old, ("nchw",)) == "--io int8 would save 3 quantize/dequantize operator(s) on the CPU"
    assert _saving_line(old, ("nchw", "nhwc")) == (
        "--io int8 --layout nhwc would save 3 quantize/dequantize operator(s) on the CPU and the NPU's transposes "
        "of the input (their cycles are not in this manifest, which predates that record: 'zoo build' records them)")


def test_the_portable_build_has_no_saving_line(fake_compile: FakeCompile) -> None:
    assert _saving_line(Zoo().fetch("add", "portable"), ("nchw", "nhwc")) is None


def test_a_cache_hit_prints_the_line_without_torch(add: Artifact) -> None:
    proc = run_probed("fetch", "add", "-t", "u55-128", "--no-build")
    assert proc.returncode == 0, proc.stderr
    assert proc.loaded == []
    assert "  --io int8 would save 3 quantize/dequantize operator(s) on the CPU\n" in proc.stderr
