"""A tiny keyword spotter over 8-bit MFCC-like features, as a third party's plugin would
declare it: per-coefficient normalisation (``normalise_axis=3``) and named outputs. It
proves that ``--io pixels`` takes features, not only images."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tests.rgb_plugin import two_conv_classifier
from zoo import Dataset, InputSpec, ModelSpec, WeightsVariant, hookimpl

SHAPE = (1, 1, 16, 8)
"""(batch, channel, frames, coefficients)."""
MEAN = (0.62, 0.41, 0.55, 0.48, 0.52, 0.45, 0.5, 0.47)
STD = (0.21, 0.04, 0.09, 0.12, 0.06, 0.15, 0.08, 0.1)
"""Per coefficient, in [0, 1] units, some much narrower than others, as MFCCs are."""
SAMPLES = 24


def _build(variant: str) -> Any:
    return two_conv_classifier(1, 4, seed=11)


def _features() -> list[tuple[Any, ...]]:
    """Seeded 8-bit feature maps around each coefficient's mean, normalised as the model expects."""
    import torch

    g = torch.Generator().manual_seed(5)
    mean = torch.tensor(MEAN).reshape(1, 1, 1, -1)
    std = torch.tensor(STD).reshape(1, 1, 1, -1)
    out = []
    for _ in range(SAMPLES):
        raw = (mean + std * torch.randn(SHAPE, generator=g)).clamp(0, 1)
        codes = torch.round(raw * 255)
        out.append((((codes / 255) - mean) / std,))
    return out


@hookimpl
def register_models(register: Callable[[ModelSpec], None]) -> None:
    features = Dataset(size=SAMPLES, description=f"{SAMPLES} seeded 8-bit feature maps", load=_features,
                       identity=lambda: "features-tiny-v1")
    register(ModelSpec(
        name="features-tiny",
        version="1",
        description="tests: a two-conv classifier of 8-bit MFCC-like features",
        task="keyword-spotting",
        inputs=(InputSpec("mfcc", SHAPE, "float32", mean=MEAN, std=STD, normalise_axis=3),),
        outputs=("scores",),
        build=_build,
        example_inputs=lambda: _features()[0],
        calibration=features,
        weights=(WeightsVariant("seeded", "torch.manual_seed(11)", "tests", "MIT", identity=lambda: "seed-11"),),
    ))
