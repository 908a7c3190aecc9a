"""The MediaPipe pack, fast tier: what it registers, MediaPipe's anchors and box decoding, weighted
NMS, the sha256 check of the wheel's files, and that registering it stays light."""

from __future__ import annotations

import importlib.metadata
import json
from pathlib import Path

import pytest
from zoo_mediapipe import blazeface, detectors, files, images, landmarks, selfie, ssd
from zoo_mediapipe.detectors import PALM, PALM_FULL, POSE
from zoo_mediapipe.landmarks import HAND_FULL, HAND_LITE, POSE_FULL

from tests.conftest import run_probed
from zoo import BuildError, Zoo


def test_blazeface_declares_its_input_outputs_metrics_and_licence(mediapipe_zoo: Zoo) -> None:
    spec = mediapipe_zoo.model(blazeface.NAME)
    assert spec.task == "face-detection"
    (image,) = spec.inputs
    assert (image.shape, image.range, spec.axes) == ((1, 128, 128, 3), (-1.0, 1.0), "nhwc")
    assert spec.outputs == ("regressors", "classificators")
    assert [m.name for m in spec.metrics] == ["recall50", "precision50", "ap50"]
    assert all(m.unit_text == "%" and m.higher_is_better for m in spec.metrics)
    weights = spec.weights_variant(None)
    assert weights.name == "mediapipe" and weights.licence.startswith("Apache-2.0")
    assert files.FILES["face_detection_short_range"][1] in weights.identity()
    assert "tflite-reader sha256:" in weights.identity()
    assert spec.evaluation is not None and spec.evaluation.size == 60 and spec.calibration.size == 32


@pytest.mark.parametrize(("net", "shape"), [(selfie.GENERAL, (1, 256, 256, 3)), (selfie.LANDSCAPE, (1, 144, 256, 3))],
                         ids=["general", "landscape"])
def test_selfie_segmentation_declares_its_input_mask_and_agreement_metrics(mediapipe_zoo: Zoo, net: selfie.Selfie,
                                                                            shape: tuple[int, ...]) -> None:
    spec = mediapipe_zoo.model(net.name)
    (image,) = spec.inputs
    assert (spec.task, image.shape, image.range, spec.outputs) == ("semantic-segmentation", shape, (0.0, 1.0),
                                                                   ("mask",))
    assert [m.name for m in spec.metrics] == ["mask-agreement", "face-coverage-gap"]
    assert spec.axes == "nhwc"  # the header and summary label its image NHWC, as the file takes it
    assert spec.metrics[0].description.startswith("agreement, not accuracy")
    assert spec.weights_variant(None).licence.startswith("Apache-2.0")
    assert files.FILES[net.file][1] in spec.weights_variant(None).identity()
    assert spec.evaluation is not None and spec.evaluation.size == 40 + len(images.PHOTOS)


@pytest.mark.parametrize("height", [256, 144])  # the general model's square mask, the landscape one's
def test_the_mask_metrics_pool_iou_against_float_and_compare_the_face_and_non_face_boxes(height: int) -> None:
    import numpy as np

    ref = np.zeros((1, height, 256, 1), dtype=np.float32)
    ref[0, :100, :100] = 0.9  # 10,000 px
    mine = np.zeros_like(ref)
    mine[0, 40:140, :100] = 0.7  # 10,000 px, 6,000 of them the reference's
    labels = [(0, 0, 100, 100, 200, 100, 256, 144)]
    assert selfie.AGREEMENT([[mine]], labels, reference=[[ref]]) == pytest.approx(100.0 * 6000 / 14000)
    assert selfie.COVERAGE_GAP([[ref]], labels) == pytest.approx(100.0)  # face box all in, the other all out
    assert selfie.COVERAGE_GAP([[mine]], labels) == pytest.approx(60.0)
    assert selfie.COVERAGE_GAP([[ref], [ref]], [(), *labels]) == pytest.approx(100.0)  # a photo has no boxes
    assert selfie.AGREEMENT.check_label("face") is not None and selfie.AGREEMENT.check_label(()) is None


