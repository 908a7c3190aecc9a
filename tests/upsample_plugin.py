"""A tiny RGB network with a ×2 bilinear upsampling between two convolutions, as MediaPipe's
selfie segmentation and pose landmarks upsample: it shows in seconds that zoo lowers it whole
on a U55 (compile/bilinear_x2.py), where the upsampling alone would be left on the CPU."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from tests import rgb_plugin
from zoo import ModelSpec, hookimpl


def upsampling_network(variant: str) -> Any:
    """A convolution, bilinear ×2 with half-pixel centres (TFLite's ``half_pixel_centers``), a convolution; seeded."""
    import torch
    from torch.nn import functional as F

    class Upsampling(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.down = torch.nn.Conv2d(3, 8, 3, stride=2, padding=1)
            self.head = torch.nn.Conv2d(8, 4, 3, padding=1)

        def forward(self, x: Any) -> Any:
            x = torch.relu(self.down(x))
            return self.head(F.interpolate(x, scale_factor=2, mode="bilinear", align_corners=False))

    torch.manual_seed(7)
    return Upsampling().eval()


@hookimpl
def register_models(register: Callable[[ModelSpec], None]) -> None:
    register(dataclasses.replace(
        rgb_plugin.spec(), name="upsample-tiny", task="custom",
        description="tests: a convolution, a bilinear ×2 upsampling and a convolution",
        build=upsampling_network, training=None, recipes={},
    ))
