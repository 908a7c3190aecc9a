"""Writes zoo_audio/data/vad/silero_vad_16k.safetensors: the 16 kHz weights of the
TorchScript model in the silero-vad wheel (MIT), under silero_net's parameter names.

Why not the wheel's own ``silero_vad_16k.safetensors``: in silero-vad 6.2.3 that file
holds other weights than the model the package runs. Its TorchScript model and all
its ONNX models agree with one another within 5e-7 on every chunk, and the
safetensors file differs from them by up to 0.24 in probability (docs/vad.md).
The weights extracted here reproduce the TorchScript model exactly.

Run: python plugins/zoo-audio/scripts/extract_silero_weights.py   (needs silero-vad==6.2.3)
"""

from __future__ import annotations

import hashlib
import importlib.util
import sys
from pathlib import Path

VERSION = "6.2.3"
OUT = Path(__file__).resolve().parents[1] / "src" / "zoo_audio" / "data" / "vad" / "silero_vad_16k.safetensors"

# TorchScript name → silero_net name.
NAMES = {
    "stft.forward_basis_buffer": "stft_conv.weight",
    **{f"encoder.{i}.reparam_conv.{t}": f"conv{i + 1}.{t}" for i in range(4) for t in ("weight", "bias")},
    **{f"decoder.rnn.{t}": f"lstm_cell.{t}" for t in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")},
    "decoder.decoder.2.weight": "final_conv.weight",
    "decoder.decoder.2.bias": "final_conv.bias",
}


def jit_path() -> Path:
    found = importlib.util.find_spec("silero_vad")
    if found is None or not found.submodule_search_locations:
        sys.exit(f"silero-vad is not installed: pip install --no-deps silero-vad=={VERSION}")
    return Path(next(iter(found.submodule_search_locations))) / "data" / "silero_vad.jit"


def main() -> None:
    from importlib.metadata import version

    import torch
    from safetensors.torch import save_file

    if version("silero-vad") != VERSION:
        sys.exit(f"silero-vad {version('silero-vad')} is installed; this script reads {VERSION}")
    source = jit_path()
    model = torch.jit.load(str(source), map_location="cpu")  # type: ignore[no-untyped-call]
    state = model._model.state_dict()
    if set(state) != set(NAMES):
        sys.exit(f"the 16 kHz model's tensors are not the expected ones: {sorted(set(state) ^ set(NAMES))}")
    tensors = {NAMES[k]: v.detach().to(torch.float32).contiguous().clone() for k, v in state.items()}
    digest = hashlib.sha256(source.read_bytes()).hexdigest()
    # One key: safetensors writes a metadata map in no fixed order, and the bytes must not vary.
    metadata = {"origin": f"silero-vad {VERSION} (MIT), silero_vad/data/silero_vad.jit sha256:{digest}, module _model"}
    staged = OUT.with_suffix(".tmp")
    save_file(tensors, str(staged), metadata=metadata)
    staged.chmod(0o644)
    staged.replace(OUT)
    print(f"{OUT}: {len(tensors)} tensors, sha256 {hashlib.sha256(OUT.read_bytes()).hexdigest()}; "
          f"from silero_vad.jit sha256 {digest}")


if __name__ == "__main__":
    main()
