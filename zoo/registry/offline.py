"""``--offline`` for the code zoo runs but does not own: a plugin's ``build`` that
downloads its weights (torchvision's ``load_state_dict_from_url``, timm's Hub
client) opens no connection while a unit builds offline.

Python's audit events see every name lookup and connect, whichever library makes
them; a hook that raises stops the call before a byte leaves. A hook cannot be
removed, so one is installed per process and acts only inside :func:`no_network`.
"""

from __future__ import annotations

import contextlib
import sys
import threading
from collections.abc import Iterator
from typing import Any

_EVENTS = frozenset({"socket.getaddrinfo", "socket.connect", "socket.sendto", "socket.sendmsg"})


class _Depth(threading.local):
    offline = 0


_state = _Depth()
_installed = False
_lock = threading.Lock()


class OfflineConnection(OSError):
    """A connection refused by zoo's offline mode before it opened."""


def _where(event: str, args: tuple[Any, ...]) -> str:
    if event == "socket.getaddrinfo" and args:
        return f"{args[0]}:{args[1]}" if len(args) > 1 and args[1] is not None else str(args[0])
    if len(args) > 1 and isinstance(args[1], tuple) and args[1]:
        return ":".join(str(a) for a in args[1][:2])
    return "the network"


def _hook(event: str, args: tuple[Any, ...]) -> None:
    if event in _EVENTS and _state.offline:
        raise OfflineConnection(
            f"zoo is offline (--offline, offline in zoo.toml or ZOO_OFFLINE) and refused a connection to "
            f"{_where(event, args)} before it opened. Fetch once online so that the download is cached, "
            "or choose weights that need no download (e.g. --weights random)"
        )


@contextlib.contextmanager
def no_network(offline: bool) -> Iterator[None]:
    """While inside, with ``offline``, every connection this thread tries fails with
    :class:`OfflineConnection`; without it, nothing changes."""
    global _installed
    if not offline:
        yield
        return
    with _lock:
        if not _installed:
            sys.addaudithook(_hook)
            _installed = True
    _state.offline = _state.offline + 1
    try:
        yield
    finally:
        _state.offline -= 1
