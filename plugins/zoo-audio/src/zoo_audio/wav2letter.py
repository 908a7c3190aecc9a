"""``wav2letter``: the Wav2Letter acoustic model (torchaudio's shape), random weights.

Defined here rather than imported from torchaudio: the same layers as
``torchaudio.models.Wav2Letter(num_classes=40, input_type="waveform", num_features=1)``,
with the input ExecuTorch's own Arm tests lower (400 samples of one channel).
"""

from __future__ import annotations

from functools import cache
from typing import Any

from zoo import BuildError, Dataset, InputSpec, ModelSpec, WeightsVariant
from zoo_audio import synthetic

NAME = "wav2letter"
VERSION = "1"
CLASSES = 40
SAMPLES = 400
RATE = 16_000
RANDOM_SEED = 0
CALIBRATION_SIZE = 8
CALIBRATION_SEED = 1

DESCRIPTION = (
    "Wav2Letter (Collobert, Puhrsch and Synnaeve, 2016) as torchaudio defines it for raw audio: a 250-wide stride-160 "
    "convolution over the waveform, then 1-D convolutions 250→250 (k48 stride 2, 7 × k7), 250→2000 (k32), "
    f"2000→2000 and 2000→{CLASSES} (k1), each with ReLU, and log-softmax over the {CLASSES} classes. "
    f"Input: {SAMPLES} samples of 16 kHz mono audio in [-1, 1] (the shape ExecuTorch's Arm tests use); "
    f"output (1, {CLASSES}, 2): per-frame log-probabilities. No pretrained weights can be had offline."
)


@cache
def network_class() -> type[Any]:
    import torch
    from torch import nn

    def conv(cin: int, cout: int, kernel: int, stride: int = 1, padding: int = 0) -> list[nn.Module]:
        return [nn.Conv1d(cin, cout, kernel, stride=stride, padding=padding), nn.ReLU()]

    class Wav2Letter(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            layers = conv(1, 250, 250, 160, 45) + conv(250, 250, 48, 2, 23)
            for _ in range(7):
                layers += conv(250, 250, 7, 1, 3)
            layers += conv(250, 2000, 32, 1, 16) + conv(2000, 2000, 1) + conv(2000, CLASSES, 1)
            self.acoustic_model = nn.Sequential(*layers)

        def forward(self, x: Any) -> Any:
            return torch.nn.functional.log_softmax(self.acoustic_model(x), dim=1)

    return Wav2Letter


def _build(variant: str) -> Any:
    import torch

    if variant != "random":
        raise BuildError(f"{NAME} has no weights variant {variant!r}; it has only random")
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(RANDOM_SEED)
        model = network_class()().eval()
    rescale(model, _calibration())
    return model


def rescale(model: Any, samples: list[tuple[Any, ...]]) -> None:
    """Scale each convolution, in order, so that its output over ``samples`` has unit standard
    deviation, its bias zeroed (LSUV's rule, Mishkin and Matas 2016). With 400 samples most
    taps of the later kernels see padding, and PyTorch's default init shrinks the signal so
    much that the log-probabilities would be constant to within 0.03: nothing to check."""
    import torch

    h = torch.cat([s[0] for s in samples])
    with torch.no_grad():
        for layer in model.acoustic_model:
            if isinstance(layer, torch.nn.Conv1d):
                if layer.bias is not None:
                    layer.bias.zero_()
                layer.weight.div_(layer(h).std())
            h = layer(h)


def _calibration() -> list[tuple[Any, ...]]:
    return synthetic.tones_in_noise(SAMPLES, CALIBRATION_SIZE, CALIBRATION_SEED, RATE)


def _calibration_identity() -> str:
    return f"tones-in-noise:samples={SAMPLES},count={CALIBRATION_SIZE},seed={CALIBRATION_SEED}"


def spec() -> ModelSpec:
    return ModelSpec(
        name=NAME,
        version=VERSION,
        description=DESCRIPTION,
        task="speech-recognition",
        inputs=(InputSpec("waveform", (1, 1, SAMPLES), "float32", range=(-1.0, 1.0)),),
        build=_build,
        example_inputs=lambda: _calibration()[0],
        calibration=Dataset(
            size=CALIBRATION_SIZE,
            description=(
                f"{CALIBRATION_SIZE} synthetic waveforms (three sine tones in white noise, numpy PCG64 seed "
                f"{CALIBRATION_SEED}): no speech; character or word error needs labelled speech, which "
                "nothing offline ships, so the elementwise checks alone judge this model"
            ),
            load=_calibration,
            identity=_calibration_identity,
        ),
        weights=(
            WeightsVariant(
                name="random",
                description=(
                    f"untrained: PyTorch's default init after torch.manual_seed({RANDOM_SEED}); it has no "
                    "normalisation layers, so instead each convolution is scaled to unit output standard "
                    "deviation on the calibration waveforms (LSUV), biases zeroed"
                ),
                origin="generated",
                licence="n/a",
                identity=lambda: f"seed:{RANDOM_SEED};lsuv-on:{_calibration_identity()}",
            ),
        ),
        num_labels=CLASSES,
    )
