"""The ``vision`` entry point: registers the pack's models, torch-free."""

from __future__ import annotations

from collections.abc import Callable

from zoo import ModelSpec, hookimpl
from zoo_vision import segmentation, transformers


@hookimpl
def register_models(register: Callable[[ModelSpec], None]) -> None:
    for spec in (*segmentation.specs(), *transformers.specs()):
        register(spec)
