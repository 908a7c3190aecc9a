"""The ``mediapipe`` entry point: registers the pack's models, torch- and numpy-free (the
files' digests are constants; no ``.tflite`` is read until a model is built)."""

from __future__ import annotations

from collections.abc import Callable

from zoo import ModelSpec, hookimpl
from zoo_mediapipe import blazeface, detectors, landmarks, selfie


@hookimpl
def register_models(register: Callable[[ModelSpec], None]) -> None:
    register(blazeface.spec())
    for segmenter in selfie.SELFIES.values():
        register(selfie.spec(segmenter))
    for detector in detectors.DETECTORS.values():
        register(detectors.spec(detector))
    for net in landmarks.LANDMARKS.values():
        register(landmarks.spec(net))
