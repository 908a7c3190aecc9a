"""A tensor's layout label comes from the model's declared axes (``ModelSpec.axes``, the
manifest's ``io.axes``) and its dim order, not from the dim order alone (issue 56): a TFLite
model's contiguous (1, 128, 128, 3) image is NHWC, not NCHW. Torch-free."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.tflite.graphs import small_net
from zoo import InputSpec, ModelSpec, UsageError
from zoo.cli.format import _tensor_io
from zoo.registry.firmware.header_macros import io_macros
from zoo.registry.npu.targets import TargetTable
from zoo.registry.request.io_boundary import choose, layout_name


def _tensor(shape: list[int], order: list[int]) -> dict[str, Any]:
    return {"name": "image", "dtype": "int8", "shape": shape, "dim_order": order, "scale": 0.5, "zero_point": 0,
            "qmin": -128, "qmax": 127}


def _io(axes: str | None, shape: list[int], order: list[int]) -> dict[str, Any]:
    io: dict[str, Any] = {"mode": "int8", "layout": "nchw", "inputs": [_tensor(shape, order)], "outputs": []}
    if axes is not None:
        io["axes"] = axes
    return io


@pytest.mark.parametrize(("axes", "shape", "order", "label"), [
    ("nhwc", [1, 128, 128, 3], [0, 1, 2, 3], "nhwc"),  # a TFLite image as the file gives it
    ("nchw", [1, 3, 128, 128], [0, 1, 2, 3], "nchw"),  # a torch image
    ("nchw", [1, 3, 128, 128], [0, 2, 3, 1], "nhwc"),  # a torch image built with --layout nhwc
    (None, [1, 3, 128, 128], [0, 1, 2, 3], "nchw"),  # a manifest from before io.axes: every model was NCHW
])
def test_the_header_and_the_summary_name_the_layout_from_the_declared_axes(
    axes: str | None, shape: list[int], order: list[int], label: str,
) -> None:
    io = _io(axes, shape, order)
    assert io_macros(io)["input0_layout"] == label
    assert _tensor_io(io["inputs"][0], axes or "nchw").endswith(f" {label.upper()}, scale 0.5, zero point 0")


def test_an_order_that_is_neither_layout_has_no_label() -> None:
    assert layout_name([0, 3, 1, 2], "nchw") is None and layout_name([0, 1, 2], "nhwc") is None


def test_a_tflite_model_file_declares_nhwc_and_refuses_layout_nhwc(tmp_path: Path) -> None:
    from zoo.registry.model_files.py_file import spec_from_model_file

    path = tmp_path / "net.tflite"
    path.write_bytes(small_net().to_bytes())
    spec = spec_from_model_file(path)
    assert spec.axes == "nhwc" and spec.layouts == ("nchw",)
    target = TargetTable().resolve("u55-128")
    assert choose(spec, target, "int8", None).layout == "nchw"  # as declared: the program takes the file's NHWC
    with pytest.raises(UsageError, match="channels-last already"):
        choose(spec, target, "int8", "nhwc")


def test_a_spec_with_nhwc_axes_cannot_offer_layout_nhwc() -> None:
    spec = ModelSpec(name="m", version="1", description="d", task="custom",
                     inputs=(InputSpec("image", (1, 8, 8, 3)),), build=lambda _: None, example_inputs=lambda: (),
                     calibration=_dataset(), weights=(), axes="nhwc", layouts=("nchw", "nhwc"))
    assert any("layouts must not offer 'nhwc'" in p for p in spec._problems())
    assert any("axes 'hwcn'" in p for p in ModelSpec(**{**spec.__dict__, "axes": "hwcn"})._problems())


def _dataset() -> Any:
    from zoo import Dataset

    return Dataset(1, "one", lambda: [], lambda: "x")


def test_the_sites_build_rows_name_a_tflite_models_image_nhwc() -> None:
    from zoo.registry.site.builds import Build
    from zoo.registry.site.model_page import _target_table

    base: dict[str, Any] = dict(
        model="m", weights="w", target="ethos-u55-128", key="0" * 64, accelerator="ethos-u55-128", system_config="s",
        memory_mode="m", extra_flags=(), sram_budget=None, io="float", layout="nchw", io_in_key=False,
        precision="int8", inputs=(), time_ms=1.0, per_second=1.0, sram_bytes=1.0, flash_bytes=1.0, pte_bytes=1,
        npu_ops=1, cpu_ops=0, partitions=1, cpu_op_names=(), metrics=(), weights_info={}, tools={},
        built_at="2026-12-07T00:00")
    tflite, torch_model = Build(**base, axes="nhwc"), Build(**base)
    assert (tflite.memory_layout, torch_model.memory_layout) == ("nhwc", "nchw")
    assert tflite.variant == torch_model.variant  # the label changes; the build's --layout (none) does not
    assert '<td class="io">float nhwc</td>' in _target_table("ethos-u55-128", [tflite], {})
