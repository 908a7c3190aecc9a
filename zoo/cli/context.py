"""What every command shares at run time: the ``Zoo`` of a click context, JSON output and notices."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import click

from zoo._text import printable

if TYPE_CHECKING:
    from zoo._api import Zoo


def _zoo(ctx: click.Context, *, offline: bool = False) -> Zoo:
    """The one ``Zoo`` of this invocation, made from the global options on first use;
    ``offline`` (a command's --offline) before its plugins load."""
    from zoo._api import Zoo, ZooOptions

    obj = ctx.find_root().obj
    if offline:
        obj["offline"] = True
    if "zoo" not in obj:
        obj["zoo"] = Zoo(ZooOptions(
            plugins=tuple(obj["plugins"]),
            model_files=tuple(obj["model_files"]),
            strict=obj["strict"],
            config_path=obj["config"],
            offline=obj.get("offline", False),
        ))
    zoo: Zoo = obj["zoo"]
    return zoo


def _dump(data: Any) -> None:
    click.echo(json.dumps(data, indent=2, sort_keys=True))


def notice(message: str) -> None:
    """One line for the user on stderr, as ``zoo: {message}``: the CLI's only channel for notices."""
    click.echo(f"zoo: {printable(message)}", err=True)


def echo(text: str, *, err: bool = False) -> None:
    """``click.echo`` for text that may hold what a remote, a manifest or a model file says:
    control characters are shown escaped, never sent to the terminal."""
    click.echo(printable(text), err=err)
