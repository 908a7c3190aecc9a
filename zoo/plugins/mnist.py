"""``mnist``: the seeds' two-convolution digit classifier, with weights trained here."""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

from zoo import BuildError, Dataset, InputSpec, ModelSpec, WeightsVariant, hookimpl
from zoo.plugins import _digits

VERSION = "1"
WEIGHTS_FILE = Path(__file__).parent / "weights" / "mnist.safetensors"
LABELS = tuple(str(d) for d in range(10))
RANDOM_SEED = 0

DESCRIPTION = (
    "The seeds' MNIST CNN (conv 16ch, max-pool, conv 32ch, max-pool, fc 1568→64, fc 64→10; "
    "105,866 parameters). The 'digits' weights were trained on scikit-learn's bundled 8×8 "
    "handwritten digits (1,797 samples) upsampled to 28×28, not on MNIST, because MNIST "
    "cannot be downloaded here. Input: one 28×28 grey image, white digit on black, "
    "values in [0, 1] (8×8 intensities 0–16 divided by 16, then bilinear upsampling); "
    "no mean/std normalisation."
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
    if variant == "digits":
        from safetensors.torch import load_file

        if not WEIGHTS_FILE.is_file():
            raise BuildError(f"mnist: the shipped weights {WEIGHTS_FILE} are missing; reinstall zoo")
        model.load_state_dict(load_file(str(WEIGHTS_FILE)), strict=True)
    elif variant != "random":
        raise BuildError(f"mnist has no weights variant {variant!r}; choose digits or random")
    return model.eval()


def _weights_identity() -> str:
    return "sha256:" + _digits.file_sha256(WEIGHTS_FILE)


def _data_identity(split: str) -> str:
    source = _digits.file_sha256(_digits.digits_path())
    return f"sklearn-digits:sha256:{source};{split};{_digits.split_identity()};mnist-plugin={VERSION}"


def _calibration() -> list[tuple[Any, ...]]:
    images, _ = _digits.load(_digits.calibration_indices())
    return [(images[i : i + 1].clone(),) for i in range(images.shape[0])]


def _evaluation() -> list[tuple[tuple[Any, ...], int]]:
    images, labels = _digits.load(_digits.eval_indices())
    return [((images[i : i + 1].clone(),), int(labels[i])) for i in range(images.shape[0])]


def _example_inputs() -> tuple[Any, ...]:
    return _calibration()[0]


def spec() -> ModelSpec:
    return ModelSpec(
        name="mnist",
        version=VERSION,
        description=DESCRIPTION,
        task="image-classification",
        inputs=(InputSpec("image", (1, 1, 28, 28), "float32", range=(0.0, 1.0), mean=(0.0,), std=(1.0,)),),
        build=_build,
        example_inputs=_example_inputs,
        calibration=Dataset(
            size=_digits.CALIBRATION_SIZE,
            description=(
                f"{_digits.CALIBRATION_SIZE} digits from the training split of scikit-learn's "
                "8×8 digits, upsampled to 28×28"
            ),
            load=_calibration,
            identity=lambda: _data_identity("calibration"),
        ),
        evaluation=Dataset(
            size=_digits.EVAL_SIZE,
            description=(
                f"{_digits.EVAL_SIZE} held-out digits of scikit-learn's 8×8 digits, upsampled to "
                "28×28; never used for training or calibration"
            ),
            load=_evaluation,
            identity=lambda: _data_identity("evaluation"),
        ),
        weights=(
            WeightsVariant(
                name="digits",
                description=(
                    "trained by scripts/train_mnist.py on the training split of scikit-learn's "
                    f"digits ({_digits.COUNT - _digits.EVAL_SIZE:,} samples, upsampled to 28×28)"
                ),
                origin="zoo/plugins/weights/mnist.safetensors (shipped with zoo)",
                licence="Apache-2.0; training data: UCI Optical Recognition of Handwritten Digits, CC BY 4.0",
                identity=_weights_identity,
            ),
            WeightsVariant(
                name="random",
                description=f"untrained: PyTorch's default init after torch.manual_seed({RANDOM_SEED})",
                origin="generated",
                licence="n/a",
                identity=lambda: f"seed:{RANDOM_SEED}",
            ),
        ),
        default_weights="digits",
        labels=LABELS,
    )


@hookimpl
def register_models(register: Callable[[ModelSpec], None]) -> None:
    register(spec())
