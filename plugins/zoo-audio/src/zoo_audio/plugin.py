"""The ``audio`` entry point: registers the pack's models from snapshots, torch-free."""

from __future__ import annotations

from collections.abc import Callable

from zoo import ModelSpec, hookimpl
from zoo_audio import crepe, ds_cnn, fc_autoencoder, vad, wav2letter


@hookimpl
def register_models(register: Callable[[ModelSpec], None]) -> None:
    register(ds_cnn.spec())
    register(wav2letter.spec())
    register(fc_autoencoder.spec())
    register(vad.spec())
    register(crepe.spec())
