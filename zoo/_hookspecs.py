"""The hooks a zoo plugin can implement."""

from __future__ import annotations

from collections.abc import Callable

import pluggy

from zoo._spec import ModelSpec

PROJECT = "zoo"
ENTRY_POINT_GROUP = "zoo"

hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


@hookspec
def register_models(register: Callable[[ModelSpec], None]) -> None:
    """Describe models by calling ``register(ModelSpec(...))`` once per model.

    Keep this cheap: it runs on every zoo command. Import torch only inside
    the spec's factories, never at module level or here.
    """
