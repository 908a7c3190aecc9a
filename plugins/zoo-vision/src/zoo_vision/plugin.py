"""The ``vision`` entry point: registers the pack's models, torch-free."""

from __future__ import annotations

from collections.abc import Callable

from zoo import ModelSpec, hookimpl
from zoo_vision import vww


@hookimpl
def register_models(register: Callable[[ModelSpec], None]) -> None:
    register(vww.spec())
