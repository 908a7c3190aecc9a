"""``vww-mobilenetv1-025``: MLPerf Tiny's visual wake words network, trained on lfw_subset's crops."""

from __future__ import annotations

import hashlib
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
    reestimate_batchnorm,
    top1,
)
from zoo_vision import lfw

NAME = "vww-mobilenetv1-025"
VERSION = "1"
WEIGHTS_FILE = Path(__file__).parent / "weights" / "vww_mobilenetv1_025.safetensors"
RANDOM_SEED = 0
WIDTH = 0.25
# MobileNetV1's depthwise-separable blocks as (output channels at width 1.0, stride).
BLOCKS = ((64, 1), (128, 2), (128, 1), (256, 2), (256, 1), (512, 2), (512, 1), (512, 1), (512, 1), (512, 1),
          (512, 1), (1024, 2), (1024, 1))
REFERENCE_TOP1 = 100.0
"""scripts/train_vww.py's float top-1 on the 40 held-out crops, in percent."""

DESCRIPTION = (
    f"MobileNetV1 at width {WIDTH} (MLPerf Tiny's visual wake words network: a 3×3 stride-2 convolution to 8 "
    "channels, 13 depthwise-separable blocks to 256 channels, each convolution with BatchNorm and ReLU, average "
    f"pool, a linear layer to 2 classes) at {lfw.SIDE}×{lfw.SIDE}×3. It tells whether a face is present. "
    f"Input: {lfw.PREPROCESSING}."
)


def channels(n: int) -> int:
    return max(8, int(n * WIDTH))


@cache
def network_class() -> type[Any]:
    """The nn.Module class, defined on first use so that registration stays torch-free."""
    from torch import nn

    def conv(cin: int, cout: int, stride: int, groups: int = 1, kernel: int = 3) -> list[nn.Module]:
        return [nn.Conv2d(cin, cout, kernel, stride, kernel // 2, groups=groups, bias=False),
                nn.BatchNorm2d(cout), nn.ReLU()]

    class MobileNetV1(nn.Module):
        def __init__(self, classes: int = len(lfw.CLASSES)) -> None:
            super().__init__()
            layers = conv(3, channels(32), 2)
            cin = channels(32)
            for width, stride in BLOCKS:
                cout = channels(width)
                layers += conv(cin, cin, stride, groups=cin) + conv(cin, cout, 1, kernel=1)
                cin = cout
            self.features = nn.Sequential(*layers)
            self.pool = nn.AdaptiveAvgPool2d(1)
            self.classifier = nn.Linear(cin, classes)

        def forward(self, x: Any) -> Any:
            return self.classifier(self.pool(self.features(x)).flatten(1))

    return MobileNetV1


def new_network(seed: int = RANDOM_SEED) -> Any:
    """A freshly initialised network; the global torch RNG is left untouched."""
    import torch

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return network_class()()


def _build(variant: str) -> Any:
    model = new_network()
    if variant == "lfw":
        from safetensors.torch import load_file

        model.load_state_dict(load_file(str(_weights_file())), strict=True)
    elif variant == "random":
        reestimate_batchnorm(model, _calibration())
    else:
        raise BuildError(f"{NAME} has no weights variant {variant!r}; choose lfw or random")
    return model.eval()


def _weights_file() -> Path:
    if not WEIGHTS_FILE.is_file():
        raise BuildError(f"{NAME}: the shipped weights {WEIGHTS_FILE} are missing; reinstall zoo-vision")
    return WEIGHTS_FILE


def _calibration() -> list[tuple[Any, ...]]:
    images, _ = lfw.load("calibration")
    return [(images[i : i + 1].clone(),) for i in range(images.shape[0])]


def _evaluation() -> list[tuple[tuple[Any, ...], int]]:
    images, labels = lfw.load("held_out")
    return [((images[i : i + 1].clone(),), int(labels[i])) for i in range(images.shape[0])]


def _example_inputs() -> tuple[Any, ...]:
    return _calibration()[0]


def spec() -> ModelSpec:
    split = lfw.snapshot()["split"]
    return ModelSpec(
        name=NAME,
        version=VERSION,
        description=DESCRIPTION,
        task="visual-wake-words",
        inputs=(InputSpec("image", (1, 3, lfw.SIDE, lfw.SIDE), "float32", range=(-1.0, 1.0)),),
        build=_build,
        example_inputs=_example_inputs,
        calibration=Dataset(
            size=split["calibration"],
            description=f"{split['calibration']} lfw_subset training crops, half faces",
            load=_calibration,
            identity=lambda: lfw.identity("calibration"),
        ),
        evaluation=Dataset(
            size=split["held_out"],
            description=f"{split['held_out']} held-out lfw_subset crops, half faces ({lfw.SPLIT_RULE})",
            load=_evaluation,
            identity=lambda: lfw.identity("held_out"),
        ),
        weights=(
            WeightsVariant(
                name="lfw",
                description=(
                    f"trained by plugins/zoo-vision/scripts/train_vww.py on {split['train']} lfw_subset crops "
                    "and their mirror images"
                ),
                origin="zoo_vision/weights/vww_mobilenetv1_025.safetensors (shipped with zoo-vision)",
                licence=f"Apache-2.0; training data: {lfw.ORIGIN}",
                identity=lambda: "sha256:" + hashlib.sha256(_weights_file().read_bytes()).hexdigest(),
                reference={"top1": REFERENCE_TOP1},
            ),
            WeightsVariant(
                name="random",
                description=(
                    f"untrained: PyTorch's default init after torch.manual_seed({RANDOM_SEED}), then every "
                    "BatchNorm's statistics re-estimated on the calibration crops"
                ),
                origin="generated",
                licence="n/a",
                identity=lambda: f"seed:{RANDOM_SEED};bn-reestimated-on:{lfw.identity('calibration')}",
            ),
        ),
        metrics=(Metric(
            "top1", top1, higher_is_better=True, max_drop=5.0,
            description=f"top-1 on the {split['held_out']} held-out lfw_subset crops (one crop is 2.5 points)",
        ),),
        default_weights="lfw",
        labels=lfw.CLASSES,
    )
