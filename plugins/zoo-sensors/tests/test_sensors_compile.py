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


def test_speaker_id_fine_tunes_with_2_4_sparsity_into_a_program_without_batchnorm(sensors_zoo: Zoo) -> None:
    """Found measuring the weight recipes (issue 59): QAT on a network with BatchNorm (every model of
    the pack) left BatchNorm's arithmetic as float CPU operators, which --io int8 refuses; it is
    folded into the convolution before training now, as post-training quantization does."""
    artifact = sensors_zoo.fetch(SPEAKER_ID.name, "u85-256", io="int8", weights_transform="sparse24", qat=10)
    manifest = artifact.manifest.to_json()
    assert artifact.manifest.precision == "int8+sparse24+qat10"
    assert manifest["delegation"]["partitions"] == 1 and manifest["delegation"]["npu_fraction"] == 1.0
    assert not manifest["cpu_operators"], manifest["cpu_operators"]


def test_speaker_id_with_int8_io_in_nhwc_has_no_input_transpose_on_the_npu(sensors_zoo: Zoo) -> None:
    """Issue 59: NCHW only, its u65-256 --io int8 program began with two transposes (871 and 75
    cycles) and cost 1.001 of the int8 TFLite flow's; NHWC, it has none."""
    artifact = sensors_zoo.fetch(SPEAKER_ID.name, "u85-256", io="int8", layout="nhwc")
    (record,) = artifact.manifest.to_json()["io"]["inputs"]
    assert (record["dtype"], record["shape"], record["dim_order"]) == ("int8", [1, 12, 1, 29], [0, 2, 3, 1])
    vela = artifact.manifest.vela
    assert vela is not None and [p["input_transposes"] for p in vela["partitions"]] == [[]]
