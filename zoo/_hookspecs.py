"""The hooks a zoo plugin can implement."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pluggy

from zoo._board import Board
from zoo._spec import ModelSpec

# ``(url, base) -> zoo.Remote``; spelled without the engine's types, which live a layer above.
RemoteFactory = Callable[[str, Path | None], object]

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


@hookspec
def register_boards(register: Callable[[Board], None]) -> None:
    """Describe boards by calling ``register(Board(...))`` once per board.

    A board may not take the name or alias of an accelerator, ``portable``,
    or a built-in board's name. A ``[boards.NAME]`` in zoo.toml replaces the
    plugin's board of that name.
    """


@hookspec
def register_remotes(register: Callable[[str, RemoteFactory], None]) -> None:
    """Add kinds of remote by calling ``register(scheme, factory)``:
    ``factory(url, base)`` returns a ``zoo.Remote`` for URLs ``scheme://…``
    (``base`` is the folder relative paths are taken from, or None).

    The built-in schemes (``hf``, ``http``, ``https``, ``file``) cannot be
    taken. Import the remote's client inside the factory, not here.
    """
