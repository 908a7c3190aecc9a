"""The ``vision`` entry point: registers the pack's models, torch-free."""

from __future__ import annotations

from collections.abc import Callable

from zoo import ModelSpec, hookimpl


@hookimpl
def register_models(register: Callable[[ModelSpec], None]) -> None:
    specs: tuple[ModelSpec, ...] = ()
    for spec in specs:
        register(spec)
