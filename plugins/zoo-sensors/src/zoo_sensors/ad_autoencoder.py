"""``ad-autoencoder-spar``: novelty detection on SPAR's motion windows by an autoencoder's reconstruction error.

Trained on the features of six exercises' windows only; the seventh (ROW) is the novelty. This is
novelty detection on motion data, not machine-fault detection.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import zoo
from zoo import BuildError, Dataset, InputSpec, Metric, ModelSpec, SensorInput, WeightsVariant
from zoo_sensors import files, net, novelty, snapshot, spar

NAME = "ad-autoencoder-spar"
VERSION = "1"
WEIGHTS_FILE = Path(__file__).parent / "weights" / "ad_autoencoder_spar.safetensors"
WIDTHS = (64, 32, 8)
RANDOM_SEED = 0
REFERENCE_AUROC = 0.9544
WEIGHTS_SHA256 = "555588ee1906bb5e5e8045f46637f4bf3e4bc9a859a59a66300a58bfbafb4874"
"""The sha256 of the file scripts/train_ad_autoencoder.py writes (a test checks the shipped file against it)."""
"""scripts/train_ad_autoencoder.py's float ROC-AUC on the held-out subjects' windows."""
REMEDY = "the shipped weights are gone; reinstall zoo-sensors"
PREPROCESSING = (f"the window's {spar.FEATURE_COUNT} features ({spar.FEATURE_RULE}), each standardised by the "
                 "normal training windows' mean and standard deviation (in the snapshot)")
DESCRIPTION = (
    "Novelty detection on motion data (not machine-fault detection): a fully-connected autoencoder "
    f"({spar.FEATURE_COUNT} → {' → '.join(map(str, WIDTHS))} → {' → '.join(map(str, reversed(WIDTHS[:-1])))} → "
    f"{spar.FEATURE_COUNT}, each hidden layer with BatchNorm and ReLU) trained on windows of six SPAR shoulder "
    f"exercises only; a window of the seventh, {spar.EXERCISES[novelty.NOVEL]}, should reconstruct worse. The score "
    f"is the reconstruction's mean squared error. Input: a {spar.WINDOW // spar.RATE_HZ} s window of {spar.WINDOW} "
    f"samples at {spar.RATE_HZ} Hz of the 6 axes {', '.join(spar.AXES)}, as {PREPROCESSING}; the features are "
    "computed off the NPU, as MLPerf Tiny's autoencoder takes log-mel frames."
)


def identity(split: str) -> str:
    return (f"spar:sha256:{files.FILES[spar.SOURCE].sha256};{split};{spar.WINDOWING};{novelty.SPLIT_RULE};"
            f"{PREPROCESSING}")


def network() -> Any:
    return net.autoencoder_class()(spar.FEATURE_COUNT, WIDTHS)


def new_network(seed: int = RANDOM_SEED) -> Any:
    return zoo.seeded_network(network, seed)


def load(split: str) -> Any:
    """One split's standardised features (n, 84) as a new torch tensor."""
    import torch

    data = novelty.standardised()
    if split not in data:
        raise BuildError(f"zoo-sensors: {NAME} has no split {split!r}; choose one of {', '.join(data)}")
    return torch.from_numpy(data[split].copy())


def _calibration() -> list[tuple[Any, ...]]:
    return zoo.one_input_samples(load("calibration"))


def _training() -> list[tuple[Any, ...]]:
    return zoo.one_input_samples(load("train"))


def _evaluation() -> list[tuple[tuple[Any, ...], int]]:
    import torch

    return zoo.labelled_samples(load("held_out"), torch.from_numpy(novelty.held_out_labels()))


def build(variant: str) -> Any:
    model = new_network()
    if variant == "spar":
        zoo.load_weights(model, WEIGHTS_FILE, owner=NAME, remedy=REMEDY)
    elif variant == "random":
        zoo.reestimate_batchnorm(model, _calibration())
    else:
        raise BuildError(f"{NAME} has no weights variant {variant!r}; choose spar or random")
    return model.eval()


def sensor() -> SensorInput:
    """The window the features are computed from (zoo's window statistics, so firmware's I/O helper computes
    them from the raw window), and the features' standardisation by the normal training windows."""
    saved = snapshot.read()["spar"]["novelty"]
    return SensorInput(spar.WINDOW, spar.RATE_HZ, spar.AXES, spar.UNITS, "per-channel", tuple(saved["mean"]),
                       tuple(saved["std"]), features=spar.FEATURE_NAMES, from_window=True)


def spec() -> ModelSpec:
    sizes = snapshot.read()["spar"]["novelty"]["split"]
    novel = snapshot.read()["spar"]["novelty"]["novel_held_out"]
    return ModelSpec(
        name=NAME,
        version=VERSION,
        description=DESCRIPTION,
        task="anomaly-detection",
        inputs=(InputSpec("features", (1, spar.FEATURE_COUNT), "float32", sensor=sensor()),),
        build=build,
        example_inputs=lambda: _calibration()[0],
        calibration=Dataset(sizes["calibration"], f"{sizes['calibration']} normal windows of subjects 1-8, every "
                            f"{spar.CALIBRATION_EVERY}th training window", _calibration,
                            lambda: identity("calibration")),
        evaluation=Dataset(sizes["held_out"], f"all {sizes['held_out']} windows of subjects 9 and 10: {novel} of "
                           f"{spar.EXERCISES[novelty.NOVEL]} (label 1), the others of the six trained exercises "
                           "(label 0)", _evaluation, lambda: identity("held_out")),
        weights=(
            WeightsVariant(
                name="spar",
                description=(f"trained by plugins/zoo-sensors/scripts/train_ad_autoencoder.py on {sizes['train']:,} "
                             f"windows of subjects 1-8 and six exercises (not {spar.EXERCISES[novelty.NOVEL]})"),
                origin="zoo_sensors/weights/ad_autoencoder_spar.safetensors (shipped with zoo-sensors)",
                licence=f"Apache-2.0; training data: {spar.ORIGIN}",
                identity=lambda: "sha256:" + zoo.file_sha256(WEIGHTS_FILE, owner=NAME, remedy=REMEDY),
                reference={"reconstruction_roc_auc": REFERENCE_AUROC},
            ),
            WeightsVariant(
                name="random",
                description=(f"untrained: PyTorch's default init after torch.manual_seed({RANDOM_SEED}), then every "
                             "BatchNorm's statistics re-estimated on the calibration windows"),
                origin="generated", licence="n/a",
                identity=lambda: f"seed:{RANDOM_SEED};bn-reestimated-on:{identity('calibration')}",
            ),
        ),
        metrics=(Metric("reconstruction_roc_auc", zoo.reconstruction_roc_auc, higher_is_better=True, max_drop=0.02,
                        description=(f"ROC-AUC of the reconstruction error, {spar.EXERCISES[novelty.NOVEL]} against "
                                     f"the six trained exercises, on the {sizes['held_out']} held-out windows")),),
        default_weights="spar",
        training=Dataset(sizes["train"], f"the {sizes['train']:,} normal windows of subjects 1-8 the weights were "
                         "trained on, for --qat and the weight recipes' fine-tuning", _training,
                         lambda: identity("train")),
        code=(network, load),  # the layers are net.py's, the features novelty.py's: both in the key
    )
