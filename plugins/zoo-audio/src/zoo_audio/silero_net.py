"""Silero VAD's 16 kHz network as one step: (chunk with context, h, c) in, (speech probability, h, c) out.

The layers and their names are those of ``silero_vad_16k.safetensors`` in the
``silero-vad`` wheel: a Conv1d STFT (256-sample window, hop 128, reflect padding
of 64 at the end), its magnitude, four Conv1d encoder layers, an LSTM cell and a
1×1 conv head. The wheel's TorchScript model keeps the context and the state
inside itself; here both are inputs, so one call is one 32 ms step that firmware
drives, carrying h and c from one call to the next.

h and c are separate tensors rather than Silero's stacked ``(2, 1, 128)`` state,
so int8 gives each its own scale (c ranges wider than h, which tanh bounds).

torch is imported inside functions: registering the model must not load it.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

SAMPLE_RATE = 16_000
CHUNK = 512
"""Samples per step: 32 ms at 16 kHz."""
CONTEXT = 64
"""The previous step's last samples, prepended to each chunk (zeros before the first)."""
WINDOW = CHUNK + CONTEXT
HIDDEN = 128
_N_FFT = 256
_HOP = 128
_BINS = _N_FFT // 2 + 1


@cache
def network_class() -> type[Any]:
    """The nn.Module class, defined on first use so that importing this module stays torch-free."""
    import torch
    from torch import nn
    from torch.nn import functional as F

    class LSTMCell(nn.Module):
        """``nn.LSTMCell``'s parameters and arithmetic, written out so the export shows plain
        linear layers and activations rather than ``aten.lstm_cell``."""

        def __init__(self) -> None:
            super().__init__()
            self.weight_ih = nn.Parameter(torch.empty(4 * HIDDEN, HIDDEN))
            self.weight_hh = nn.Parameter(torch.empty(4 * HIDDEN, HIDDEN))
            self.bias_ih = nn.Parameter(torch.empty(4 * HIDDEN))
            self.bias_hh = nn.Parameter(torch.empty(4 * HIDDEN))

        def forward(self, x: Any, h: Any, c: Any) -> tuple[Any, Any]:
            gates = F.linear(x, self.weight_ih, self.bias_ih) + F.linear(h, self.weight_hh, self.bias_hh)
            i, f, g, o = gates.chunk(4, dim=1)
            c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
            h = torch.sigmoid(o) * torch.tanh(c)
            return h, c

    class SileroVadStep(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.stft_conv = nn.Conv1d(1, 2 * _BINS, kernel_size=_N_FFT, stride=_HOP, bias=False)
            self.conv1 = nn.Conv1d(_BINS, 128, kernel_size=3, padding=1)
            self.conv2 = nn.Conv1d(128, 64, kernel_size=3, stride=2, padding=1)
            self.conv3 = nn.Conv1d(64, 64, kernel_size=3, stride=2, padding=1)
            self.conv4 = nn.Conv1d(64, 128, kernel_size=3, padding=1)
            self.lstm_cell = LSTMCell()
            self.final_conv = nn.Conv1d(HIDDEN, 1, kernel_size=1)

        def forward(self, audio: Any, h: Any, c: Any) -> tuple[Any, Any, Any]:
            x = F.pad(audio, (0, CONTEXT), mode="reflect").unsqueeze(1)
            x = self.stft_conv(x)
            x = torch.sqrt(x[:, :_BINS] ** 2 + x[:, _BINS:] ** 2)
            x = F.relu(self.conv1(x))
            x = F.relu(self.conv2(x))
            x = F.relu(self.conv3(x))
            x = F.relu(self.conv4(x)).squeeze(-1)
            h, c = self.lstm_cell(x, h, c)
            p = torch.sigmoid(self.final_conv(F.relu(h).unsqueeze(-1)))
            return p.reshape(-1, 1), h, c

    return SileroVadStep


def load(weights: Path) -> Any:
    """The network with the safetensors file's weights, in eval mode; every tensor must match."""
    from safetensors.torch import load_file

    model = network_class()()
    model.load_state_dict(load_file(str(weights)), strict=True)
    return model.eval()


def zero_state() -> tuple[Any, Any]:
    import torch

    return torch.zeros(1, HIDDEN), torch.zeros(1, HIDDEN)


def windows(audio: Any) -> Any:
    """A clip as the network's inputs, one row per step: each 512-sample chunk with the
    64 samples before it (zeros before the first), the last chunk zero-padded, as
    Silero's own streaming wrapper feeds it. ``audio`` is 1-D float at 16 kHz."""
    import numpy as np

    audio = np.asarray(audio, dtype=np.float32).reshape(-1)
    steps = -(-audio.size // CHUNK)
    padded = np.zeros(CONTEXT + steps * CHUNK, dtype=np.float32)
    padded[CONTEXT:CONTEXT + audio.size] = audio
    return np.stack([padded[i * CHUNK:i * CHUNK + WINDOW] for i in range(steps)])


def run_clip(model: Any, audio: Any) -> tuple[Any, list[tuple[Any, Any]]]:
    """Steps the network over a clip from a zero state, carrying h and c. Returns each
    step's probability (float32 array) and the state each step was given."""
    import numpy as np
    import torch

    h, c = zero_state()
    probs, states = [], []
    with torch.no_grad():
        for row in windows(audio):
            states.append((h, c))
            p, h, c = model(torch.from_numpy(row).reshape(1, WINDOW), h, c)
            probs.append(float(p.reshape(())))
    return np.asarray(probs, dtype=np.float32), states
