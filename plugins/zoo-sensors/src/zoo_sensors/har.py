"""``har-cnn-spar``: human activity recognition, a small 1-D CNN on SPAR's 6-axis 4 s windows."""

from __future__ import annotations

from dataclasses import replace
from functools import cache
from pathlib import Path
from typing import Any

from zoo import (
    BuildError,
    Dataset,
    InputSpec,
    Metric,
    ModelSpec,
    SensorInput,
    ShippedClassifier,
    one_input_samples,
    top1,
)
from zoo_sensors import files, net, snapshot, spar

NAME = "har-cnn-spar"
VERSION = "1"
WEIGHTS_FILE = Path(__file__).parent / "weights" / "har_cnn_spar.safetensors"
RANDOM_SEED = 0
WIDTHS = (32, 32, 64, 64)
KERNEL = 9
STRIDE = 2
DROPOUT = 0.3
REFERENCE_TOP1 = 86.40
WEIGHTS_SHA256 = "6ab5120b0d6c5b8e9e499a16e30c6c9924c29b8bfb85a45cc32fe6a0c1e715f1"
"""The sha256 of the file scripts/train_har.py writes (a test checks the shipped file against it)."""
"""scripts/train_har.py's float top-1 on the held-out subjects' windows, in percent."""
LAYOUTS = ("nchw", "nhwc")
"""NHWC is the (1, 1, 200, 6) window sample by sample, as a FIFO gives it: ``--io int8 --layout nhwc`` has no transpose."""
PREPROCESSING = "each axis standardised by the training subjects' mean and standard deviation (in the snapshot)"
DESCRIPTION = (
    f"A 1-D CNN for activity recognition on a wrist IMU: {len(WIDTHS)} blocks of a 1×{KERNEL} stride-{STRIDE} "
    f"convolution ({', '.join(map(str, WIDTHS))} channels) with BatchNorm and ReLU, the average over time and a "
    f"linear layer to SPAR's {len(spar.EXERCISES)} shoulder exercises ({', '.join(spar.EXERCISES)}). Input: a "
    f"{spar.WINDOW // spar.RATE_HZ} s window, {spar.WINDOW} samples at {spar.RATE_HZ} Hz, of the {len(spar.AXES)} "
    f"axes {', '.join(spar.AXES)} (acceleration in g, angular rate in rad/s) as (1, 6, 1, {spar.WINDOW}); "
    f"{PREPROCESSING}."
)


def identity(split: str) -> str:
    return (f"spar:sha256:{files.FILES[spar.SOURCE].sha256};{split};{spar.WINDOWING};{spar.SPLIT_RULE};"
            f"{PREPROCESSING}")


@cache
def _prepared() -> tuple[Any, Any, dict[str, Any]]:
    import numpy as np

    x, y, _ = spar.windows()
    split = spar.subject_split(spar.HELD_OUT_SUBJECTS)
    saved = snapshot.read()["spar"]
    if {k: len(v) for k, v in split.items()} != saved["split"]:
        raise BuildError("zoo-sensors: SPAR's split differs from the snapshot's; regenerate it with "
                         "python plugins/zoo-sensors/scripts/snapshot_sensors.py")
    mean, std = np.asarray(saved["mean"]), np.asarray(saved["std"])
    normal = ((x - mean[None, :, None]) / std[None, :, None]).astype(np.float32)[:, :, None, :]
    return normal, y, split


def load(split: str) -> tuple[Any, Any]:
    """One split's windows (n, 6, 1, 200) and exercises (n,), as new torch tensors."""
    import torch

    x, y, splits = _prepared()
    if split not in splits:
        raise BuildError(f"zoo-sensors: SPAR has no split {split!r}; choose one of {', '.join(splits)}")
    return torch.from_numpy(x[splits[split]].copy()), torch.from_numpy(y[splits[split]].copy())


def network() -> Any:
    return net.conv1d_classifier_class()(len(spar.AXES), WIDTHS, KERNEL, STRIDE, len(spar.EXERCISES), DROPOUT)


CLASSIFIER = ShippedClassifier(NAME, network, load, WEIGHTS_FILE, "spar",
                               remedy="the shipped weights are gone; reinstall zoo-sensors", seed=RANDOM_SEED)


def sensor() -> SensorInput:
    """The watch's window as firmware reads it: raw g and rad/s, standardised per axis by the snapshot's statistics."""
    saved = snapshot.read()["spar"]
    return SensorInput(spar.WINDOW, spar.RATE_HZ, spar.AXES, spar.UNITS, "per-channel",
                       tuple(saved["mean"]), tuple(saved["std"]))


def training() -> Dataset:
    """The windows the weights were trained on, for ``--qat`` and the weight recipes' fine-tuning (labels unused)."""
    size = snapshot.read()["spar"]["split"]["train"]
    return Dataset(size=size, description=f"the {size:,} windows of subjects 1-8 the weights were trained on (labels unused)",
                   load=lambda: one_input_samples(load("train")[0]), identity=lambda: identity("train"))


def spec() -> ModelSpec:
    sizes = snapshot.read()["spar"]["split"]
    return replace(CLASSIFIER.spec(
        version=VERSION,
        description=DESCRIPTION,
        task="activity-recognition",
        inputs=(InputSpec("imu", (1, len(spar.AXES), 1, spar.WINDOW), "float32", sensor=sensor()),),
        labels=spar.EXERCISES,
        data_identity=identity,
        sizes=sizes,
        calibration=f"{sizes['calibration']} windows of the training subjects (1-8), every {spar.CALIBRATION_EVERY}th",
        evaluation=(f"all {sizes['held_out']} windows of subjects {spar.HELD_OUT_SUBJECTS[0]} and "
                    f"{spar.HELD_OUT_SUBJECTS[1]}, whom training never saw"),
        samples="windows",
        trained=CLASSIFIER.trained_variant(
            description=(f"trained by plugins/zoo-sensors/scripts/train_har.py on {sizes['train']:,} windows of "
                         "subjects 1-8"),
            origin="zoo_sensors/weights/har_cnn_spar.safetensors (shipped with zoo-sensors)",
            licence=f"Apache-2.0; training data: {spar.ORIGIN}",
            reference={"top1": REFERENCE_TOP1},
        ),
        metrics=(Metric("top1", top1, higher_is_better=True, max_drop=1.0,
                        description=f"top-1 on the {sizes['held_out']} windows of the held-out subjects"),),
        layouts=LAYOUTS,
    ), training=training())
