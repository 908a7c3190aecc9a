"""A tiny RGB classifier, as a third party's plugin would declare it: three channels,
an ImageNet-style mean and std, and both layouts. It proves in seconds what
only mv2 could among the built-ins: NHWC input, and camera pixels normalised on the NPU."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from zoo import Dataset, Evaluator, InputSpec, Metric, ModelSpec, Recipe, WeightsVariant, hookimpl

SHAPE = (1, 3, 16, 16)
MEAN = (0.485, 0.456, 0.406)
STD = (0.229, 0.224, 0.225)
SAMPLES = 24


def two_conv_classifier(channels: int, classes: int, seed: int) -> Any:
    """Two convolutions, a global pool and a linear layer, seeded: the tests' tiny plugin networks."""
    import torch

    torch.manual_seed(seed)
    return torch.nn.Sequential(
        torch.nn.Conv2d(channels, 8, 3, padding=1), torch.nn.ReLU(),
        torch.nn.Conv2d(8, 16, 3, stride=2, padding=1), torch.nn.ReLU(),
        torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(16, classes),
    ).eval()


def _build(variant: str) -> Any:
    return two_conv_classifier(3, 5, seed=7)


def _images(seed: int = 3) -> list[tuple[Any, ...]]:
    """Seeded 8-bit images (smooth gradients plus noise), normalised as the model expects."""
    import torch

    g = torch.Generator().manual_seed(seed)
    mean = torch.tensor(MEAN).reshape(1, 3, 1, 1)
    std = torch.tensor(STD).reshape(1, 3, 1, 1)
    ramp = torch.linspace(0, 1, SHAPE[-1])
    out = []
    for _ in range(SAMPLES):
        base = torch.rand(1, 3, 1, 1, generator=g) * ramp.reshape(1, 1, 1, -1) + torch.rand(1, 3, 1, 1, generator=g) * ramp.reshape(1, 1, -1, 1)
        pixels = torch.round((base / 2 + 0.25 * torch.rand(SHAPE, generator=g)).clamp(0, 1) * 255)
        out.append((((pixels / 255) - mean) / std,))
    return out


def spec() -> ModelSpec:
    """rgb-tiny, which other test plugins vary (tests/mean_plugin.py)."""
    images = Dataset(size=SAMPLES, description=f"{SAMPLES} seeded 8-bit RGB images", load=_images,
                     identity=lambda: "rgb-tiny-images-v1")
    return ModelSpec(
        name="rgb-tiny",
        version="1",
        description="tests: a two-conv RGB classifier",
        task="image-classification",
        inputs=(InputSpec("image", SHAPE, "float32", range=(-2.2, 2.7), mean=MEAN, std=STD),),
        build=_build,
        example_inputs=lambda: _images()[0],
        calibration=images,
        training=Dataset(size=SAMPLES, description=f"{SAMPLES} other seeded images, for --qat",
                         load=lambda: _images(seed=4), identity=lambda: "rgb-tiny-images-v1 seed 4"),
        weights=(WeightsVariant("seeded", "torch.manual_seed(7)", "tests", "MIT", identity=lambda: "seed-7"),),
        layouts=("nchw", "nhwc"),
        recipes={"first-conv-16": Recipe("int8", {"0": "a16w8"}, description="the first convolution at 16 bits")},
    )


@hookimpl
def register_models(register: Callable[[ModelSpec], None]) -> None:
    register(spec())


def _agreement(outputs: Sequence[Sequence[Any]], labels: Sequence[Any], *, reference: Sequence[Sequence[Any]]) -> float:
    """Top-1 in percent against the float model's own class: an evaluator that needs float's outputs."""
    return 100.0 * sum(int(o[0].argmax()) == int(r[0].argmax()) for o, r in zip(outputs, reference, strict=True)) / len(outputs)


@hookimpl(specname="register_models")
def register_agreeing(register: Callable[[ModelSpec], None]) -> None:
    """rgb-tiny judged by a metric against its own float model, on held-out images without labels."""
    held_out = Dataset(size=SAMPLES, description=f"{SAMPLES} held-out seeded images, no labels",
                       load=lambda: [(s, None) for s in _images(seed=5)], identity=lambda: "rgb-tiny-images-v1 seed 5")
    register(ModelSpec(
        name="rgb-tiny-agree", version="1", description="tests: rgb-tiny, judged against its float model",
        task="image-classification",
        inputs=(InputSpec("image", SHAPE, "float32", range=(-2.2, 2.7), mean=MEAN, std=STD),),
        build=_build, example_inputs=lambda: _images()[0], calibration=Dataset(
            size=SAMPLES, description=f"{SAMPLES} seeded 8-bit RGB images", load=_images, identity=lambda: "rgb-tiny-images-v1"),
        evaluation=held_out,
        metrics=(Metric("agreement", Evaluator("top-1 vs float", _agreement, unit="%", wants_float=True,
                                               label_format="None", check_label=lambda label: None),
                        higher_is_better=True, max_drop=10.0),),
        weights=(WeightsVariant("seeded", "torch.manual_seed(7)", "tests", "MIT", identity=lambda: "seed-7"),),
    ))
