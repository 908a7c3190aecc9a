"""A Ctrl-C that the command line remembers, so that no library can lose it.

Python turns SIGINT into a KeyboardInterrupt raised wherever the main thread is. Raised
while a C extension initialises, it does not always come out as one: ``import torch``
interrupted at the wrong moment fails with numpy's ``RuntimeError: CPU dispatcher tracer
already initlized`` or an ``AttributeError``, or drops it and goes on without numpy. zoo
took the first two for a plugin's (or a ``--model-file``'s) failure, skipped it and went
on; after the third, it went on too, and ran a model file, which may take minutes.

:func:`install` (the command line's, never a library user's) makes the handler remember
the interrupt as well as raise it. The plugin loader calls :func:`check` after each
plugin and before a model file runs, and the command line when it exits: a Ctrl-C that
was turned into another error, or swallowed, ends zoo there, with 130.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
import sys
import threading
from types import FrameType
from typing import NoReturn

EXIT_CODE = 130
"""128 + SIGINT, as shells and CI runners expect of a program stopped by Ctrl-C."""

_received = False
_said = False


def _handler(signum: int, frame: FrameType | None) -> None:
    global _received
    _received = True
    raise KeyboardInterrupt


def install() -> None:
    """Remember every Ctrl-C from now on. Only in the main thread, and only over Python's own
    handler: a SIGINT that the shell ignores (a background job) stays ignored."""
    if threading.current_thread() is threading.main_thread() and \
            signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, _handler)


def received() -> bool:
    """Whether a Ctrl-C arrived since :func:`install`."""
    return _received


def check(cause: BaseException | None = None) -> None:
    """Raise KeyboardInterrupt if a Ctrl-C arrived: ``cause`` (what it became) is not the
    failure of the code that raised it, and nothing may run on after it."""
    if _received:
        raise KeyboardInterrupt from cause


def _installed() -> bool:
    return threading.current_thread() is threading.main_thread() and signal.getsignal(signal.SIGINT) is _handler


def _say() -> None:
    """``zoo: interrupted``, once; a second Ctrl-C is ignored from here on in the command line,
    so that one arriving while zoo winds down cannot interrupt that."""
    global _said
    if _installed():
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    if _said:
        return
    _said = True
    with contextlib.suppress(OSError, ValueError):
        sys.stderr.write("zoo: interrupted\n")
        sys.stderr.flush()


def exit_interrupted() -> NoReturn:
    """Say so and exit with 130."""
    _say()
    sys.exit(EXIT_CODE)


def end() -> NoReturn:
    """The command line's last step after a Ctrl-C: the line, the atexit handlers, and the
    process gone with 130. Not through the interpreter's own exit, which after a Ctrl-C
    during torch's import sometimes killed the process by SIGINT after ``sys.exit(130)``
    (Python does so when a KeyboardInterrupt ended code it ran for C, as pybind11 runs it),
    and which waits for every thread that is not a daemon."""
    _say()
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError, AttributeError):
            stream.flush()
    os._exit(EXIT_CODE)
