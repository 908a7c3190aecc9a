"""The pack's networks: 1-D convolutions written as Conv2d with (1, k) kernels over (N, C, 1, T),
the form the Ethos-U lowering takes whole, and a fully-connected autoencoder. Torch loads on first use."""

from __future__ import annotations

import itertools
from functools import cache
from typing import Any


@cache
def conv1d_classifier_class() -> type[Any]:
    from torch import nn

    class Conv1dClassifier(nn.Module):
        """Blocks of a (1, ``kernel``) convolution (stride (1, ``stride``), no bias), BatchNorm and
        ReLU, then the average over time, dropout (in training only) and a linear layer to ``classes``."""

        def __init__(self, channels: int, widths: tuple[int, ...], kernel: int, stride: int, classes: int,
                     dropout: float = 0.0) -> None:
            super().__init__()
            layers: list[nn.Module] = []
            for cin, cout in itertools.pairwise((channels, *widths)):
                layers += [nn.Conv2d(cin, cout, (1, kernel), stride=(1, stride), padding=(0, kernel // 2),
                                     bias=False), nn.BatchNorm2d(cout), nn.ReLU()]
            self.features = nn.Sequential(*layers)
            self.pool = nn.AdaptiveAvgPool2d(1)
            self.dropout = nn.Dropout(dropout)
            self.classifier = nn.Linear(widths[-1], classes)

        def forward(self, x: Any) -> Any:
            return self.classifier(self.dropout(self.pool(self.features(x)).flatten(1)))

    return Conv1dClassifier


@cache
def autoencoder_class() -> type[Any]:
    from torch import nn

    class Autoencoder(nn.Module):
        """Linear layers through ``widths`` and back to the input's size, each hidden one with
        BatchNorm and ReLU; the output is the reconstruction."""

        def __init__(self, features: int, widths: tuple[int, ...]) -> None:
            super().__init__()
            sizes = (features, *widths, *reversed(widths[:-1]))
            layers: list[nn.Module] = []
            for cin, cout in itertools.pairwise(sizes):
                layers += [nn.Linear(cin, cout), nn.BatchNorm1d(cout), nn.ReLU()]
            self.layers = nn.Sequential(*layers, nn.Linear(sizes[-1], features))

        def forward(self, x: Any) -> Any:
            return self.layers(x)

    return Autoencoder
