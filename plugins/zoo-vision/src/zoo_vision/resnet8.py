"""``resnet8-cifar``: MLPerf Tiny's CIFAR-10 ResNet-8, random weights, calibrated on real pixels."""

from __future__ import annotations

from functools import cache
from typing import Any

from zoo import BuildError, Dataset, InputSpec, ModelSpec, WeightsVariant, reestimate_batchnorm
from zoo_vision import photos

NAME = "resnet8-cifar"
VERSION = "1"
SIDE = 32
RANDOM_SEED = 0
CALIBRATION = 64
MEAN = (0.4914, 0.4822, 0.4465)
STD = (0.2470, 0.2435, 0.2616)
"""CIFAR-10's per-channel statistics, as CIFAR-10 classifiers are fed."""
CIFAR10 = ("airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck")

DESCRIPTION = (
    "MLPerf Tiny's image classification network: ResNet-8 for CIFAR-10 (a 3×3 convolution to 16 channels, three "
    "residual stacks of two 3×3 convolutions at 16, 32 and 64 channels, the last two at stride 2 with a 1×1 "
    "projection shortcut, each convolution with BatchNorm, ReLU after each addition, average pool, a linear "
    f"layer to 10 classes) at {SIDE}×{SIDE}×3. Input: RGB in [0, 1] standardised with CIFAR-10's mean and std."
)


@cache
def network_class() -> type[Any]:
    import torch
    from torch import nn

    def conv_bn(cin: int, cout: int, stride: int, kernel: int = 3) -> nn.Sequential:
        return nn.Sequential(nn.Conv2d(cin, cout, kernel, stride, kernel // 2, bias=False), nn.BatchNorm2d(cout))

    class Stack(nn.Module):
        def __init__(self, cin: int, cout: int, stride: int) -> None:
            super().__init__()
            self.first = conv_bn(cin, cout, stride)
            self.second = conv_bn(cout, cout, 1)
            self.shortcut = conv_bn(cin, cout, stride, kernel=1) if stride != 1 or cin != cout else nn.Identity()

        def forward(self, x: Any) -> Any:
            y = self.second(torch.relu(self.first(x)))
            return torch.relu(y + self.shortcut(x))

    class ResNet8(nn.Module):
        def __init__(self, classes: int = len(CIFAR10)) -> None:
            super().__init__()
            self.stem = nn.Sequential(conv_bn(3, 16, 1), nn.ReLU())
            self.stacks = nn.Sequential(Stack(16, 16, 1), Stack(16, 32, 2), Stack(32, 64, 2))
            self.pool = nn.AdaptiveAvgPool2d(1)
            self.classifier = nn.Linear(64, classes)

        def forward(self, x: Any) -> Any:
            return self.classifier(self.pool(self.stacks(self.stem(x))).flatten(1))

    return ResNet8


def _build(variant: str) -> Any:
    import torch

    if variant != "random":
        raise BuildError(f"{NAME} has no weights variant {variant!r}; choose random")
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(RANDOM_SEED)
        model = network_class()()
    reestimate_batchnorm(model, _calibration())
    return model.eval()


def _calibration() -> list[tuple[Any, ...]]:
    import torch

    mean, std = torch.tensor(MEAN)[:, None, None], torch.tensor(STD)[:, None, None]
    return [(((tile - mean) / std)[None].contiguous(),) for tile in photos.tiles(SIDE, CALIBRATION)]


def spec() -> ModelSpec:
    return ModelSpec(
        name=NAME,
        version=VERSION,
        description=DESCRIPTION,
        task="image-classification",
        inputs=(InputSpec("image", (1, 3, SIDE, SIDE), "float32", mean=MEAN, std=STD),),
        build=_build,
        example_inputs=lambda: _calibration()[0],
        calibration=Dataset(
            size=CALIBRATION,
            description=(f"{CALIBRATION} {SIDE}×{SIDE} tiles of scikit-learn's two sample photos, spread evenly over "
                         "their non-overlapping tiles; no labels, so the elementwise checks alone judge it"),
            load=_calibration,
            identity=lambda: f"{photos.identity()};tiles:{SIDE}:{CALIBRATION};cifar-norm",
        ),
        weights=(WeightsVariant(
            name="random",
            description=(f"untrained: PyTorch's default init after torch.manual_seed({RANDOM_SEED}), then every "
                         "BatchNorm's statistics re-estimated on the calibration tiles"),
            origin="generated",
            licence="n/a",
            identity=lambda: f"seed:{RANDOM_SEED};bn-reestimated-on:{photos.identity()};tiles:{SIDE}:{CALIBRATION}",
        ),),
        labels=CIFAR10,
        # Channels-last too: a camera's HWC frames, and no input transposes on the NPU (2,304 cycles
        # on u55-128, 8,599 on u85-256 with --io int8; docs/measured.md).
        layouts=("nchw", "nhwc"),
    )
