"""JapaneseVowels and PLAID: sktime's ``.ts`` files at a fixed length, standardised, split as published.

JapaneseVowels' 12 cepstra are standardised per channel by the training split's statistics (in
the snapshot). PLAID's currents span five orders of magnitude (a laptop's milliamperes, a
heater's tens of amperes), which no fixed scale serves: each series is standardised by its own
mean and standard deviation, as the UCR archive's series are. Then each is cut or padded after
its end with zeros to ``length`` steps. The same arrays feed the network and the
1-nearest-neighbour baseline. Module level is numpy-free.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

from zoo import BuildError
from zoo_sensors import files, snapshot
from zoo_sensors.ts_format import read_ts


@dataclass(frozen=True)
class SeriesData:
    key: str
    """The snapshot's key and the name in data identities."""
    train_file: str
    test_file: str
    channels: int
    length: int
    per_series: bool
    """Standardise each series by its own statistics, not the training split's per channel."""
    calibration_every: int
    origin: str
    rate_hz: float
    """Samples (or frames) a second, as the data's source describes them."""
    axes: tuple[str, ...]
    units: tuple[str, ...]

    @property
    def preprocessing(self) -> str:
        how = ("each series standardised by its own mean and standard deviation" if self.per_series else
               "each channel standardised by the training split's mean and standard deviation")
        return f"{how}, then cut or padded after the end with zeros to {self.length} steps"

    @property
    def split_rule(self) -> str:
        return (f"the published split: {self.train_file} trains, {self.test_file} is held out; every "
                f"{self.calibration_every}th training series calibrates")

    def identity(self, split: str) -> str:
        """The files' digests, the split and the preprocessing; hashlib-free, numpy-free."""
        digests = ",".join(files.FILES[f].sha256 for f in (self.train_file, self.test_file))
        return f"{self.key}:sha256:{digests};{split};{self.split_rule};{self.preprocessing}"

    def sizes(self) -> dict[str, int]:
        counts = snapshot.read()[self.key]["series"]
        return {"train": counts["train"], "held_out": counts["test"],
                "calibration": -(-counts["train"] // self.calibration_every)}


VOWELS = SeriesData(
    "japanese-vowels", "JapaneseVowels_TRAIN.ts", "JapaneseVowels_TEST.ts", 12, 29, False, 5,
    "JapaneseVowels (Kudo, Toyama and Shimbo, 1999; UCI Machine Learning Repository, CC BY 4.0): 9 male speakers "
    "saying /ae/, 12 LPC cepstra a frame, as sktime 1.2.0 (BSD-3-Clause) ships it",
    # UCI's description of the analysis: 10 kHz audio, 25.6 ms frames every 6.4 ms.
    1000 / 6.4, tuple(f"c{k}" for k in range(1, 13)), (),
)
PLAID = SeriesData(
    "plaid", "PLAID_TRAIN.ts", "PLAID_TEST.ts", 1, 512, True, 5,
    "PLAID (Gao et al., 2014: Plug Load Appliance Identification Dataset, CC BY 4.0), current waveforms of 11 "
    "appliance types as the UEA/UCR archive cut them (Schäfer and Leser, 2017), as sktime 1.2.0 (BSD-3-Clause) "
    "ships it",
    30_000.0, ("current",), ("A",),  # PLAID1 samples current and voltage at 30 kHz
)


@cache
def raw(data: SeriesData) -> dict[str, Any]:
    """``train`` and ``test``: the `TsData` of each file, after the digest check."""
    out = {}
    for split, name in (("train", data.train_file), ("test", data.test_file)):
        ts = read_ts(files.checked(name), owner=files.OWNER)
        if ts.series[0].shape[0] != data.channels:
            raise BuildError(f"zoo-sensors: {name} has {ts.series[0].shape[0]} channels, expected {data.channels}")
        out[split] = ts
    return out


def statistics(data: SeriesData) -> tuple[list[float], list[float]]:
    """The training split's mean and standard deviation per channel, from the raw values."""
    import numpy as np

    values = np.concatenate(raw(data)["train"].series, axis=1)
    return values.mean(axis=1).tolist(), values.std(axis=1).tolist()


def _fixed(series: Any, length: int) -> Any:
    import numpy as np

    out = np.zeros((series.shape[0], length))
    n = min(length, series.shape[1])
    out[:, :n] = series[:, :n]
    return out


@cache
def arrays(data: SeriesData) -> dict[str, tuple[Any, Any]]:
    """``train``, ``calibration`` and ``held_out``: inputs (n, channels, 1, length) float32 and labels (n,) int64."""
    import numpy as np

    stats = snapshot.read()[data.key]
    mean = np.asarray(stats["mean"], dtype=np.float64)[:, None]
    std = np.asarray(stats["std"], dtype=np.float64)[:, None]

    def standardised(s: Any) -> Any:
        if data.per_series:
            return (s - s.mean()) / max(float(s.std()), 1e-12)
        return (s - mean) / std

    out = {}
    for split, ts in raw(data).items():
        x = np.stack([_fixed(standardised(s), data.length) for s in ts.series])
        out["held_out" if split == "test" else split] = (x.astype(np.float32)[:, :, None, :], ts.labels)
    out["calibration"] = (out["train"][0][:: data.calibration_every], out["train"][1][:: data.calibration_every])
    return out


def load(data: SeriesData, split: str) -> tuple[Any, Any]:
    """One split's inputs and labels, as new torch tensors."""
    import torch

    splits = arrays(data)
    if split not in splits:
        raise BuildError(f"zoo-sensors: {data.key} has no split {split!r}; choose one of {', '.join(splits)}")
    x, y = splits[split]
    return torch.from_numpy(x.copy()), torch.from_numpy(y.copy())


def nearest_neighbour_accuracy(data: SeriesData) -> float:
    """1-NN (Euclidean distance between the standardised fixed-length series) on the held-out split."""
    import numpy as np

    splits = arrays(data)
    train = splits["train"][0].reshape(len(splits["train"][0]), -1).astype(np.float64)
    test = splits["held_out"][0].reshape(len(splits["held_out"][0]), -1).astype(np.float64)
    distance = (test**2).sum(1)[:, None] - 2 * test @ train.T + (train**2).sum(1)[None, :]
    predicted = splits["train"][1][distance.argmin(axis=1)]
    return float((predicted == splits["held_out"][1]).mean())
