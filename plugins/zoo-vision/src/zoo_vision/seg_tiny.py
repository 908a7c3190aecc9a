"""``seg-tiny-mcu``: a small encoder-decoder for per-pixel digit classes, written for an Ethos-U55
and trained here on digit canvases (:mod:`zoo_vision.digit_canvas`).

Only operators a U55 runs: 3×3 convolutions with BatchNorm and ReLU, ×2 nearest upsampling and
concatenation (U-Net's skips), a 1×1 classifier at stride 2 and a last ×2 nearest upsampling.
The width sits at strides 8 and 16 (48 and 128 channels), where telling digits apart needs it and
costs least; the decoder narrows to 24 and 16 channels at strides 4 and 2, where it is costly."""

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
from zoo_vision import digit_canvas, digit_spec

NAME = "seg-tiny-mcu"
VERSION = "2"
SIDE = digit_canvas.SIDE
LABELS = ("background", *(str(d) for d in range(10)))
RANDOM_SEED = 0
WIDTHS = (8, 16, 48, 128)
DECODER = (24, 16)
"""The fusions' widths at strides 4 and 2 (at stride 8 it is WIDTHS[2])."""
WEIGHTS_FILE = Path(__file__).parent / "weights" / "seg_tiny_mcu_digits.safetensors"
WEIGHTS_SHA256 = "67f812e500315534962a2c1dd125ba73729e448e3645ba74c63b0e0efa0fd3de"
"""The sha256 of the file scripts/train_digit_segmenter.py writes (a test checks the shipped file against it)."""
REFERENCE_MIOU = 29.01
"""scripts/train_digit_segmenter.py's float mIoU on the test canvases, in percent."""
MAX_DROP = 5.0
REMEDY = "reinstall zoo-vision, or retrain with python plugins/zoo-vision/scripts/train_digit_segmenter.py"

DESCRIPTION = (
    f"A U-Net-shaped segmenter written for an Ethos-U55, at {SIDE}×{SIDE}×3: four stride-2 3×3 convolutions "
    f"({', '.join(map(str, WIDTHS))} channels), one more 3×3 at stride 8 and two at stride 16, then three times ×2 "
    "nearest upsampling concatenated with the encoder's features and a 3×3 convolution "
    f"({WIDTHS[2]}, {', '.join(map(str, DECODER))} channels), a 1×1 classifier at "
    f"stride 2 and a last ×2 nearest upsampling: (1, {len(LABELS)}, {SIDE}, {SIDE}) logits, background and the ten "
    "digits. BatchNorm and ReLU after each 3×3. Input: RGB in [0, 1]. Trained here on handwritten digits on "
    "photos and textures."
)


@cache
def network_class() -> type[Any]:
    import torch
    from torch import nn

    def conv(cin: int, cout: int, stride: int = 1) -> nn.Sequential:
        return nn.Sequential(nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU())

    class SegTiny(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            a, b, c, d = WIDTHS
            self.down2, self.down4 = conv(3, a, 2), conv(a, b, 2)
            self.down8 = nn.Sequential(conv(b, c, 2), conv(c, c))
            self.down16 = nn.Sequential(conv(c, d, 2), conv(d, d), conv(d, d))
            self.up = nn.Upsample(scale_factor=2, mode="nearest")
            e, f = DECODER
            self.fuse8, self.fuse4, self.fuse2 = conv(d + c, c), conv(c + b, e), conv(e + a, f)
            self.classifier = nn.Conv2d(f, len(LABELS), 1)

        def forward(self, x: Any) -> Any:
            s2 = self.down2(x)
            s4 = self.down4(s2)
            s8 = self.down8(s4)
            y = self.fuse8(torch.cat([self.up(self.down16(s8)), s8], dim=1))
            y = self.fuse4(torch.cat([self.up(y), s4], dim=1))
            y = self.fuse2(torch.cat([self.up(y), s2], dim=1))
            return self.up(self.classifier(y))

    return SegTiny


def new_network(seed: int = RANDOM_SEED) -> Any:
    """A freshly initialised network; the global torch RNG is left untouched."""
    return zoo.seeded_network(network_class(), seed)


def _build(variant: str) -> Any:
    return digit_spec.build(new_network, variant, owner=NAME, file=WEIGHTS_FILE, remedy=REMEDY)


def _evaluation() -> list[tuple[tuple[Any, ...], Any]]:
    test = digit_canvas.canvases("test")
    return [((image[None].contiguous(),), mask.astype("int64"))
            for image, mask in zip(digit_canvas.as_floats(test.images), test.masks, strict=True)]


def spec() -> ModelSpec:
    tests = digit_canvas.SIZES["test"]
    return ModelSpec(
        name=NAME,
        version=VERSION,
        description=DESCRIPTION,
        task="semantic-segmentation",
        inputs=(InputSpec("image", (1, 3, SIDE, SIDE), "float32", range=(0.0, 1.0)),),
        build=_build,
        example_inputs=lambda: digit_spec.calibration_samples()[0],
        calibration=digit_spec.calibration(digit_spec.calibration_samples),
        training=digit_spec.training("segment"),
        evaluation=digit_spec.evaluation(_evaluation, "masks"),
        weights=digit_spec.weights(owner=NAME, script="train_digit_segmenter.py", file=WEIGHTS_FILE, remedy=REMEDY,
                                   reference={"miou": REFERENCE_MIOU}, seed=RANDOM_SEED, split="segment"),
        metrics=(Metric(
            "miou", zoo.miou(len(LABELS), ignore_index=None), higher_is_better=True, max_drop=MAX_DROP,
            description=f"mIoU of the per-pixel argmax over background and the ten digits on the {tests} test canvases",
        ),),
        default_weights="digits",
        labels=LABELS,
        num_labels=len(LABELS),
        layouts=("nchw", "nhwc"),
    )
