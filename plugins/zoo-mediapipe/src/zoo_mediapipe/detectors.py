"""``palm-detection-lite``, ``palm-detection-full`` and ``pose-detection``: MediaPipe's palm detector (192×192, lite and full) and
BlazePose's person detector (224×224), their real weights read from the wheel's ``.tflite`` files
by ``zoo.read_tflite`` (the pose file's sparse weights through DENSIFY).

Outputs, as the files give them: ``regressors`` (1, N, 4 + 2K): per anchor the box (centre
offset, width, height, in input pixels) and K keypoints; ``classificators`` (1, N, 1): the logit.
No wheel ships hands or people with boxes, so the int8 program is judged by how many of the float
model's best boxes it finds again on photos: agreement, not accuracy.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

import zoo
from zoo import BuildError, Dataset, InputSpec, Metric, ModelSpec, WeightsVariant
from zoo_mediapipe import files, images, ssd

__all__ = ["DETECTORS", "PALM", "PALM_FULL", "POSE", "Detector", "decoder", "spec"]

KEEP = 5
NMS_THRESHOLD = 0.3


@dataclass(frozen=True)
class Detector:
    name: str
    file: str
    title: str
    side: int
    strides: tuple[int, ...]
    keypoints: int
    value_range: tuple[float, float]
    label: str

    @property
    def anchors(self) -> ssd.AnchorOptions:
        return ssd.AnchorOptions(side=self.side, strides=self.strides)


PALM = Detector("palm-detection-lite", "palm_detection_lite", "MediaPipe's palm detector (lite)", 192,
                (8, 16, 16, 16), 7, (0.0, 1.0), "palm")
POSE = Detector("pose-detection", "pose_detection", "BlazePose's person detector (a face box and 4 keypoints)",
                224, (8, 16, 32, 32, 32), 4, (-1.0, 1.0), "person")
PALM_FULL = Detector("palm-detection-full", "palm_detection_full", "MediaPipe's palm detector (full)", 192,
                     (8, 16, 16, 16), 7, (0.0, 1.0), "palm")
DETECTORS = {d.name: d for d in (PALM, PALM_FULL, POSE)}


@cache
def centres(detector: Detector) -> list[tuple[float, float]]:
    return ssd.anchors(detector.anchors)


def decoder(detector: Detector) -> Any:
    """The float model's and the program's best boxes: the 100 best anchors at any score, weighted
    NMS at IoU 0.3 (the graphs'), then the :data:`KEEP` best."""

    def decode(sample_outputs: Any) -> list[ssd.Detection]:
        raw, logits = (t.detach().numpy() if hasattr(t, "detach") else t for t in sample_outputs[:2])
        return ssd.decode(raw, logits, centres(detector), detector.side, score_threshold=0.0,
                          nms_threshold=NMS_THRESHOLD, top=100)[:KEEP]

    return decode


def build(detector: Detector, variant: str) -> Any:
    if variant != "mediapipe":
        raise BuildError(f"{detector.name} has no weights variant {variant!r}; choose mediapipe")
    return zoo.read_tflite(files.model_file(detector.file, detector.name))


@cache
def _images(detector: Detector) -> tuple[Any, ...]:
    low, high = detector.value_range
    return tuple((image * (high - low) + low).permute(1, 2, 0)[None].contiguous()
                 for image in images.mirrored(detector.side))


def spec(detector: Detector) -> ModelSpec:
    low, high = detector.value_range
    count = len(centres(detector))
    photos = images.photos_text(mirrored=True)
    data = f"{images.identity(images.PHOTOS)};side:{detector.side};[{low:g},{high:g}];mirrored"
    strides = ", ".join(map(str, detector.strides))
    return ModelSpec(
        name=detector.name,
        version="1",
        description=(f"{detector.title} at {detector.side}×{detector.side}×3 (NHWC), real weights. Outputs: regressors "
                     f"(1, {count}, {4 + 2 * detector.keypoints}: box and {detector.keypoints} keypoints) and logits "
                     f"(1, {count}, 1); decoding: MediaPipe's {count} SSD anchors (strides {strides}; fixed size), "
                     f"sigmoid scores, weighted NMS at IoU {NMS_THRESHOLD}. Input: RGB, NHWC, pixels scaled to "
                     f"[{low:g}, {high:g}] as MediaPipe's graph feeds it."),
        task="object-detection",
        axes="nhwc",  # zoo.read_tflite's module takes the file's NHWC image
        inputs=(InputSpec("image", (1, detector.side, detector.side, 3), "float32", range=detector.value_range),),
        outputs=("regressors", "classificators"),
        build=lambda variant: build(detector, variant),
        example_inputs=lambda: (_images(detector)[0],),
        calibration=Dataset(2 * len(images.PHOTOS), photos, lambda: [(image,) for image in _images(detector)], lambda: data),
        evaluation=Dataset(2 * len(images.PHOTOS), f"the calibration images; the float model's {KEEP} best boxes on each "
                           "are the reference", lambda: [((image,), None) for image in _images(detector)],
                           lambda: data),
        weights=(WeightsVariant(
            name="mediapipe",
            description=f"MediaPipe {files.VERSION}'s {detector.file}.tflite, read by zoo.read_tflite, checked by sha256",
            origin=f"${files.ENV}/{detector.file}.tflite from {files.ORIGIN}",
            licence=files.LICENCE,
            identity=lambda: files.identity(detector.file),
        ),),
        metrics=(Metric(
            "box-agreement", zoo.recall_vs_float(detector.name, decoder(detector)), higher_is_better=True,
            max_drop=30.0,
            description=(f"agreement, not accuracy: the share of the float model's {KEEP} best boxes per image the "
                         f"program finds again at IoU 0.5, on the {2 * len(images.PHOTOS)} images"),
        ),),
        labels=(detector.label,),
        default_weights="mediapipe",
    )
