"""A tiny RGB classifier with RegNet's grouped convolutions (groups of several channels, not
depthwise), one followed by a ReLU and one not: it shows in seconds that zoo clamps each group's
convolution, where Vela fuses the clamp, instead of the concat upstream joins them with
(compile/activations.py)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from tests import rgb_plugin
from zoo import ModelSpec, hookimpl

GROUPS = 2
"""The ReLU'd grouped convolution's groups; the other one has 4."""


def grouped_classifier(variant: str) -> Any:
    """A convolution, a grouped convolution → ReLU, a grouped 1×1 convolution, the pool and a linear layer."""
    import torch

    torch.manual_seed(7)
    return torch.nn.Sequential(
        torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.ReLU(),
        torch.nn.Conv2d(8, 16, 3, stride=2, padding=1, groups=GROUPS), torch.nn.ReLU(),
        torch.nn.Conv2d(16, 16, 1, groups=4),
        torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(16, 5),
    ).eval()


@hookimpl
def register_models(register: Callable[[ModelSpec], None]) -> None:
    register(dataclasses.replace(
        rgb_plugin.spec(), name="grouped-tiny", description="tests: an RGB classifier with grouped convolutions",
        build=grouped_classifier, training=None, recipes={},
    ))
