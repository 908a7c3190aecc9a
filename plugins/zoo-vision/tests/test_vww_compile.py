"""The vision pack (part A), compile tier: vww-mobilenetv1-025 built once for u55-128 with
--verify; it lowers fully and records top-1 on the 40 held-out crops."""

from __future__ import annotations

from pathlib import Path

import pytest
from zoo_vision import vww

from zoo import Artifact, Zoo
from zoo.datasets import lfw_subset as lfw

pytestmark = pytest.mark.compile


@pytest.fixture(scope="session")
def vww_u55(tmp_path_factory: pytest.TempPathFactory) -> Artifact:
    """The one build the tier shares, from the installed pack."""
    cache: Path = tmp_path_factory.mktemp("vision-cache")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ZOO_CACHE_DIR", str(cache))
        for name in ("ZOO_CONFIG", "ZOO_PLUGINS", "ZOO_LOAD_PLUGINS"):
            mp.delenv(name, raising=False)
        return Zoo().fetch(vww.NAME, "u55-128", verify=True)


def test_it_lowers_fully_to_one_npu_partition(vww_u55: Artifact) -> None:
    delegation = vww_u55.manifest.to_json()["delegation"]
    assert delegation["partitions"] == 1 and delegation["npu_fraction"] == 1.0, delegation


def test_float_and_int8_top1_on_the_held_out_crops_are_recorded(vww_u55: Artifact) -> None:
    n = (vww_u55.manifest.verification or {})["numerics"]
    assert n["passed"] and n["method"] == "tosa_reference_model"
    (acc,) = n["metrics"]
    assert (acc["name"], acc["unit"], acc["samples"]) == ("top1", "%", 2 * lfw.HELD_OUT_PER_CLASS)
    assert acc["float"] == pytest.approx(vww.REFERENCE_TOP1, abs=0.01)  # the training script's own figure
    assert acc["passed"] and acc["drop"] <= 5.0
    info = vww_u55.manifest.to_json()["weights_info"]
    assert info["name"] == "lfw" and info["reference"] == {"top1": vww.REFERENCE_TOP1}
