"""The sensors pack, compile tier: its smallest model, speaker-id-vowels, built for u55-128 with
--verify, so that its int8 program's top-1 on the 370 held-out utterances is measured on the
TOSA reference model against float's."""

from __future__ import annotations

import pytest
from zoo_sensors.series_models import SPEAKER_ID

from zoo import Zoo

pytestmark = pytest.mark.compile


def test_speaker_id_lowers_whole_and_its_int8_top1_is_within_its_declared_drop(sensors_zoo: Zoo) -> None:
    artifact = sensors_zoo.fetch(SPEAKER_ID.name, "u55-128", verify=True)
    manifest = artifact.manifest.to_json()
    n = (artifact.manifest.verification or {})["numerics"]
    assert n["passed"] and n["method"] == "tosa_reference_model"
    (acc,) = n["metrics"]
    assert (acc["name"], acc["samples"]) == ("top1", 370)
    assert acc["float"] == pytest.approx(SPEAKER_ID.reference_top1, abs=0.01)  # the training script's figure
    assert acc["passed"] and acc["drop"] <= 1.0
    assert manifest["delegation"]["partitions"] == 1 and manifest["delegation"]["npu_fraction"] == 1.0
    assert manifest["weights_info"]["name"] == "japanese-vowels" and "sktime" in manifest["weights_info"]["licence"]
