"""``palm-detection-lite``: MediaPipe's palm detector (192×192, lite), its real weights read from
the wheel's palm_detection_lite.tflite by ``zoo.read_tflite``.

Outputs, as the file gives them: ``regressors`` (1, 2016, 18): per anchor the box (centre offset,
width, height, in input pixels) and seven keypoints; ``classificators`` (1, 2016, 1): the palm logit.
No wheel ships hands with boxes, so the int8 program is judged by how many of the float model's
best boxes it finds again on photos: agreement, not accuracy.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import zoo
from zoo import BuildError, Dataset, InputSpec, Metric, ModelSpec, WeightsVariant
from zoo_mediapipe import files, images, ssd

__all__ = ["ANCHORS", "NAME", "decode", "spec"]

NAME = "palm-detection-lite"
VERSION = "1"
FILE = "palm_detection_lite"
SIDE = 192
ANCHORS = ssd.AnchorOptions(side=SIDE, strides=(8, 16, 16, 16))
KEEP = 5
NMS_THRESHOLD = 0.3
PHOTOS = ("astronaut.png", "camera.png", "chelsea.png", "coffee.png", "coins.png", "motorcycle_left.png")
PREPROCESSING = "RGB, NHWC, pixels scaled to [0, 1] (p / 255), as MediaPipe's palm detection graph feeds it"


@cache
def centres() -> list[tuple[float, float]]:
    return ssd.anchors(ANCHORS)


def decode(sample_outputs: Any) -> list[ssd.Detection]:
    """The float model's and the program's best boxes: the 100 best anchors at any score, weighted
    NMS at IoU 0.3 (the graph's), then the :data:`KEEP` best."""
    raw, logits = (t.detach().numpy() if hasattr(t, "detach") else t for t in sample_outputs[:2])
    return ssd.decode(raw, logits, centres(), SIDE, score_threshold=0.0, nms_threshold=NMS_THRESHOLD,
                      top=100)[:KEEP]


def build(variant: str) -> Any:
    if variant != "mediapipe":
        raise BuildError(f"{NAME} has no weights variant {variant!r}; choose mediapipe")
    return zoo.read_tflite(files.model_file(FILE, NAME))


@cache
def _images() -> tuple[Any, ...]:
    out = []
    for name in PHOTOS:
        view = images.resized(images.load(name), SIDE)
        out += [view, view.flip(2).contiguous()]
    return tuple(image.permute(1, 2, 0)[None].contiguous() for image in out)


def spec() -> ModelSpec:
    from zoo_vision import float_boxes

    photos = f"{len(PHOTOS)} scikit-image photos ({', '.join(p.removesuffix('.png') for p in PHOTOS)}) and their mirrors"
    data = f"{images.identity(PHOTOS)};side:{SIDE};[0,1];mirrored"
    return ModelSpec(
        name=NAME,
        version=VERSION,
        description=(f"MediaPipe's palm detector (lite) at {SIDE}×{SIDE}×3 (NHWC), real weights. Outputs: regressors "
                     "(1, 2016, 18: box and 7 keypoints) and palm logits (1, 2016, 1); decoding: MediaPipe's 2016 SSD "
                     f"anchors (strides 8, 16, 16, 16; fixed size), sigmoid scores, weighted NMS at IoU {NMS_THRESHOLD}. "
                     f"Input: {PREPROCESSING}."),
        task="object-detection",
        inputs=(InputSpec("image", (1, SIDE, SIDE, 3), "float32", range=(0.0, 1.0)),),
        outputs=("regressors", "classificators"),
        build=build,
        example_inputs=lambda: (_images()[0],),
        calibration=Dataset(2 * len(PHOTOS), photos, lambda: [(image,) for image in _images()], lambda: data),
        evaluation=Dataset(2 * len(PHOTOS), f"the calibration images; the float model's {KEEP} best boxes on each "
                           "are the reference", lambda: [((image,), None) for image in _images()], lambda: data),
        weights=(WeightsVariant(
            name="mediapipe",
            description=f"MediaPipe {files.VERSION}'s {FILE}.tflite, read by zoo.read_tflite, checked by sha256",
            origin=f"${files.ENV}/{FILE}.tflite from {files.ORIGIN}",
            licence=files.LICENCE,
            identity=lambda: files.identity(FILE),
        ),),
        metrics=(Metric(
            "box-agreement", float_boxes.recall_vs_float(NAME, decode), higher_is_better=True, max_drop=30.0,
            description=(f"agreement, not accuracy: the share of the float model's {KEEP} best boxes per image the "
                         f"program finds again at IoU 0.5, on the {2 * len(PHOTOS)} images"),
        ),),
        labels=("palm",),
        default_weights="mediapipe",
    )
