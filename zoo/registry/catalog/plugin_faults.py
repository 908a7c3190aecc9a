"""A plugin's faults, named for its author: why a plugin registered nothing, the
traceback behind a one-line error under ``--debug``, and what goes wrong in the
remote factories it registered. Torch-free, like the loader that uses it."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from zoo._env import flag
from zoo._errors import PluginError, ZooError

if TYPE_CHECKING:
    from zoo.registry.remotes import Remote, RemoteFactory


def error_text(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    first = text[0] if text else ""
    return f"{type(exc).__name__}: {first}" if first else type(exc).__name__


def why_empty(plugin: object, hooks: Sequence[str], implemented: bool) -> str:
    """Why a plugin that loaded without error registered nothing: the likely slip."""
    defined = [h for h in hooks if callable(getattr(plugin, h, None))]
    near = sorted(n for n in dir(plugin) if n.startswith("register") and n not in hooks)
    if implemented:
        return "its hooks ran but called register() for nothing"
    if defined:
        return f"{', '.join(defined)} {'is' if len(defined) == 1 else 'are'} not marked @zoo.hookimpl"
    if near:
        return f"it defines {', '.join(near)}, not one of the hooks {', '.join(hooks)}"
    return f"it defines none of the hooks {', '.join(hooks)}"


def debug_traceback(label: str, exc: BaseException, stream: TextIO) -> None:
    """With ``--debug`` (``ZOO_DEBUG=1``): the plugin's own traceback, where one line is not enough."""
    if flag("ZOO_DEBUG"):
        import traceback

        print(f"zoo: debug: traceback of {label}:", file=stream)
        traceback.print_exception(exc, file=stream)


def checked_factory(plugin: str, dist: str | None, scheme: str, factory: RemoteFactory) -> RemoteFactory:
    """``factory``, with what goes wrong in it named after its plugin and hook."""

    def make(url: str, base: Path | None) -> Remote:
        from zoo.registry.remotes import Remote

        try:
            remote = factory(url, base)
        except ZooError:
            raise
        except Exception as exc:
            raise PluginError(
                plugin, dist, f"the {scheme}:// factory of hook register_remotes raised {error_text(exc)}"
            ) from exc
        if not isinstance(remote, Remote):
            raise PluginError(
                plugin, dist,
                f"the {scheme}:// factory of hook register_remotes returned {type(remote).__name__}, not a zoo.Remote",
            )
        return remote

    return make