def test_the_palm_and_pose_detectors_declare_their_anchors_and_an_agreement_metric(mediapipe_zoo: Zoo) -> None:
    for detector, shape, value_range, anchors in ((PALM, (1, 192, 192, 3), (0.0, 1.0), 2016),
                                                  (POSE, (1, 224, 224, 3), (-1.0, 1.0), 2254)):
        spec = mediapipe_zoo.model(detector.name)
        (image,) = spec.inputs
        assert (image.shape, image.range, spec.outputs) == (shape, value_range, ("regressors", "classificators"))
        (metric,) = spec.metrics
        assert metric.name == "box-agreement" and metric.description.startswith("agreement, not accuracy")
        assert len(detectors.centres(detector)) == anchors
        assert files.FILES[detector.file][1] in spec.weights_variant(None).identity()
    # Palm: 24×24 cells × 2 at stride 8, then 12×12 × 6. Pose: 28×28 × 2, 14×14 × 2, then 7×7 × 6.
    assert detectors.centres(PALM)[1152] == (0.5 / 12, 0.5 / 12)
    assert detectors.centres(POSE)[1568] == (0.5 / 14, 0.5 / 14) and detectors.centres(POSE)[1960] == (0.5 / 7, 0.5 / 7)


def test_top_keeps_the_best_anchors_before_suppression() -> None:
    import numpy as np

    centres = ssd.anchors(PALM.anchors)
    regressors = np.zeros((1, 2016, 18), dtype=np.float32)
    regressors[0, :, 2:4] = 10.0  # 10×10 px boxes on each anchor's centre
    logits = np.linspace(-5.0, 5.0, 2016, dtype=np.float32).reshape(1, 2016, 1)
    found = ssd.decode(regressors, logits, centres, 192, score_threshold=0.0, nms_threshold=0.3, top=3)
    # Anchors 2015, 2014 and 2013 share a cell: one merged box with the best score.
    assert len(found) == 1 and found[0][4] == pytest.approx(1.0 / (1.0 + np.exp(-5.0)))


def test_hand_landmarks_are_judged_by_pck_against_float_named_agreement(mediapipe_zoo: Zoo) -> None:
    import numpy as np

    spec = mediapipe_zoo.model(HAND_LITE.name)
    assert spec.outputs == ("landmarks", "presence", "handedness", "world_landmarks")
    assert spec.metrics[0].name == "pck05-agreement" and "agreement, not accuracy" in spec.metrics[0].description
    ref = np.zeros((1, 63))
    ref[0, 0::3] = np.arange(21) * 5.0  # x from 0 to 100 px: the box's larger side is 100
    moved = ref.copy()
    moved[0, 0:15:3] += 4.9  # five keypoints 4.9 px off: within 0.05 × 100
    moved[0, 15:30:3] += 5.1  # five 5.1 px off: not
    assert landmarks.pck_evaluator(HAND_LITE)([[moved]], [None], reference=[[ref]]) == pytest.approx(100.0 * 16 / 21)
    with pytest.raises(ValueError, match="collapse to one point"):
        landmarks.pck_evaluator(HAND_LITE)([[ref]], [None], reference=[[np.zeros((1, 63))]])


def test_pose_landmarks_judge_the_33_body_keypoints_of_39_by_x_and_y(mediapipe_zoo: Zoo) -> None:
    import numpy as np

    spec = mediapipe_zoo.model(POSE_FULL.name)
    assert spec.outputs == ("landmarks", "presence", "segmentation", "heatmap", "world_landmarks")
    assert spec.inputs[0].shape == (1, 256, 256, 3) and spec.task == "keypoint-detection"
    ref = np.zeros((39, 5))
    ref[:33, 0] = np.arange(33) * 5.0  # the body's x from 0 to 160 px: the box's larger side is 160
    moved = ref.copy()
    moved[33:, :2] += 1000.0  # the 6 alignment points are not judged
    moved[:, 2:] += 1000.0  # nor z, visibility and presence
    moved[:4, 1] += 8.1  # four body keypoints 8.1 px off: not within 0.05 × 160
    assert landmarks.pck_evaluator(POSE_FULL)([[moved.reshape(1, -1)]], [None],
                                              reference=[[ref.reshape(1, -1)]]) == pytest.approx(100.0 * 29 / 33)


def test_the_short_range_anchors_are_mediapipes_896() -> None:
    centres = ssd.anchors(blazeface.ANCHORS)
    assert len(centres) == 896
    # Stride 8: a 16×16 grid, two anchors a cell; then the three stride-16 layers merged, six a cell on 8×8.
    assert centres[0] == centres[1] == (0.5 / 16, 0.5 / 16)
    assert centres[2] == (1.5 / 16, 0.5 / 16)
    assert centres[511] == (15.5 / 16, 15.5 / 16)
    assert centres[512] == centres[517] == (0.5 / 8, 0.5 / 8)
    assert centres[518] == (1.5 / 8, 0.5 / 8) and centres[-1] == (7.5 / 8, 7.5 / 8)


