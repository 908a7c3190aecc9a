"""A tiny RGB classifier written as PaddleOCR's ONNX files write PP-LCNet: learned scalar
scales and shifts around the convolutions (their BatchNorms already folded, as in the
detector's and recogniser's files; the classifier's keep theirs), hard-swish as ``x * clip(x + 3, 0, 6) / 6``, a
squeeze-excitation whose hard-sigmoid is ``clip(0.2 x + 0.5, 0, 1)``, and a transposed
convolution whose bias is a separate add before its BatchNorm. It shows in seconds that zoo
lowers each activation to one TABLE and folds the steps into the convolutions
(compile/hard_activations.py, compile/conv_fold.py)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from tests import rgb_plugin
from zoo import ModelSpec, hookimpl


def paddle_like_classifier(variant: str) -> Any:
    import torch
    from torch import nn

    def hard_swish(y: Any) -> Any:
        return y * (y + 3).clamp(0, 6) / 6

    class PaddleTiny(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.stem = nn.Conv2d(3, 8, 3, stride=2, padding=1)
            self.pointwise = nn.Sequential(nn.Conv2d(8, 16, 1, bias=False), nn.BatchNorm2d(16))
            self.squeeze = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Conv2d(16, 4, 1), nn.ReLU(), nn.Conv2d(4, 16, 1))
            self.up = nn.ConvTranspose2d(16, 8, 2, stride=2, bias=False)
            self.register_buffer("up_bias", torch.linspace(-0.2, 0.3, 8).reshape(8, 1, 1))
            self.up_norm = nn.BatchNorm2d(8)
            self.skip = nn.Conv2d(3, 8, 1)
            self.classifier = nn.Linear(8, 5)

        def forward(self, x: Any) -> Any:
            y = hard_swish(self.stem(x) * 0.9432 + 0.5043)
            y = hard_swish(self.pointwise(y * 0.4763 - 0.0076))
            y = y * (self.squeeze(y) * 0.2 + 0.5).clamp(0, 1)
            y = torch.relu(self.up_norm(self.up(y) + self.up_bias)) + self.skip(x)
            return self.classifier(y.mean([2, 3]))

    torch.manual_seed(11)
    model = PaddleTiny().eval()
    with torch.no_grad():  # BatchNorm statistics that are not the identity, so folding them shows
        for norm in (model.pointwise[1], model.up_norm):
            norm.running_mean.uniform_(-0.3, 0.3)
            norm.running_var.uniform_(0.5, 2.0)
            norm.weight.uniform_(0.5, 1.5)
    return model


@hookimpl
def register_models(register: Callable[[ModelSpec], None]) -> None:
    register(dataclasses.replace(
        rgb_plugin.spec(), name="paddle-tiny",
        description="tests: an RGB classifier written as PaddleOCR's ONNX files write PP-LCNet",
        build=paddle_like_classifier, training=None, recipes={},
    ))
