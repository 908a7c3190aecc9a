"""``yolo-tiny-mcu``: a YOLOv3-tiny-shaped detector of microcontroller size, defined here and
trained here to find handwritten digits on photos (:mod:`zoo_vision.digit_canvas`); its grid
decoding and NMS run on the CPU in :mod:`zoo_vision.boxes`."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import zoo
from zoo import (
    InputSpec,
    Metric,
    ModelSpec,
)
from zoo_vision import boxes, digit_canvas, digit_spec

NAME = "yolo-tiny-mcu"
VERSION = "2"
SIDE = digit_canvas.SIDE
CLASSES = ("digit",)
"""One class: the detector finds digits, the segmenter (seg-tiny-mcu) tells them apart."""
RANDOM_SEED = 0
KEEP = 10
ANCHORS_16 = ((9.0, 15.0), (13.0, 17.0), (15.0, 21.0))
ANCHORS_32 = ((17.0, 23.0), (21.0, 25.0), (25.0, 29.0))
"""The medians of the training boxes' sizes in six bins of area, three per head."""
HEADS = ((ANCHORS_32, 32), (ANCHORS_16, 16))
PER = 5 + len(CLASSES)
WEIGHTS_FILE = Path(__file__).parent / "weights" / "yolo_tiny_mcu_digits.safetensors"
WEIGHTS_SHA256 = "8ef159fa6df8d022671f51968a42a03aad0a7d4113f00355cc427111d97a7b07"
"""The sha256 of the file scripts/train_digit_detector.py writes (a test checks the shipped file against it)."""
REFERENCE_MAP50 = 50.95
"""scripts/train_digit_detector.py's float mAP@0.5 on the test canvases, in percent."""
MAX_DROP = 5.0
"""The int8 program's allowed mAP@0.5 loss, in points."""
REMEDY = "reinstall zoo-vision, or retrain with python plugins/zoo-vision/scripts/train_digit_detector.py"

DESCRIPTION = (
    f"A single-stage YOLOv3-tiny-shaped detector at {SIDE}×{SIDE}×3: five 3×3 convolutions (16 to 256 channels, "
    "BatchNorm, LeakyReLU 0.1), each of the first four followed by a 2×2 max pool; a head on the 3×3 grid "
    "(stride 32) and one on the 6×6 grid (stride 16) fed by the coarse features upsampled ×2 (nearest) and "
    f"concatenated with the stride-16 features; 3 anchors and {len(CLASSES)} classes per head. Two outputs: "
    f"(1, {3 * PER}, {SIDE // 32}, {SIDE // 32}) and (1, {3 * PER}, {SIDE // 16}, {SIDE // 16}). Input: RGB in [0, 1]. "
    "Trained here to find handwritten digits (one class) on photos and textures."
)


@cache
def network_class() -> type[Any]:
    import torch
    from torch import nn

    def conv(cin: int, cout: int, kernel: int = 3) -> nn.Sequential:
        return nn.Sequential(nn.Conv2d(cin, cout, kernel, 1, kernel // 2, bias=False), nn.BatchNorm2d(cout),
                             nn.LeakyReLU(0.1))

    class YoloTiny(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            pool = nn.MaxPool2d(2, 2)
            self.stride16 = nn.Sequential(conv(3, 16), pool, conv(16, 32), nn.MaxPool2d(2, 2), conv(32, 64),
                                          nn.MaxPool2d(2, 2), conv(64, 128), nn.MaxPool2d(2, 2))
            self.stride32 = nn.Sequential(conv(128, 256), nn.MaxPool2d(2, 2), conv(256, 128, 1))
            self.head32 = nn.Sequential(conv(128, 256), nn.Conv2d(256, 3 * PER, 1))
            self.lateral = conv(128, 64, 1)
            self.up = nn.Upsample(scale_factor=2, mode="nearest")
            self.head16 = nn.Sequential(conv(64 + 128, 128), nn.Conv2d(128, 3 * PER, 1))

        def forward(self, x: Any) -> tuple[Any, Any]:
            fine = self.stride16(x)
            coarse = self.stride32(fine)
            return self.head32(coarse), self.head16(torch.cat([self.up(self.lateral(coarse)), fine], dim=1))

    return YoloTiny


def new_network(seed: int = RANDOM_SEED) -> Any:
    """A freshly initialised network; the global torch RNG is left untouched."""
    return zoo.seeded_network(network_class(), seed)


def _build(variant: str) -> Any:
    return digit_spec.build(new_network, variant, owner=NAME, file=WEIGHTS_FILE, remedy=REMEDY)


def _evaluation() -> list[tuple[tuple[Any, ...], list[tuple[float, ...]]]]:
    test = digit_canvas.canvases("test")
    return [((image[None].contiguous(),), [(*box[:4], 0) for box in found])
            for image, found in zip(digit_canvas.as_floats(test.images), test.boxes, strict=True)]


def decode(sample_outputs: Any) -> list[boxes.Detection]:
    """One sample's two grids as its ten best detections."""
    coarse, fine = (o.detach().numpy() if hasattr(o, "detach") else o for o in sample_outputs[:2])
    return boxes.decode_yolo([(coarse, ANCHORS_32, 32), (fine, ANCHORS_16, 16)], keep=KEEP)


def spec() -> ModelSpec:
    tests = digit_canvas.SIZES["test"]
    return ModelSpec(
        name=NAME,
        version=VERSION,
        description=DESCRIPTION,
        task="object-detection",
        inputs=(InputSpec("image", (1, 3, SIDE, SIDE), "float32", range=(0.0, 1.0)),),
        build=_build,
        example_inputs=lambda: digit_spec.calibration_samples()[0],
        calibration=digit_spec.calibration(digit_spec.calibration_samples),
        training=digit_spec.training("train"),
        evaluation=digit_spec.evaluation(_evaluation, "boxes"),
        weights=digit_spec.weights(owner=NAME, script="train_digit_detector.py", file=WEIGHTS_FILE, remedy=REMEDY,
                                   reference={"map50": REFERENCE_MAP50}, seed=RANDOM_SEED),
        metrics=(Metric(
            "map50", zoo.map_at(decode, 0.5), higher_is_better=True, max_drop=MAX_DROP,
            description=f"mAP at IoU 0.5 of the {KEEP} best boxes per canvas against the {tests} test canvases' boxes",
        ),),
        default_weights="digits",
        labels=CLASSES,
        layouts=("nchw", "nhwc"),
    )
