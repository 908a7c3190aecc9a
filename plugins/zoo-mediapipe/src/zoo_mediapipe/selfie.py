"""``selfie-segmentation`` and ``selfie-segmentation-landscape``: MediaPipe's person segmentation (the
general model at 256×256, the landscape one at 144×256), their real weights read from the wheel's
``.tflite`` files by ``zoo.read_tflite`` (the files' custom ``Convolution2DTransposeBias`` included).

Output, as the files give it: ``mask`` (1, H, W, 1), the per-pixel person probability (the
network ends in a sigmoid); MediaPipe's graph thresholds it, here at 0.5. No data set with person
masks ships in a wheel, so the int8 program is judged against the float model (agreement) and by
how much more of a face crop than of a non-face crop its mask covers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

import zoo
from zoo import BuildError, Dataset, Evaluator, InputSpec, Metric, ModelSpec, WeightsVariant
from zoo_mediapipe import files, images, scenes

__all__ = ["GENERAL", "LANDSCAPE", "SELFIES", "Selfie", "spec"]


@dataclass(frozen=True)
class Selfie:
    name: str
    file: str
    title: str
    height: int
    width: int


GENERAL = Selfie("selfie-segmentation", "selfie_segmentation", "general", 256, 256)
LANDSCAPE = Selfie("selfie-segmentation-landscape", "selfie_segmentation_landscape", "landscape", 144, 256)
SELFIES = {s.name: s for s in (GENERAL, LANDSCAPE)}
VERSION = "1"
THRESHOLD = 0.5
SIZES = {"calibration": (112,), "held_out": (96, 128)}
PREPROCESSING = "RGB, NHWC, pixels scaled to [0, 1] (p / 255), as MediaPipe's selfie segmentation graph feeds it"


def build(selfie: Selfie, variant: str) -> Any:
    if variant != "mediapipe":
        raise BuildError(f"{selfie.name} has no weights variant {variant!r}; choose mediapipe")
    return zoo.read_tflite(files.model_file(selfie.file, selfie.name))


def _nhwc(image: Any) -> Any:
    return image.permute(1, 2, 0)[None].contiguous()


Label = tuple[int, ...]
"""A scene's face box and non-face box, (x1, y1, x2, y2) each, in pixels; () for a photo."""


def _scene_height(selfie: Selfie) -> int | None:
    """The scenes' height where it is not their width (scenes.scenes's square default)."""
    return None if selfie.height == selfie.width else selfie.height


@cache
def _items(selfie: Selfie, split: str) -> tuple[tuple[Any, Label], ...]:
    """`zoo_mediapipe.scenes` of lfw_subset's ``split`` at the input's size in [0, 1] with their two boxes,
    then the photos resized to it (mirrored for calibration) with ``()``."""
    out: list[tuple[Any, Label]] = [
        ((image + 1.0) / 2.0, (*boxes[0][:4], *other))
        for image, boxes, other in scenes.scenes(split, selfie.width, SIZES[split], _scene_height(selfie))]
    for name in images.PHOTOS:
        view = images.resized(images.load(name), selfie.width, _scene_height(selfie))
        out.append((_nhwc(view.flip(2).contiguous() if split == "calibration" else view), ()))
    return tuple(out)


def _check(label: Any) -> str | None:
    ok = isinstance(label, tuple) and len(label) in (0, 8) and all(isinstance(v, int) for v in label)
    return None if ok else f"{label!r} is not () or a face box and a non-face box (8 ints)"


def _masks(outputs: Sequence[Sequence[Any]]) -> list[Any]:
    import numpy as np

    masks = [np.asarray(o[0].detach().numpy() if hasattr(o[0], "detach") else o[0]) for o in outputs]
    return [m.reshape(m.shape[-3], m.shape[-2]) >= THRESHOLD for m in masks]  # (1, H, W, 1) to (H, W)


def _agreement(outputs: Sequence[Sequence[Any]], labels: Sequence[Any], *,
               reference: Sequence[Sequence[Any]]) -> float:
    inter = union = 0
    for mine, theirs in zip(_masks(outputs), _masks(reference), strict=True):
        inter += int((mine & theirs).sum())
        union += int((mine | theirs).sum())
    if union == 0:
        raise ValueError("the float mask is empty on every sample: nothing to agree on")
    return 100.0 * inter / union


