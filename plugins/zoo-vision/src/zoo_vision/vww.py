"""``vww-mobilenetv1-025``: MLPerf Tiny's visual wake words network, trained on lfw_subset's crops."""

from __future__ import annotations

from dataclasses import replace
from functools import cache
from pathlib import Path
from typing import Any

from zoo import Dataset, InputSpec, Metric, ModelSpec, ShippedClassifier, one_input_samples, top1
from zoo.datasets import lfw_subset as lfw

NAME = "vww-mobilenetv1-025"
VERSION = "1"
WEIGHTS_FILE = Path(__file__).parent / "weights" / "vww_mobilenetv1_025.safetensors"
RANDOM_SEED = 0
WIDTH = 0.25
# MobileNetV1's depthwise-separable blocks as (output channels at width 1.0, stride).
BLOCKS = ((64, 1), (128, 2), (128, 1), (256, 2), (256, 1), (512, 2), (512, 1), (512, 1), (512, 1), (512, 1),
          (512, 1), (1024, 2), (1024, 1))
REFERENCE_TOP1 = 100.0
"""scripts/train_vww.py's float top-1 on the 40 held-out crops, in percent."""

DESCRIPTION = (
    f"MobileNetV1 at width {WIDTH} (MLPerf Tiny's visual wake words network: a 3×3 stride-2 convolution to 8 "
    "channels, 13 depthwise-separable blocks to 256 channels, each convolution with BatchNorm and ReLU, average "
    f"pool, a linear layer to 2 classes) at {lfw.SIDE}×{lfw.SIDE}×3. It tells whether a face is present. "
    f"Input: {lfw.PREPROCESSING}."
)


def channels(n: int) -> int:
    return max(8, int(n * WIDTH))


@cache
def network_class() -> type[Any]:
    """The nn.Module class, defined on first use so that registration stays torch-free."""
    from torch import nn

    def conv(cin: int, cout: int, stride: int, groups: int = 1, kernel: int = 3) -> list[nn.Module]:
        return [nn.Conv2d(cin, cout, kernel, stride, kernel // 2, groups=groups, bias=False),
                nn.BatchNorm2d(cout), nn.ReLU()]

    class MobileNetV1(nn.Module):
        def __init__(self, classes: int = len(lfw.CLASSES)) -> None:
            super().__init__()
            layers = conv(3, channels(32), 2)
            cin = channels(32)
            for width, stride in BLOCKS:
                cout = channels(width)
                layers += conv(cin, cin, stride, groups=cin) + conv(cin, cout, 1, kernel=1)
                cin = cout
            self.features = nn.Sequential(*layers)
            self.pool = nn.AdaptiveAvgPool2d(1)
            self.classifier = nn.Linear(cin, classes)

        def forward(self, x: Any) -> Any:
            return self.classifier(self.pool(self.features(x)).flatten(1))

    return MobileNetV1


CLASSIFIER = ShippedClassifier(NAME, lambda: network_class()(), lfw.load, WEIGHTS_FILE, "lfw",
                               remedy="the shipped weights are gone; reinstall zoo-vision", seed=RANDOM_SEED)


def new_network(seed: int = RANDOM_SEED) -> Any:
    """A freshly initialised network; the global torch RNG is left untouched."""
    return CLASSIFIER.new_network(seed)


def training() -> Dataset:
    """The crops the weights were trained on, for ``--qat`` and the weight recipes' fine-tuning (labels unused)."""
    size = lfw.snapshot()["split"]["train"]
    return Dataset(size=size, description=f"the {size} lfw_subset crops the weights were trained on (labels unused)",
                   load=lambda: one_input_samples(lfw.load("train")[0]), identity=lambda: lfw.identity("train"))


def spec() -> ModelSpec:
    split = lfw.snapshot()["split"]
    return replace(CLASSIFIER.spec(
        version=VERSION,
        description=DESCRIPTION,
        task="visual-wake-words",
        inputs=(InputSpec("image", (1, 3, lfw.SIDE, lfw.SIDE), "float32", range=(-1.0, 1.0)),),
        labels=lfw.CLASSES,
        data_identity=lfw.identity,
        sizes=split,
        calibration=f"{split['calibration']} lfw_subset training crops, half faces",
        evaluation=f"{split['held_out']} held-out lfw_subset crops, half faces ({lfw.SPLIT_RULE})",
        samples="crops",
        trained=CLASSIFIER.trained_variant(
            description=(
                f"trained by plugins/zoo-vision/scripts/train_vww.py on {split['train']} lfw_subset crops "
                "and their mirror images"
            ),
            origin="zoo_vision/weights/vww_mobilenetv1_025.safetensors (shipped with zoo-vision)",
            licence=f"Apache-2.0; training data: {lfw.ORIGIN}",
            reference={"top1": REFERENCE_TOP1},
        ),
        metrics=(Metric(
            "top1", top1, higher_is_better=True, max_drop=5.0,
            description=f"top-1 on the {split['held_out']} held-out lfw_subset crops (one crop is 2.5 points)",
        ),),
        # Channels-last too: a camera's HWC frames, and no input transposes on the NPU (73,978 cycles
        # on u85-256, 20,736 on u55-128 with --io int8; docs/measured.md).
        layouts=("nchw", "nhwc"),
    ), training=training())
