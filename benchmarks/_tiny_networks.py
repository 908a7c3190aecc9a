"""The tiny networks ``benchmarks/tiny_networks.py`` builds (a zoo plugin, loaded with ``ZOO_PLUGINS``).

- ``tiny-regnet-g24``, ``tiny-regnet-g32``, ``tiny-regnet-tflite-form``: RegNetX-1.6GF's first block
  in small (docs/measured.md, "Ratios above 1.00"): a 3×3 stride-2 stem to 32 channels, a 1×1
  convolution to 3 groups of 24 (or 32), the grouped 3×3 convolution (stride 1, 112×112), a 1×1;
  224×224 input.
  The TFLite form writes each group as a convolution over all 72 channels, zero outside its group,
  as onnx2tf's program of a grouped convolution reads it.
- ``tiny-convt``: a 2×2 stride-2 transposed convolution from 56×56×24 to 112×112×24, then a ReLU
  (docs/upstream.md, the rescale Vela 5.1.0 leaves after a TOSA TRANSPOSE_CONV2D).

Seeded random weights and inputs; both layouts, so ``--io int8 --layout nhwc`` has no transposes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from zoo import Dataset, InputSpec, ModelSpec, WeightsVariant, hookimpl

SAMPLES = 8
REGNET = {"tiny-regnet-g24": (24, False), "tiny-regnet-g32": (32, False), "tiny-regnet-tflite-form": (24, True)}
"""name: (channels a group, each group written as a convolution over all channels)."""
GROUPS = 3
STEM = 32


def regnet_block(group_width: int, tflite_form: bool) -> Any:
    import torch
    from torch import nn

    width = GROUPS * group_width

    class FullWidthGroups(nn.Module):
        """The grouped 3×3 convolution as ``GROUPS`` convolutions over every input channel,
        each zero outside its own group, concatenated: the same function, ``GROUPS``× the MACs."""

        def __init__(self, grouped: nn.Conv2d) -> None:
            super().__init__()
            self.parts = nn.ModuleList()
            for g in range(GROUPS):
                part = nn.Conv2d(width, group_width, 3, stride=1, padding=1)
                with torch.no_grad():
                    part.weight.zero_()
                    rows = slice(g * group_width, (g + 1) * group_width)
                    part.weight[:, rows] = grouped.weight[rows]
                    assert grouped.bias is not None and part.bias is not None
                    part.bias.copy_(grouped.bias[rows])
                self.parts.append(part)

        def forward(self, x: Any) -> Any:
            return torch.cat([p(x) for p in self.parts], dim=1)

    torch.manual_seed(11)
    grouped = nn.Conv2d(width, width, 3, stride=1, padding=1, groups=GROUPS)
    middle: nn.Module = FullWidthGroups(grouped) if tflite_form else grouped
    return nn.Sequential(
        nn.Conv2d(3, STEM, 3, stride=2, padding=1), nn.ReLU(),
        nn.Conv2d(STEM, width, 1), nn.ReLU(),
        middle, nn.ReLU(),
        nn.Conv2d(width, width, 1), nn.ReLU(),
    ).eval()


def transposed_convolution() -> Any:
    import torch
    from torch import nn

    torch.manual_seed(13)
    return nn.Sequential(nn.ConvTranspose2d(24, 24, 2, stride=2), nn.ReLU()).eval()


def _samples(shape: tuple[int, ...], seed: int) -> list[tuple[Any, ...]]:
    import torch

    g = torch.Generator().manual_seed(seed)
    return [(torch.rand(shape, generator=g) * 4 - 2,) for _ in range(SAMPLES)]


def _spec(name: str, description: str, shape: tuple[int, ...], build: Callable[[str], Any]) -> ModelSpec:
    data = Dataset(size=SAMPLES, description=f"{SAMPLES} seeded uniform inputs in [-2, 2)",
                   load=lambda: _samples(shape, 5), identity=lambda: f"{name}-uniform-v1")
    return ModelSpec(
        name=name, version="1", description=f"benchmarks: {description}", task="benchmark",
        inputs=(InputSpec("x", shape, "float32", range=(-2.0, 2.0)),), build=build,
        example_inputs=lambda: _samples(shape, 5)[0], calibration=data,
        weights=(WeightsVariant("seeded", "torch.manual_seed", "benchmarks", "MIT", identity=lambda: "seeded-v1"),),
        layouts=("nchw", "nhwc"),
    )


def _regnet(width: int, full: bool) -> Callable[[str], Any]:
    return lambda variant: regnet_block(width, full)


def specs() -> list[ModelSpec]:
    out = [_spec(name, f"RegNet's first block, groups of {width}" + (" as full-width convolutions" if full else ""),
                 (1, 3, 224, 224), _regnet(width, full))
           for name, (width, full) in REGNET.items()]
    out.append(_spec("tiny-convt", "a 2×2 stride-2 transposed convolution 56×56×24 → 112×112×24, then a ReLU",
                     (1, 24, 56, 56), lambda variant: transposed_convolution()))
    return out


@hookimpl
def register_models(register: Callable[[ModelSpec], None]) -> None:
    for spec in specs():
        register(spec)
