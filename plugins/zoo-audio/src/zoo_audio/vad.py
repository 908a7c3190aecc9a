"""``silero-vad``: Silero VAD v6's pretrained 16 kHz network, one 32 ms step per call.

Registering reads only ``data/vad/clips.json``: torch and numpy load when a build
asks for the network or the data.

zoo judges a model one call at a time, from the inputs of each item. The state is
an input here, so each evaluation and calibration item is one step of a clip
with the state the float network reached at that step, run from a zero state
over the clip (the way firmware runs it). The int8 program is thus judged step by
step from float's state: its own state's drift over a clip is measured apart, by
``scripts/measure_vad.py`` (docs/vad.md).
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
    Recipe,
    WeightsVariant,
    f1_at,
    roc_auc,
)
from zoo_audio import silero_net as net

VERSION = "1"
DATA = Path(__file__).parent / "data" / "vad"
WEIGHTS_FILE = DATA / "silero_vad_16k.safetensors"
CLIPS_FILE = DATA / "clips.npz"
CLIPS_META = DATA / "clips.json"
WEIGHTS = "silero-v6"
SILERO = "silero-vad 6.2.3"
# scripts/measure_vad.py's float figures on the evaluation steps (docs/vad.md).
REFERENCE = {"roc_auc": 0.9759, "f1": 0.9369}
# int8 measured 0.9328 and 0.8775 on u55-128 and u85-256 alike: both programs equal fake-quant exactly.
MAX_DROP = {"roc_auc": 0.05, "f1": 0.07}

DESCRIPTION = (
    "Silero VAD v6 (16 kHz): a Conv1d STFT, four Conv1d layers, an LSTM cell (128) and a 1×1 conv head; "
    "309,633 parameters. One call is one 32 ms step. Inputs: audio, the step's 512 new samples after the "
    "previous step's last 64 (zeros before the first), float in [-1, 1] at 16 kHz; h and c, the LSTM state "
    "the previous call returned (zeros to start). Outputs: the speech probability, then the new h and c."
)


@cache
def _meta() -> dict[str, Any]:
    try:
        meta: dict[str, Any] = json.loads(CLIPS_META.read_text())
    except (OSError, ValueError) as e:
        raise BuildError(f"silero-vad: the shipped clip list {CLIPS_META} cannot be read ({e}); reinstall zoo-audio") from e
    return meta


@cache
def _sha256(path: Path) -> str:
    if not path.is_file():
        raise BuildError(f"silero-vad: the shipped file {path} is missing; reinstall zoo-audio")
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _weights_identity() -> str:
    return "sha256:" + _sha256(WEIGHTS_FILE)


def _data_identity(split: str) -> str:
    # The items' states come from the float network, so the weights name the data too.
    return (f"clips sha256:{_sha256(CLIPS_FILE)};{split};float-state steps;weights sha256:{_sha256(WEIGHTS_FILE)};"
            f"silero-vad-plugin={VERSION}")


def _build(variant: str) -> Any:
    if variant != WEIGHTS:
        raise BuildError(f"silero-vad has no weights variant {variant!r}; choose {WEIGHTS}")
    _sha256(WEIGHTS_FILE)
    return net.load(WEIGHTS_FILE)


def clips(split: str) -> tuple[Any, Any]:
    """The split's clips, (clips, samples) float32 in [-1, 1], and their (clips, steps) 0/1 labels."""
    import numpy as np

    _sha256(CLIPS_FILE)
    with np.load(CLIPS_FILE) as data:
        chosen = data["calibration"] if split == "calibration" else ~data["calibration"]
        return data["audio"][chosen].astype(np.float32) / 32768.0, data["labels"][chosen]


@cache
def _steps(split: str) -> tuple[tuple[tuple[Any, Any, Any], int], ...]:
    """Every step of the split's clips: (audio, h, c) with the float network's state, and the label."""
    import torch

    model = _build(WEIGHTS)
    audio, labels = clips(split)
    out = []
    for clip, clip_labels in zip(audio, labels, strict=True):
        _, states = net.run_clip(model, clip)
        for row, (h, c), label in zip(net.windows(clip), states, clip_labels, strict=True):
            out.append(((torch.from_numpy(row.copy()).reshape(1, net.WINDOW), h, c), int(label)))
    return tuple(out)


