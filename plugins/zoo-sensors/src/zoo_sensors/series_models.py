"""``speaker-id-vowels`` and ``appliance-id-plaid``: small 1-D CNNs on sktime's JapaneseVowels and PLAID."""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any

from zoo import (
    Dataset,
    InputSpec,
    Metric,
    ModelSpec,
    SensorInput,
    ShippedClassifier,
    one_input_samples,
    top1,
)
from zoo_sensors import net, snapshot
from zoo_sensors.series import PLAID, VOWELS, SeriesData, load

WEIGHTS = Path(__file__).parent / "weights"
RANDOM_SEED = 0


@dataclass(frozen=True)
class SeriesModel:
    name: str
    data: SeriesData
    task: str
    labels: tuple[str, ...]
    widths: tuple[int, ...]
    kernel: int
    stride: int
    dropout: float
    weights_file: Path
    script: str
    reference_top1: float
    """The script's float top-1 on the held-out split, in percent."""
    weights_sha256: str
    """The sha256 of the file the script writes (a test checks the shipped file against it)."""
    what: str
    """What the input is, for the description."""
    input_name: str

    @property
    def layouts(self) -> tuple[str, ...]:
        """NHWC too where there is more than one channel (it is the samples in time order, channels interleaved);
        with one, NHWC is NCHW's bytes and ``--layout nhwc`` is refused."""
        return ("nchw", "nhwc") if self.data.channels > 1 else ("nchw",)

    def network(self) -> Any:
        return net.conv1d_classifier_class()(self.data.channels, self.widths, self.kernel, self.stride,
                                             len(self.labels), self.dropout)

    @property
    def classifier(self) -> ShippedClassifier:
        return ShippedClassifier(self.name, self.network, partial(load, self.data), self.weights_file,
                                 self.data.key, remedy="the shipped weights are gone; reinstall zoo-sensors",
                                 seed=RANDOM_SEED)

    def sensor(self) -> SensorInput:
        """The series as firmware reads it: per-channel by the snapshot's statistics, or by each series' own."""
        if self.data.per_series:
            return SensorInput(self.data.length, self.data.rate_hz, self.data.axes, self.data.units, "per-window")
        saved = snapshot.read()[self.data.key]
        return SensorInput(self.data.length, self.data.rate_hz, self.data.axes, self.data.units, "per-channel",
                           tuple(saved["mean"]), tuple(saved["std"]))

    def training(self) -> Dataset:
        """The series the weights were trained on, for ``--qat`` and the weight recipes' fine-tuning (labels unused)."""
        size = self.data.sizes()["train"]
        return Dataset(size=size, description=f"the {size:,} series of the published training split (labels unused)",
                       load=lambda: one_input_samples(load(self.data, "train")[0]),
                       identity=lambda: self.data.identity("train"))

    def spec(self) -> ModelSpec:
        sizes = self.data.sizes()
        classifier = self.classifier
        return replace(classifier.spec(
            version="1",
            description=(
                f"A 1-D CNN: {len(self.widths)} blocks of a 1×{self.kernel} stride-{self.stride} convolution "
                f"({', '.join(map(str, self.widths))} channels) with BatchNorm and ReLU, the average over time and "
                f"a linear layer to {len(self.labels)} classes. Input: {self.what} as (1, {self.data.channels}, 1, "
                f"{self.data.length}): {self.data.preprocessing}."
            ),
            task=self.task,
            inputs=(InputSpec(self.input_name, (1, self.data.channels, 1, self.data.length), "float32",
                              sensor=self.sensor()),),
            labels=self.labels,
            data_identity=self.data.identity,
            sizes=sizes,
            calibration=f"{sizes['calibration']} training series, every {self.data.calibration_every}th",
            evaluation=f"the {sizes['held_out']} series of the published test split",
            samples="series",
            trained=classifier.trained_variant(
                description=(f"trained by plugins/zoo-sensors/scripts/{self.script} on the {sizes['train']} "
                             "series of the published training split"),
                origin=f"zoo_sensors/weights/{self.weights_file.name} (shipped with zoo-sensors)",
                licence=f"Apache-2.0; training data: {self.data.origin}",
                reference={"top1": self.reference_top1},
            ),
            metrics=(Metric("top1", top1, higher_is_better=True, max_drop=1.0,
                            description=f"top-1 on the {sizes['held_out']} held-out series"),),
            layouts=self.layouts,
        ), training=self.training())


SPEAKER_ID = SeriesModel(
    "speaker-id-vowels", VOWELS, "speaker-identification", tuple(f"speaker {i}" for i in range(1, 10)),
    (32, 32), 3, 1, 0.2, WEIGHTS / "speaker_id_vowels.safetensors", "train_series.py", 98.11,
    "24858d486f57c297da4883edf93f006409196eb531e9246c5af231a843db3036",
    "an utterance of /ae/ as 12 LPC cepstra a frame, up to 29 frames (7-29 in the data)", "cepstra",
)
APPLIANCE_ID = SeriesModel(
    "appliance-id-plaid", PLAID, "appliance-identification",
    ("air conditioner", "compact fluorescent lamp", "fan", "fridge", "hairdryer", "heater",
     "incandescent light bulb", "laptop", "microwave", "vacuum", "washing machine"),
    (8, 16, 32, 32), 7, 2, 0.2, WEIGHTS / "appliance_id_plaid.safetensors", "train_series.py", 76.16,
    "846115cf7b83037636ac6f8229719df6d63a87ba4a3fa3955fd77b8604ca8000",
    "an appliance's current waveform in amperes as the UEA/UCR archive cut it, its first 512 samples "
    "(100-1,344 in the data)", "current",
)
MODELS = {m.name: m for m in (SPEAKER_ID, APPLIANCE_ID)}