def _coverage_gap(outputs: Sequence[Sequence[Any]], labels: Sequence[Any]) -> float:
    gaps = []
    for mask, label in zip(_masks(outputs), labels, strict=True):
        if label:
            fx1, fy1, fx2, fy2, ox1, oy1, ox2, oy2 = label
            gaps.append(float(mask[fy1:fy2, fx1:fx2].mean()) - float(mask[oy1:oy2, ox1:ox2].mean()))
    if not gaps:
        raise ValueError("the coverage gap needs scenes with a face box and a non-face box")
    return 100.0 * sum(gaps) / len(gaps)


AGREEMENT = Evaluator("mask IoU vs float", _agreement, unit="%", wants_float=True,
                      label_format="() or 8 ints (the float model's mask is the reference)", check_label=_check)
COVERAGE_GAP = Evaluator("face coverage gap", _coverage_gap, unit="%",
                         label_format="() for a photo, or a scene's face box and non-face box (8 ints)",
                         check_label=_check)


def spec(selfie: Selfie) -> ModelSpec:
    from zoo.datasets import lfw_subset as lfw

    faces = {part: n // 2 for part, n in lfw.snapshot()["split"].items()}
    h, w = selfie.height, selfie.width

    def data(part: str) -> str:
        return (f"{scenes.identity(part, w, SIZES[part], _scene_height(selfie))};[0,1];"
                f"{images.identity(images.PHOTOS)};mirrored:{part == 'calibration'}")

    photos = images.photos_text(mirrored=False)
    count = {part: faces[part] * len(SIZES[part]) for part in SIZES}
    held_out = (f"{count['held_out']} scenes of the {faces['held_out']} held-out lfw_subset faces at {SIZES['held_out']} px "
                f"on {w}×{h} backgrounds, each beside a non-face crop, and {photos}")
    return ModelSpec(
        name=selfie.name,
        version=VERSION,
        description=(f"MediaPipe's selfie segmentation ({selfie.title}, {h}×{w}×3 NHWC), real weights; output: the "
                     f"person probability mask (1, {h}, {w}, 1), thresholded at {THRESHOLD}. Input: {PREPROCESSING}."),
        task="semantic-segmentation",
        axes="nhwc",  # zoo.read_tflite's module takes the file's NHWC image
        inputs=(InputSpec("image", (1, h, w, 3), "float32", range=(0.0, 1.0)),),
        outputs=("mask",),
        build=lambda variant: build(selfie, variant),
        example_inputs=lambda: (_items(selfie, "calibration")[0][0],),
        calibration=Dataset(count["calibration"] + len(images.PHOTOS),
                            f"{count['calibration']} scenes of the calibration lfw_subset faces at {SIZES['calibration']} "
                            f"px and the mirrored {photos}",
                            lambda: [(image,) for image, _ in _items(selfie, "calibration")], lambda: data("calibration")),
        evaluation=Dataset(count["held_out"] + len(images.PHOTOS), held_out,
                           lambda: [((image,), label) for image, label in _items(selfie, "held_out")],
                           lambda: data("held_out")),
        weights=(WeightsVariant(
            name="mediapipe",
            description=f"MediaPipe {files.VERSION}'s {selfie.file}.tflite, read by zoo.read_tflite, checked by sha256",
            origin=f"${files.ENV}/{selfie.file}.tflite from {files.ORIGIN}",
            licence=files.LICENCE,
            identity=lambda: files.identity(selfie.file),
        ),),
        metrics=(
            Metric("mask-agreement", AGREEMENT, higher_is_better=True, max_drop=15.0,
                   description=(f"agreement, not accuracy: IoU of the program's mask (≥ {THRESHOLD}) with the float "
                                f"model's, pooled over the {held_out}; float is 100 by construction")),
            Metric("face-coverage-gap", COVERAGE_GAP, higher_is_better=True, max_drop=15.0,
                   description=(f"on the {count['held_out']} scenes: the share of the face's box the mask covers minus "
                                "the share of the non-face crop's box, averaged, in percentage points")),
        ),
        labels=("background", "person"),
        default_weights="mediapipe",
    )
