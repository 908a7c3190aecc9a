"""``hand-landmark-lite``: MediaPipe's 21 hand keypoints (224×224, lite), its real weights read
from the wheel's hand_landmark_lite.tflite by ``zoo.read_tflite``.

Outputs, as the file gives them: ``landmarks`` (1, 63): 21 keypoints (x, y in input pixels, z
relative depth); ``presence`` (1, 1): the hand-presence probability; ``handedness`` (1, 1): the
probability of a right hand; ``world_landmarks`` (1, 63): the keypoints in metres. No wheel ships
hands with keypoints, so the int8 program is judged against the float model: agreement, not accuracy.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Any

import zoo
from zoo import BuildError, Dataset, Evaluator, InputSpec, Metric, ModelSpec, WeightsVariant
from zoo_mediapipe import files, images

__all__ = ["NAME", "PCK", "pck", "spec"]

NAME = "hand-landmark-lite"
VERSION = "1"
FILE = "hand_landmark_lite"
SIDE = 224
KEYPOINTS = 21
FRACTION = 0.05
PHOTOS = ("astronaut.png", "camera.png", "chelsea.png", "coffee.png", "coins.png", "motorcycle_left.png")
PREPROCESSING = "RGB, NHWC, pixels scaled to [0, 1] (p / 255), as MediaPipe's hand landmark graph feeds it"


def build(variant: str) -> Any:
    if variant != "mediapipe":
        raise BuildError(f"{NAME} has no weights variant {variant!r}; choose mediapipe")
    return zoo.read_tflite(files.model_file(FILE, NAME))


def _points(sample_outputs: Sequence[Any], count: int) -> Any:
    import numpy as np

    first = sample_outputs[0]
    flat = np.asarray(first.detach().numpy() if hasattr(first, "detach") else first, dtype=np.float64)
    return flat.reshape(count, -1)[:, :2]


def pck(outputs: Sequence[Sequence[Any]], reference: Sequence[Sequence[Any]], count: int, fraction: float) -> float:
    """The share in percent of keypoints within ``fraction`` of the float keypoints' box (its larger side)
    of the float model's, pooled over the samples."""
    import numpy as np

    hits = total = 0
    for mine, theirs in zip(outputs, reference, strict=True):
        a, b = _points(mine, count), _points(theirs, count)
        scale = float((b.max(axis=0) - b.min(axis=0)).max())
        if scale <= 0:
            raise ValueError("the float keypoints collapse to one point: no box to normalise by")
        hits += int((np.linalg.norm(a - b, axis=1) <= fraction * scale).sum())
        total += count
    return 100.0 * hits / total


def _no_label(label: Any) -> str | None:
    return None if label is None else f"{label!r} is a label, but this metric compares with the float model's keypoints"


def _pck(outputs: Sequence[Sequence[Any]], labels: Sequence[Any], *, reference: Sequence[Sequence[Any]]) -> float:
    return pck(outputs, reference, KEYPOINTS, FRACTION)


PCK = Evaluator(f"PCK@{FRACTION:g} vs float", _pck, unit="%", wants_float=True,
                label_format="None (the float model's keypoints are the reference)", check_label=_no_label)


@cache
def _images() -> tuple[Any, ...]:
    out = []
    for name in PHOTOS:
        view = images.resized(images.load(name), SIDE)
        out += [view, view.flip(2).contiguous()]
    return tuple(image.permute(1, 2, 0)[None].contiguous() for image in out)


def spec() -> ModelSpec:
    photos = f"{len(PHOTOS)} scikit-image photos ({', '.join(p.removesuffix('.png') for p in PHOTOS)}) and their mirrors"
    data = f"{images.identity(PHOTOS)};side:{SIDE};[0,1];mirrored"
    return ModelSpec(
        name=NAME,
        version=VERSION,
        description=(f"MediaPipe's hand landmarks (lite) at {SIDE}×{SIDE}×3 (NHWC), real weights. Outputs: 21 keypoints "
                     "(1, 63: x, y in pixels, z), hand presence (1, 1), handedness (1, 1), world keypoints (1, 63). "
                     f"Input: {PREPROCESSING}."),
        task="keypoints",
        inputs=(InputSpec("image", (1, SIDE, SIDE, 3), "float32", range=(0.0, 1.0)),),
        outputs=("landmarks", "presence", "handedness", "world_landmarks"),
        build=build,
        example_inputs=lambda: (_images()[0],),
        calibration=Dataset(2 * len(PHOTOS), photos, lambda: [(image,) for image in _images()], lambda: data),
        evaluation=Dataset(2 * len(PHOTOS), "the calibration images; the float model's keypoints are the reference",
                           lambda: [((image,), None) for image in _images()], lambda: data),
        weights=(WeightsVariant(
            name="mediapipe",
            description=f"MediaPipe {files.VERSION}'s {FILE}.tflite, read by zoo.read_tflite, checked by sha256",
            origin=f"${files.ENV}/{FILE}.tflite from {files.ORIGIN}",
            licence=files.LICENCE,
            identity=lambda: files.identity(FILE),
        ),),
        metrics=(Metric(
            "pck05-agreement", PCK, higher_is_better=True, max_drop=30.0,
            description=(f"agreement, not accuracy: the share of the 21 keypoints within {FRACTION:g} of the float "
                         f"keypoints' box (larger side) of the float model's, on the {2 * len(PHOTOS)} images"),
        ),),
        default_weights="mediapipe",
    )
