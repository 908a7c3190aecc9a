"""``blazeface-short-range``: MediaPipe's short-range face detector (BlazeFace, 128×128), its real
weights read from the wheel's face_detection_short_range.tflite by ``zoo.read_tflite``.

Outputs, as the file gives them: ``regressors`` (1, 896, 16): per anchor the box's centre offset,
width and height and six keypoints (x, y), in input pixels; ``classificators`` (1, 896, 1): the face
logit. Decoded as MediaPipe's face_detection_short_range graph does (`zoo_mediapipe.ssd`).
"""

from __future__ import annotations

from functools import cache
from typing import Any

import zoo
from zoo import BuildError, Dataset, InputSpec, Metric, ModelSpec, WeightsVariant
from zoo_mediapipe import files, scenes, ssd

__all__ = ["ANCHORS", "NAME", "decode", "spec"]

NAME = "blazeface-short-range"
VERSION = "1"
FILE = "face_detection_short_range"
SIDE = 128
ANCHORS = ssd.AnchorOptions(side=SIDE, strides=(8, 16, 16, 16))
SCORE_THRESHOLD = 0.5  # the graph's min_score_thresh
NMS_THRESHOLD = 0.3  # its min_suppression_threshold, WEIGHTED
EVAL_SIZES = (32, 48, 64)
CALIBRATION_SIZES = (40, 56)
PREPROCESSING = "RGB, NHWC, pixels scaled to [-1, 1] ((p / 255) * 2 - 1), as MediaPipe's ImageToTensorCalculator"


@cache
def centres() -> list[tuple[float, float]]:
    return ssd.anchors(ANCHORS)


def decode(sample_outputs: Any) -> list[ssd.Detection]:
    regressors, scores = sample_outputs[0], sample_outputs[1]
    raw, logits = (t.detach().numpy() if hasattr(t, "detach") else t for t in (regressors, scores))
    return ssd.decode(raw, logits, centres(), SIDE, score_threshold=SCORE_THRESHOLD, nms_threshold=NMS_THRESHOLD)


def build(variant: str) -> Any:
    if variant != "mediapipe":
        raise BuildError(f"{NAME} has no weights variant {variant!r}; choose mediapipe")
    return zoo.read_tflite(files.model_file(FILE, NAME))


def _calibration() -> list[tuple[Any, ...]]:
    return [(image,) for image, _, _ in scenes.scenes("calibration", SIDE, CALIBRATION_SIZES)]


def _evaluation() -> list[tuple[tuple[Any, ...], Any]]:
    return [((image,), boxes) for image, boxes, _ in scenes.scenes("held_out", SIDE, EVAL_SIZES)]


def spec() -> ModelSpec:
    from zoo.datasets import lfw_subset as lfw

    split = lfw.snapshot()["split"]
    faces = {part: split[part] // 2 for part in ("calibration", "held_out")}
    evaluated = f"{faces['held_out'] * len(EVAL_SIZES)} scenes of the {faces['held_out']} held-out lfw_subset faces"
    decoding = (f"MediaPipe's 896 SSD anchors (strides 8, 16, 16, 16; fixed size), sigmoid scores ≥ {SCORE_THRESHOLD}, "
                f"weighted NMS at IoU {NMS_THRESHOLD}")
    return ModelSpec(
        name=NAME,
        version=VERSION,
        description=(f"MediaPipe's BlazeFace short-range face detector at {SIDE}×{SIDE}×3 (NHWC), real weights "
                     f"(float16 in the file). Outputs: regressors (1, 896, 16) and face logits (1, 896, 1); "
                     f"decoding: {decoding}. Input: {PREPROCESSING}."),
        task="face-detection",
        axes="nhwc",  # zoo.read_tflite's module takes the file's NHWC image
        inputs=(InputSpec("image", (1, SIDE, SIDE, 3), "float32", range=(-1.0, 1.0)),),
        outputs=("regressors", "classificators"),
        build=build,
        example_inputs=lambda: _calibration()[0],
        calibration=Dataset(faces["calibration"] * len(CALIBRATION_SIZES),
                            f"{faces['calibration']} calibration lfw_subset faces at {CALIBRATION_SIZES} px on "
                            "scikit-image backgrounds, each beside a non-face crop",
                            _calibration, lambda: scenes.identity("calibration", SIDE, CALIBRATION_SIZES)),
        evaluation=Dataset(faces["held_out"] * len(EVAL_SIZES),
                           f"{evaluated} at {EVAL_SIZES} px, each beside a non-face crop, the pasted box the truth",
                           _evaluation, lambda: scenes.identity("held_out", SIDE, EVAL_SIZES)),
        weights=(WeightsVariant(
            name="mediapipe",
            description=f"MediaPipe {files.VERSION}'s {FILE}.tflite, read by zoo.read_tflite, checked by sha256",
            origin=f"${files.ENV}/{FILE}.tflite from {files.ORIGIN}",
            licence=files.LICENCE,
            identity=lambda: files.identity(FILE),
        ),),
        metrics=(
            Metric("recall50", zoo.recall_at(decode, 0.5), higher_is_better=True, max_drop=10.0,
                   description=f"recall at IoU 0.5 of the pasted faces' boxes on the {evaluated}"),
            Metric("precision50", zoo.precision_at(decode, 0.5), higher_is_better=True, max_drop=10.0,
                   description=f"precision at IoU 0.5 on the {evaluated} (the non-face crops count against it)"),
            Metric("ap50", zoo.map_at(decode, 0.5), higher_is_better=True, max_drop=10.0,
                   description=f"average precision at IoU 0.5 on the {evaluated}"),
        ),
        labels=("face",),
        default_weights="mediapipe",
    )
