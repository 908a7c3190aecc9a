"""``ds-cnn-fsdd``: MLPerf Tiny's DS-CNN keyword spotter, trained on FSDD's spoken digits."""

from __future__ import annotations

from dataclasses import replace
from functools import cache
from pathlib import Path
from typing import Any

from zoo import Dataset, InputSpec, Metric, ModelSpec, ShippedClassifier, one_input_samples, top1
from zoo_audio import fsdd

NAME = "ds-cnn-fsdd"
VERSION = "1"
WEIGHTS_FILE = Path(__file__).parent / "weights" / "ds_cnn_fsdd.safetensors"
RANDOM_SEED = 0
CHANNELS = 64
BLOCKS = 4
REFERENCE_TOP1 = 99.67
"""scripts/train_ds_cnn.py's float top-1 on the held-out clips, in percent."""

DESCRIPTION = (
    f"MLPerf Tiny's DS-CNN shape (a 10×4 stride-2 convolution to {CHANNELS} channels, then {BLOCKS} "
    f"depthwise-separable blocks of {CHANNELS} channels, each with BatchNorm and ReLU, average pool, "
    "a linear layer) for 13 MFCCs × "
    f"{fsdd.CLIP_FRAMES} frames instead of 10 × 49; it classifies a spoken digit, 0-9. Input: "
    f"{fsdd.PREPROCESSING} (the 13 means and standard deviations are in zoo_audio/data/fsdd.json)."
)


@cache
def network_class() -> type[Any]:
    """The nn.Module class, defined on first use so that registration stays torch-free."""
    from torch import nn

    def separable(channels: int) -> nn.Sequential:
        return nn.Sequential(
            nn.Conv2d(channels, channels, 3, padding=1, groups=channels, bias=False),
            nn.BatchNorm2d(channels), nn.ReLU(),
            nn.Conv2d(channels, channels, 1, bias=False),
            nn.BatchNorm2d(channels), nn.ReLU(),
        )

    class DSCNN(nn.Module):
        def __init__(self, classes: int = len(fsdd.DIGITS)) -> None:
            super().__init__()
            self.stem = nn.Sequential(
                nn.Conv2d(1, CHANNELS, (10, 4), stride=2, padding=(5, 1), bias=False),
                nn.BatchNorm2d(CHANNELS), nn.ReLU(),
            )
            self.blocks = nn.Sequential(*(separable(CHANNELS) for _ in range(BLOCKS)))
            self.pool = nn.AdaptiveAvgPool2d(1)
            self.classifier = nn.Linear(CHANNELS, classes)

        def forward(self, x: Any) -> Any:
            x = self.pool(self.blocks(self.stem(x)))
            return self.classifier(x.flatten(1))

    return DSCNN


CLASSIFIER = ShippedClassifier(NAME, lambda: network_class()(), fsdd.load, WEIGHTS_FILE, "fsdd",
                               remedy="the shipped weights are gone; reinstall zoo-audio", seed=RANDOM_SEED)


def new_network(seed: int = RANDOM_SEED) -> Any:
    """A freshly initialised network; the global torch RNG is left untouched."""
    return CLASSIFIER.new_network(seed)


def training() -> Dataset:
    """The clips the weights were trained on, for ``--qat`` and the weight recipes' fine-tuning (labels unused)."""
    size = fsdd.snapshot()["split"]["train"]
    return Dataset(size=size, description=f"the {size:,} FSDD clips the weights were trained on (labels unused)",
                   load=lambda: one_input_samples(fsdd.load("train")[0]), identity=lambda: fsdd.identity("train"))


def spec() -> ModelSpec:
    split = fsdd.snapshot()["split"]
    return replace(CLASSIFIER.spec(
        version=VERSION,
        description=DESCRIPTION,
        task="keyword-spotting",
        inputs=(InputSpec("mfcc", (1, 1, fsdd.CLIP_FRAMES, fsdd.COEFFICIENTS), "float32"),),
        labels=fsdd.DIGITS,
        data_identity=fsdd.identity,
        sizes=split,
        calibration=f"{split['calibration']} FSDD clips, apart from the training and held-out clips",
        evaluation=(
            f"{split['held_out']} held-out FSDD clips ({fsdd.SPLIT_RULE}); the same 6 speakers as "
            "training: the file does not say who speaks, so no speaker is held out whole"
        ),
        samples="clips",
        trained=CLASSIFIER.trained_variant(
            description=f"trained by plugins/zoo-audio/scripts/train_ds_cnn.py on {split['train']:,} FSDD clips",
            origin="zoo_audio/weights/ds_cnn_fsdd.safetensors (shipped with zoo-audio)",
            licence=f"Apache-2.0; training data: {fsdd.ORIGIN}",
            reference={"top1": REFERENCE_TOP1},
        ),
        metrics=(Metric(
            "top1", top1, higher_is_better=True, max_drop=1.0,
            description=f"top-1 on the {split['held_out']} held-out FSDD clips",
        ),),
    ), training=training())
