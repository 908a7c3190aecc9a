"""``--offline`` for the code zoo runs but does not own: a plugin's import, its
``identity()`` and its ``build`` (torchvision's ``load_state_dict_from_url``, timm's
Hub client) open no connection while zoo is offline.

Two layers, because neither covers everything alone:

- Python's audit events see every name lookup and connect that Python code makes, in
  any thread; a hook that raises stops the call before a byte leaves.
  A hook cannot be removed, so one is installed per process and acts only while some
  thread is inside :func:`no_network`: the whole process is offline meanwhile.
- A network namespace with no interfaces covers what Python does not see: native code
  that calls ``connect(2)`` itself, ``ctypes``, and child processes. Linux gives one to
  the calling thread (and the threads and children it starts) where the process may
  (``CAP_SYS_ADMIN``, as root), and to a whole worker process at its start where
  unprivileged user namespaces are allowed (:func:`isolate_process`). Elsewhere only
  the first layer holds, and ``docs/remotes.md`` (Offline) says so.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any

_EVENTS = frozenset({
    "socket.getaddrinfo", "socket.gethostbyname", "socket.gethostbyaddr", "socket.getnameinfo",
    "socket.connect", "socket.sendto", "socket.sendmsg",
})
_CLONE_NEWNET = 0x40000000
_CLONE_NEWUSER = 0x10000000


class _Isolated(threading.local):
    netns = False


_depth = 0
_isolated = _Isolated()
_installed = False
_lock = threading.Lock()


class OfflineConnection(OSError):
    """A connection refused by zoo's offline mode before it opened."""


def is_offline() -> bool:
    """Whether some thread of this process is inside :func:`no_network` now."""
    return _depth > 0


def _where(event: str, args: tuple[Any, ...]) -> str:
    if event == "socket.getaddrinfo" and args:
        return f"{args[0]}:{args[1]}" if len(args) > 1 and args[1] is not None else str(args[0])
    if event in ("socket.gethostbyname", "socket.gethostbyaddr") and args:
        return str(args[0])
    if event == "socket.getnameinfo" and args and isinstance(args[0], tuple):
        return ":".join(str(a) for a in args[0][:2])
    if len(args) > 1 and isinstance(args[1], tuple) and args[1]:
        return ":".join(str(a) for a in args[1][:2])
    return "the network"


def _refusal(where: str) -> str:
    return (
        f"zoo is offline (--offline, offline in zoo.toml or ZOO_OFFLINE) and refused a connection to "
        f"{where} before it opened. Fetch once online so that the download is cached, "
        "or choose weights that need no download (e.g. --weights random)"
    )


def _hook(event: str, args: tuple[Any, ...]) -> None:
    if _depth and event in _EVENTS:
        raise OfflineConnection(_refusal(_where(event, args)))


def _libc() -> Any:
    import ctypes  # only offline: a few milliseconds every command would pay otherwise

    return ctypes.CDLL(None, use_errno=True)


def _enter_namespace() -> Callable[[], None] | None:
    """This thread in a new, empty network namespace, and how to return it; None where
    the process may not (no ``CAP_SYS_ADMIN``), or not on Linux."""
    if not sys.platform.startswith("linux") or _isolated.netns:
        return None
    try:
        home = os.open("/proc/thread-self/ns/net", os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    libc = _libc()
    if libc.unshare(_CLONE_NEWNET) != 0:
        os.close(home)
        return None
    _isolated.netns = True

    def leave() -> None:
        try:
            if libc.setns(home, _CLONE_NEWNET) != 0:  # it entered, so it may leave: a kernel that says no is a bug
                raise OSError("cannot return to the network namespace it left")
        finally:
            os.close(home)
            _isolated.netns = False

    return leave


def isolate_process() -> bool:
    """Put this whole process, and every child it starts, in a network namespace of its
    own for good: for a worker process that only builds offline, called at its start,
    while it has one thread. As root the namespace alone; otherwise inside a user
    namespace that maps the same user and group, where the OS allows unprivileged ones.
    True if it is isolated."""
    if not sys.platform.startswith("linux"):
        return False
    libc = _libc()
    if libc.unshare(_CLONE_NEWNET) == 0:
        _isolated.netns = True  # the main thread's; threads started from here inherit it
        return True
    uid, gid = os.geteuid(), os.getegid()
    if libc.unshare(_CLONE_NEWUSER | _CLONE_NEWNET) != 0:
        return False
    try:
        for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"), ("gid_map", f"{gid} {gid} 1")):
            with open(f"/proc/self/{name}", "w") as f:
                f.write(text)
    except OSError:
        return False
    _isolated.netns = True
    return True


@contextlib.contextmanager
def no_network(offline: bool) -> Iterator[None]:
    """While inside, with ``offline``, every connection any thread of this process tries
    fails with :class:`OfflineConnection`, and so does native code and every child
    process this thread starts where a namespace can be had; without it, nothing changes."""
    global _depth, _installed
    if not offline:
        yield
        return
    with _lock:
        if not _installed:
            sys.addaudithook(_hook)
            _installed = True
        _depth += 1
    leave = _enter_namespace()
    try:
        yield
    finally:
        if leave is not None:
            leave()
        with _lock:
            _depth -= 1
