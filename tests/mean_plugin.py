"""A tiny RGB classifier whose head is ``x.mean([2, 3])``, as torchvision's MNASNet and
ShuffleNetV2 end, where tests/rgb_plugin.py's ends in MobileNetV2's adaptive average pool:
it shows in seconds that zoo lowers such a mean to an AVG_POOL2D (compile/spatial_mean.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tests.rgb_plugin import MEAN, SAMPLES, SHAPE, STD, _images
from zoo import Dataset, InputSpec, ModelSpec, WeightsVariant, hookimpl


def mean_head_classifier() -> Any:
    """Two convolutions, the spatial mean and a linear layer, seeded."""
    import torch

    class MeanHead(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.features = torch.nn.Sequential(
                torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.ReLU(),
                torch.nn.Conv2d(8, 16, 3, stride=2, padding=1), torch.nn.ReLU(),
            )
            self.classifier = torch.nn.Linear(16, 5)

        def forward(self, x: Any) -> Any:
            return self.classifier(self.features(x).mean([2, 3]))

    torch.manual_seed(7)
    return MeanHead().eval()


@hookimpl
def register_models(register: Callable[[ModelSpec], None]) -> None:
    register(ModelSpec(
        name="mean-tiny",
        version="1",
        description="tests: a two-conv RGB classifier ending in x.mean([2, 3])",
        task="image-classification",
        inputs=(InputSpec("image", SHAPE, "float32", range=(-2.2, 2.7), mean=MEAN, std=STD),),
        build=lambda variant: mean_head_classifier(),
        example_inputs=lambda: _images()[0],
        calibration=Dataset(size=SAMPLES, description=f"{SAMPLES} seeded 8-bit RGB images", load=_images,
                            identity=lambda: "rgb-tiny-images-v1"),
        weights=(WeightsVariant("seeded", "torch.manual_seed(7)", "tests", "MIT", identity=lambda: "seed-7"),),
        layouts=("nchw", "nhwc"),
    ))
