"""A tiny RGB classifier whose head is ``x.mean([2, 3])``, as torchvision's MNASNet and
ShuffleNetV2 end, where tests/rgb_plugin.py's ends in MobileNetV2's adaptive average pool:
it shows in seconds that zoo lowers such a mean to an AVG_POOL2D (compile/spatial_mean.py)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from tests import rgb_plugin
from zoo import ModelSpec, hookimpl


def mean_head_classifier(variant: str) -> Any:
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
    register(dataclasses.replace(
        rgb_plugin.spec(), name="mean-tiny", description="tests: a two-conv RGB classifier ending in x.mean([2, 3])",
        build=mean_head_classifier, training=None, recipes={},
    ))
