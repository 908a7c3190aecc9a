"""The PP-OCR models, compile tier: ppocr-cls (the cheapest of the three, about 3.5 minutes on two
cores) read by zoo.read_onnx, built for u55-128 with --verify from the installed pack."""

from __future__ import annotations

from pathlib import Path

import pytest
from zoo_vision import ocr_data, ppocr

from zoo import Artifact, BuildError, Zoo

pytestmark = pytest.mark.compile


@pytest.fixture(scope="session")
def ppocr_cls_u55(tmp_path_factory: pytest.TempPathFactory) -> Artifact:
    try:
        ppocr.onnx_path("cls")
    except BuildError as e:
        pytest.skip(str(e))
    cache: Path = tmp_path_factory.mktemp("ocr-cache")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ZOO_CACHE_DIR", str(cache))
        for name in ("ZOO_CONFIG", "ZOO_PLUGINS", "ZOO_LOAD_PLUGINS"):
            mp.delenv(name, raising=False)
        return Zoo().fetch("ppocr-cls", "u55-128", verify=True)


def test_ppocr_cls_lowers_fully_to_the_npu(ppocr_cls_u55: Artifact) -> None:
    delegation = ppocr_cls_u55.manifest.to_json()["delegation"]
    assert delegation["partitions"] == 1 and delegation["npu_fraction"] == 1.0, delegation


def test_ppocr_cls_float_and_int8_direction_accuracy_are_recorded(ppocr_cls_u55: Artifact) -> None:
    n = (ppocr_cls_u55.manifest.verification or {})["numerics"]
    assert n["passed"] and n["method"] == "tosa_reference_model"
    (acc,) = n["metrics"]
    assert (acc["name"], acc["unit"], acc["samples"]) == ("top1", "%", ocr_data.COUNTS["cls"][1])
    assert acc["float"] == pytest.approx(ppocr.FLOAT["cls"]["top1"], abs=0.01)  # onnxruntime's figure
    assert acc["passed"] and acc["drop"] <= ppocr.MAX_DROP["top1"]
    assert ppocr_cls_u55.manifest.to_json()["weights_info"]["name"] == "rapidocr"
