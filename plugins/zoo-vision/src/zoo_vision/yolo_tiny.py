"""``yolo-tiny-mcu``: a YOLOv3-tiny-shaped detector of microcontroller size, defined here;
its grid decoding and NMS run on the CPU in :mod:`zoo_vision.boxes`."""

from __future__ import annotations

from functools import cache
from typing import Any

from zoo import (
    BuildError,
    Dataset,
    InputSpec,
    Metric,
    ModelSpec,
    WeightsVariant,
    recall_vs_float,
    reestimate_batchnorm,
)
from zoo_vision import boxes, photos

NAME = "yolo-tiny-mcu"
VERSION = "1"
SIDE = 192
CLASSES = ("person", "car", "bicycle")
RANDOM_SEED = 0
KEEP = 10
ANCHORS_16 = ((5.0, 6.0), (11.0, 12.0), (17.0, 27.0))
ANCHORS_32 = ((37.0, 38.0), (62.0, 78.0), (159.0, 147.0))
"""YOLOv3-tiny's anchors scaled from 416 to 192 pixels: three per head."""
PER = 5 + len(CLASSES)

DESCRIPTION = (
    f"A single-stage YOLOv3-tiny-shaped detector at {SIDE}×{SIDE}×3: five 3×3 convolutions (16 to 256 channels, "
    "BatchNorm, LeakyReLU 0.1), each of the first four followed by a 2×2 max pool; a head on the 6×6 grid "
    "(stride 32) and one on the 12×12 grid (stride 16) fed by the coarse features upsampled ×2 (nearest) and "
    f"concatenated with the stride-16 features; 3 anchors and {len(CLASSES)} classes per head. Two outputs: "
    f"(1, {3 * PER}, 6, 6) and (1, {3 * PER}, 12, 12). Input: RGB in [0, 1]."
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


def _build(variant: str) -> Any:
    import torch

    if variant != "random":
        raise BuildError(f"{NAME} has no weights variant {variant!r}; choose random")
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(RANDOM_SEED)
        model = network_class()()
    reestimate_batchnorm(model, _images())
    return model.eval()


def _images() -> list[tuple[Any, ...]]:
    return [(image[None].contiguous(),) for image in photos.views(SIDE, SIDE)]


def decode(sample_outputs: Any) -> list[boxes.Detection]:
    """One sample's two grids as its ten best detections."""
    coarse, fine = (o.detach().numpy() if hasattr(o, "detach") else o for o in sample_outputs[:2])
    return boxes.decode_yolo([(coarse, ANCHORS_32, 32), (fine, ANCHORS_16, 16)], keep=KEEP)


def spec() -> ModelSpec:
    data = f"{photos.identity()};views:{SIDE}x{SIDE};[0,1]"
    return ModelSpec(
        name=NAME,
        version=VERSION,
        description=DESCRIPTION,
        task="object-detection",
        inputs=(InputSpec("image", (1, 3, SIDE, SIDE), "float32", range=(0.0, 1.0)),),
        build=_build,
        example_inputs=lambda: _images()[0],
        calibration=Dataset(12, f"scikit-learn's two sample photos: {photos.VIEWS}", _images, lambda: data),
        evaluation=Dataset(12, f"the calibration images; the float model's {KEEP} best boxes on each are the truth",
                           lambda: [(s, None) for s in _images()], lambda: data),
        weights=(WeightsVariant(
            name="random",
            description=(f"untrained: PyTorch's default init after torch.manual_seed({RANDOM_SEED}), then every "
                         "BatchNorm's statistics re-estimated on the calibration images"),
            origin="generated",
            licence="n/a",
            identity=lambda: f"seed:{RANDOM_SEED};bn-reestimated-on:{data}",
        ),),
        metrics=(Metric(
            "recall50", recall_vs_float(NAME, decode), higher_is_better=True, max_drop=30.0,
            description=f"recall at IoU 0.5 of the float model's {KEEP} best boxes per image on the 12 images",
        ),),
        labels=CLASSES,
        layouts=("nchw", "nhwc"),
    )
