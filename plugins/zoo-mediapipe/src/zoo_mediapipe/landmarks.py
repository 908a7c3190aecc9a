"""The landmark networks: MediaPipe's 21 hand keypoints (``hand-landmark-lite``,
``hand-landmark-full``, 224×224) and BlazePose's 33 body keypoints (``pose-landmark-full``,
256×256), their real weights read from the wheel's ``.tflite`` files by ``zoo.read_tflite``.

Outputs, as the files give them. Hand: ``landmarks`` (1, 63): 21 keypoints (x, y in input pixels,
z relative depth); ``presence`` (1, 1); ``handedness`` (1, 1): the probability of a right hand;
``world_landmarks`` (1, 63), in metres. Pose: ``landmarks`` (1, 195): 39 keypoints (x, y, z,
visibility and presence logits; the first 33 are the body's, the last 6 MediaPipe's alignment
points); ``presence`` (1, 1); ``segmentation`` (1, 256, 256, 1); ``heatmap`` (1, 64, 64, 39);
``world_landmarks`` (1, 117). No wheel ships hands or people with keypoints, so the int8 program
is judged against the float model: agreement, not accuracy.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

import zoo
from zoo import BuildError, Dataset, Evaluator, InputSpec, Metric, ModelSpec, WeightsVariant
from zoo_mediapipe import files, images

__all__ = ["HAND_FULL", "HAND_LITE", "LANDMARKS", "POSE_FULL", "Landmarks", "pck", "pck_evaluator", "spec"]

FRACTION = 0.05


@dataclass(frozen=True)
class Landmarks:
    name: str
    file: str
    title: str
    side: int
    keypoints: int
    """The keypoints judged: the first ``keypoints`` of the ``landmarks`` output."""
    values: int
    """Values per keypoint in ``landmarks`` (x and y first)."""
    total: int
    """Keypoints in ``landmarks``."""
    outputs: tuple[str, ...]
    shapes: str
    max_drop: float


_HAND_OUTPUTS = ("landmarks", "presence", "handedness", "world_landmarks")
_HAND_SHAPES = "21 keypoints (1, 63: x, y in pixels, z), hand presence (1, 1), handedness (1, 1), world keypoints (1, 63)"
HAND_LITE = Landmarks("hand-landmark-lite", "hand_landmark_lite", "MediaPipe's hand landmarks (lite)", 224, 21, 3, 21,
                      _HAND_OUTPUTS, _HAND_SHAPES, 30.0)
HAND_FULL = Landmarks("hand-landmark-full", "hand_landmark_full", "MediaPipe's hand landmarks (full)", 224, 21, 3, 21,
                      _HAND_OUTPUTS, _HAND_SHAPES, 30.0)
POSE_FULL = Landmarks("pose-landmark-full", "pose_landmark_full", "BlazePose's body landmarks (full)", 256, 33, 5, 39,
                      ("landmarks", "presence", "segmentation", "heatmap", "world_landmarks"),
                      "39 keypoints (1, 195: x, y in pixels, z, visibility and presence logits; the first 33 the "
                      "body's), pose presence (1, 1), a person mask (1, 256, 256, 1), heatmaps (1, 64, 64, 39), "
                      "world keypoints (1, 117)", 30.0)
LANDMARKS = {n.name: n for n in (HAND_LITE, HAND_FULL, POSE_FULL)}


def build(net: Landmarks, variant: str) -> Any:
    if variant != "mediapipe":
        raise BuildError(f"{net.name} has no weights variant {variant!r}; choose mediapipe")
    return zoo.read_tflite(files.model_file(net.file, net.name))


def _points(sample_outputs: Sequence[Any], net: Landmarks) -> Any:
    import numpy as np

    first = sample_outputs[0]
    flat = np.asarray(first.detach().numpy() if hasattr(first, "detach") else first, dtype=np.float64)
    return flat.reshape(net.total, net.values)[: net.keypoints, :2]


def pck(outputs: Sequence[Sequence[Any]], reference: Sequence[Sequence[Any]], net: Landmarks, fraction: float) -> float:
    """The share in percent of keypoints within ``fraction`` of the float keypoints' box (its larger side)
    of the float model's, pooled over the samples."""
    import numpy as np

    hits = total = 0
    for mine, theirs in zip(outputs, reference, strict=True):
        a, b = _points(mine, net), _points(theirs, net)
        scale = float((b.max(axis=0) - b.min(axis=0)).max())
        if scale <= 0:
            raise ValueError("the float keypoints collapse to one point: no box to normalise by")
        hits += int((np.linalg.norm(a - b, axis=1) <= fraction * scale).sum())
        total += net.keypoints
    return 100.0 * hits / total


def _no_label(label: Any) -> str | None:
    return None if label is None else f"{label!r} is a label, but this metric compares with the float model's keypoints"


def pck_evaluator(net: Landmarks) -> Evaluator:
    def compute(outputs: Sequence[Sequence[Any]], labels: Sequence[Any], *, reference: Sequence[Sequence[Any]]) -> float:
        return pck(outputs, reference, net, FRACTION)

    return Evaluator(f"PCK@{FRACTION:g} vs float", compute, unit="%", wants_float=True,
                     label_format="None (the float model's keypoints are the reference)", check_label=_no_label)


@cache
def _images(side: int) -> tuple[Any, ...]:
    return tuple(image.permute(1, 2, 0)[None].contiguous() for image in images.mirrored(side))


def spec(net: Landmarks) -> ModelSpec:
    photos = images.photos_text(mirrored=True)
    data = f"{images.identity(images.PHOTOS)};side:{net.side};[0,1];mirrored"
    return ModelSpec(
        name=net.name,
        version="1",
        description=(f"{net.title} at {net.side}×{net.side}×3 (NHWC), real weights. Outputs: {net.shapes}. Input: RGB, "
                     "NHWC, pixels scaled to [0, 1] (p / 255), as MediaPipe's landmark graph feeds it."),
        task="keypoint-detection",
        axes="nhwc",  # zoo.read_tflite's module takes the file's NHWC image
        inputs=(InputSpec("image", (1, net.side, net.side, 3), "float32", range=(0.0, 1.0)),),
        outputs=net.outputs,
        build=lambda variant: build(net, variant),
        example_inputs=lambda: (_images(net.side)[0],),
        calibration=Dataset(2 * len(images.PHOTOS), photos, lambda: [(image,) for image in _images(net.side)], lambda: data),
        evaluation=Dataset(2 * len(images.PHOTOS), "the calibration images; the float model's keypoints are the reference",
                           lambda: [((image,), None) for image in _images(net.side)], lambda: data),
        weights=(WeightsVariant(
            name="mediapipe",
            description=f"MediaPipe {files.VERSION}'s {net.file}.tflite, read by zoo.read_tflite, checked by sha256",
            origin=f"${files.ENV}/{net.file}.tflite from {files.ORIGIN}",
            licence=files.LICENCE,
            identity=lambda: files.identity(net.file),
        ),),
        metrics=(Metric(
            "pck05-agreement", pck_evaluator(net), higher_is_better=True, max_drop=net.max_drop,
            description=(f"agreement, not accuracy: the share of the {net.keypoints} keypoints within {FRACTION:g} of "
                         f"the float keypoints' box (larger side) of the float model's, on the {2 * len(images.PHOTOS)} images"),
        ),),
        default_weights="mediapipe",
    )