def test_one_anchor_decodes_to_a_known_box_exactly() -> None:
    import numpy as np

    centres = ssd.anchors(blazeface.ANCHORS)
    regressors = np.zeros((1, 896, 16), dtype=np.float32)
    logits = np.full((1, 896, 1), -50.0, dtype=np.float32)
    # Anchor 600 (stride 16): centre ((600 - 512) // 6 % 8 + 0.5) / 8 = 6.5 / 8 across, 1.5 / 8 down.
    assert centres[600] == (6.5 / 8, 1.5 / 8)
    regressors[0, 600, :4] = (-8.0, 4.0, 40.0, 24.0)  # the centre moved (-8, +4) px, 40×24 px
    logits[0, 600, 0] = 2.0
    (found,) = ssd.decode(regressors, logits, centres, 128, score_threshold=0.5, nms_threshold=0.3)
    cx, cy = 6.5 / 8 * 128 - 8.0, 1.5 / 8 * 128 + 4.0
    assert found[:4] == pytest.approx((cx - 20.0, cy - 12.0, cx + 20.0, cy + 12.0), abs=1e-9)
    assert found[4] == pytest.approx(1.0 / (1.0 + np.exp(-2.0))) and found[5] == 0
    logits[0, 600, 0] = -0.1  # sigmoid below 0.5: nothing
    assert ssd.decode(regressors, logits, centres, 128, score_threshold=0.5, nms_threshold=0.3) == []


def test_weighted_nms_merges_overlapping_boxes_by_score_and_keeps_the_others() -> None:
    a = (0.0, 0.0, 10.0, 10.0, 0.9, 0)
    b = (1.0, 1.0, 11.0, 11.0, 0.3, 0)  # IoU with a: 81 / 119 > 0.3
    far = (50.0, 50.0, 60.0, 60.0, 0.6, 0)
    kept = ssd.weighted_nms([b, far, a], 0.3)
    assert len(kept) == 2
    assert kept[0] == pytest.approx((0.25, 0.25, 10.25, 10.25, 0.9, 0))  # (0.9·a + 0.3·b) / 1.2, a's score
    assert kept[1] == far
    flat = (5.0, 5.0, 5.0, 9.0, 0.7, 0)  # zero area: overlaps nothing, still kept once
    assert ssd.weighted_nms([flat, flat], 0.3) == [flat, flat]


def test_a_file_with_other_bytes_is_refused_and_a_missing_one_names_make_setup(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(files.ENV, str(tmp_path))
    with pytest.raises(BuildError, match=r"face_detection_short_range\.tflite is missing: run `make setup`"):
        blazeface.build("mediapipe")
    (tmp_path / "face_detection_short_range.tflite").write_bytes(b"TFL3 but not MediaPipe's")
    with pytest.raises(BuildError) as caught:
        blazeface.build("mediapipe")
    text = str(caught.value)
    assert files.FILES["face_detection_short_range"][1] in text and "refusing other bytes" in text, text
    assert text.startswith(f"{blazeface.NAME}: ") and files.ENV in text, text
    with pytest.raises(BuildError, match="no weights variant 'random'; choose mediapipe"):
        blazeface.build("random")


def test_the_default_folder_is_the_virtualenvs_mediapipe(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.delenv(files.ENV, raising=False)
    assert files.folder() == Path(sys.prefix) / "mediapipe"


def test_zoo_list_with_the_pack_imports_neither_torch_nor_numpy() -> None:
    try:
        importlib.metadata.distribution("zoo-mediapipe")
        plugin: tuple[str, ...] = ()
    except importlib.metadata.PackageNotFoundError:  # not installed: load the module by name
        plugin = ("-p", "zoo_mediapipe.plugin")
    probed = run_probed(*plugin, "list", "--json", watch=("torch", "numpy", "PIL", "zoo._tflite.build"))
    assert probed.returncode == 0, probed.stderr
    assert probed.loaded == []
    listed = {m["name"]: m["task"] for m in json.loads(probed.stdout)}
    assert [listed.get(name) for name in (blazeface.NAME, selfie.GENERAL.name, selfie.LANDSCAPE.name, PALM.name,
                                          PALM_FULL.name, POSE.name, HAND_LITE.name, HAND_FULL.name, POSE_FULL.name)] == [
        "face-detection", *["semantic-segmentation"] * 2, *["object-detection"] * 3, *["keypoint-detection"] * 3], \
        sorted(listed)
