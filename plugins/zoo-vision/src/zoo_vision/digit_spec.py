"""What the two digit models share (``yolo-tiny-mcu`` and ``seg-tiny-mcu``): their build from a weights
variant, the canvases as their calibration and evaluation data, and their two weights variants, the shipped
training and a seeded init."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import zoo
from zoo import BuildError, Dataset, WeightsVariant, reestimate_batchnorm
from zoo_vision import digit_canvas

__all__ = ["build", "calibration", "calibration_samples", "evaluation", "training", "weights"]

_CALIBRATION = digit_canvas.identity("train") + f";first {digit_canvas.CALIBRATION}"


def build(network: Callable[[], Any], variant: str, *, owner: str, file: Path, remedy: str) -> Any:
    """``network()`` with the shipped weights (``digits``) or its BatchNorm re-estimated on the calibration canvases."""
    model = network()
    if variant == "digits":
        zoo.load_weights(model, file, owner=owner, remedy=remedy)
    elif variant == "random":
        reestimate_batchnorm(model, calibration_samples())
    else:
        raise BuildError(f"{owner} has no weights variant {variant!r}; choose digits or random")
    return model.eval()


def calibration_samples() -> list[tuple[Any, ...]]:
    images = digit_canvas.as_floats(digit_canvas.canvases("train").images[: digit_canvas.CALIBRATION])
    return [(image[None].contiguous(),) for image in images]


def calibration(load: Callable[[], list[Any]]) -> Dataset:
    return Dataset(digit_canvas.CALIBRATION,
                   f"the first {digit_canvas.CALIBRATION} training canvases (training digits on photos)",
                   load, lambda: _CALIBRATION)


def training(split: str) -> Dataset:
    """The canvases of ``split`` the shipped weights were trained on, for ``--qat`` and the weight
    recipes' fine-tuning (QAT matches the float model's outputs, so their boxes and masks are unused)."""
    size = digit_canvas.SIZES[split]

    def load() -> list[tuple[Any, ...]]:
        return [(image[None].contiguous(),) for image in digit_canvas.as_floats(digit_canvas.canvases(split).images)]

    return Dataset(size, f"the {size:,} {split} canvases the weights were trained on (their truth unused)",
                   load, lambda: digit_canvas.identity(split))


def evaluation(load: Callable[[], list[Any]], truth: str) -> Dataset:
    tests = digit_canvas.SIZES["test"]
    return Dataset(tests, f"{tests} test canvases: held-out MNIST digits on scikit-image's photos, exact {truth}",
                   load, lambda: digit_canvas.identity("test"))


def weights(*, owner: str, script: str, file: Path, remedy: str, reference: dict[str, float],
            seed: int, split: str = "train") -> tuple[WeightsVariant, WeightsVariant]:
    """``digits``, the file ``script`` trains on the canvases of ``split``, checked by its sha256;
    ``random``, PyTorch's init after ``seed``."""
    return (
        WeightsVariant(
            name="digits",
            description=(f"trained by plugins/zoo-vision/scripts/{script} on "
                         f"{digit_canvas.SIZES[split]:,} canvases of the 4,000 training MNIST digits on "
                         "scikit-image's photos and textures"),
            origin=f"plugins/zoo-vision/src/zoo_vision/weights/{file.name} (shipped)",
            licence=f"Apache-2.0; training data: {digit_canvas.ORIGIN}",
            identity=lambda: "sha256:" + zoo.file_sha256(file, owner=owner, remedy=remedy),
            reference=reference,
        ),
        WeightsVariant(
            name="random",
            description=(f"untrained: PyTorch's default init after torch.manual_seed({seed}), then every "
                         "BatchNorm's statistics re-estimated on the calibration canvases"),
            origin="generated",
            licence="n/a",
            identity=lambda: f"seed:{seed};bn-reestimated-on:{_CALIBRATION}",
        ),
    )
