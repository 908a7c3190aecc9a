"""The digit models, compile tier: the smaller, seg-tiny-mcu, built for u55-128 with --verify, so
that its int8 program's mIoU on the 100 test canvases is measured on the TOSA reference model
against float's, and it lowers whole."""

from __future__ import annotations

import pytest
from zoo_vision import digit_canvas, seg_tiny

from zoo import Zoo

pytestmark = pytest.mark.compile


def test_seg_tiny_lowers_whole_and_its_int8_miou_is_within_its_declared_drop(vision_zoo: Zoo) -> None:
    artifact = vision_zoo.fetch(seg_tiny.NAME, "u55-128", verify=True)
    manifest = artifact.manifest.to_json()
    n = (artifact.manifest.verification or {})["numerics"]
    assert n["passed"] and n["method"] == "tosa_reference_model"
    (miou,) = n["metrics"]
    assert (miou["name"], miou["samples"]) == ("miou", digit_canvas.SIZES["test"])
    assert miou["float"] == pytest.approx(seg_tiny.REFERENCE_MIOU, abs=0.01)  # the training script's figure
    assert miou["passed"] and miou["drop"] <= seg_tiny.MAX_DROP
    assert manifest["delegation"]["partitions"] == 1 and manifest["delegation"]["npu_fraction"] == 1.0
    assert manifest["weights_info"]["name"] == "digits" and "MNIST" in manifest["weights_info"]["licence"]