def _calibration() -> list[tuple[Any, ...]]:
    return [tuple(t.clone() for t in sample) for sample, _ in _steps("calibration")]


def _evaluation() -> list[tuple[tuple[Any, ...], int]]:
    return [(tuple(t.clone() for t in sample), label) for sample, label in _steps("evaluation")]


def _example_inputs() -> tuple[Any, ...]:
    return _calibration()[0]


def spec() -> ModelSpec:
    meta = _meta()
    steps, seconds = meta["evaluation_steps"], net.CHUNK / net.SAMPLE_RATE
    clip_count = len([c for c in meta["clips"] if c["split"] == "evaluation"])
    data = (f"espeak-ng {meta['espeak_ng']} reading Harvard sentences in silence and in white "
            f"noise at 10 and 0 dB SNR, {net.SAMPLE_RATE} Hz, labelled speech where the clean utterance's step "
            f"energy is within {-meta['label_db']:g} dB of its loudest step")
    return ModelSpec(
        name="silero-vad",
        version=VERSION,
        description=DESCRIPTION,
        task="voice-activity-detection",
        inputs=(
            InputSpec("audio", (1, net.WINDOW), "float32", range=(-1.0, 1.0)),
            InputSpec("h", (1, net.HIDDEN), "float32", range=(-1.0, 1.0)),
            InputSpec("c", (1, net.HIDDEN), "float32"),
        ),
        outputs=("probability", "h_next", "c_next"),
        build=_build,
        example_inputs=_example_inputs,
        calibration=Dataset(
            size=meta["calibration_steps"],
            description=f"{meta['calibration_steps']} steps of the 3 calibration clips: {data}",
            load=_calibration,
            identity=lambda: _data_identity("calibration"),
        ),
        recipes={"front-end-16": Recipe("int8", {".": "a16w8"}, description=(
            "the STFT front end (forward's own operators) at 16-bit activations, the rest int8: what "
            "'zoo tune silero-vad -t u85-256 --max-drop f1=0.01' finds (docs/precision.md)"))},
        training=Dataset(  # --qat: the calibration clips again, never the held-out ones
            size=meta["calibration_steps"],
            description=f"the {meta['calibration_steps']} calibration steps again (inputs only: QAT matches "
                        "the float network's outputs)",
            load=_calibration,
            identity=lambda: _data_identity("calibration"),
        ),
        evaluation=Dataset(
            size=steps,
            description=(f"{steps} steps ({steps * seconds:.1f} s, {meta['speech_steps_evaluation']} speech) of "
                         f"{clip_count} held-out clips, each with the float network's state at that step: {data}"),
            load=_evaluation,
            identity=lambda: _data_identity("evaluation"),
        ),
        weights=(WeightsVariant(
            name=WEIGHTS,
            description=f"Silero VAD v6's 16 kHz weights, taken from the TorchScript model in {SILERO}",
            origin=(f"{SILERO} (PyPI), silero_vad/data/silero_vad.jit, extracted by "
                    "plugins/zoo-audio/scripts/extract_silero_weights.py into zoo_audio/data/vad/"),
            licence="MIT (Silero Team)",
            identity=_weights_identity,
            reference=dict(REFERENCE),
        ),),
        metrics=(
            Metric("roc_auc", roc_auc, higher_is_better=True, max_drop=MAX_DROP["roc_auc"],
                   description=f"step-level ROC-AUC of the speech probability on the {steps} evaluation steps"),
            Metric("f1", f1_at(0.5), higher_is_better=True, max_drop=MAX_DROP["f1"],
                   description=f"step-level F1 of probability ≥ 0.5 on the {steps} evaluation steps"),
        ),
        default_weights=WEIGHTS,
    )
