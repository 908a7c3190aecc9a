"""What loading a plugin costs every light command: its import and registration
time, and the heavy libraries it pulled in. ``zoo list`` loads every plugin, so a
pack that imports torch at module level makes it take seconds instead of 0.1 s."""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Iterator
from typing import Protocol, TextIO

from zoo._text import printable

HEAVY = ("torch", "torchvision", "torchaudio", "executorch", "timm", "tensorflow", "jax", "sklearn", "scipy",
         "pandas", "numpy", "PIL", "cv2")
"""Libraries a plugin should import inside its build functions, not at registration."""
SLOW_SECONDS = 1.0
"""Above this, a plugin is named as slow even if it imported none of :data:`HEAVY`."""


class Measured(Protocol):
    seconds: float | None
    heavy: list[str]

    @property
    def kind(self) -> str: ...

    @property
    def status(self) -> str: ...

    @property
    def label(self) -> str: ...


@contextlib.contextmanager
def measured(status: Measured, stderr: TextIO) -> Iterator[None]:
    """Record on ``status`` how long the block took and which heavy libraries it imported,
    and name an installed or ``-p`` plugin that loaded fine but slows every command down."""
    before = set(sys.modules)
    started = time.perf_counter()
    try:
        yield
    finally:
        status.seconds = round(time.perf_counter() - started, 3)
        status.heavy = [m for m in HEAVY if m in sys.modules and m not in before]
    slow = warning(status) if status.kind in ("entry point", "module") and status.status == "ok" else None
    if slow:
        print(printable(f"zoo: warning: {status.label} {slow}"), file=stderr)


def warning(status: Measured) -> str | None:
    """Why this plugin slows down every command, or None."""
    if status.heavy:
        return (f"imported {', '.join(status.heavy)} while registering ({status.seconds:.2f} s), which every zoo "
                "command pays for, 'zoo list' included: import them inside the functions that build or load data")
    if status.seconds is not None and status.seconds > SLOW_SECONDS:
        return (f"took {status.seconds:.2f} s to import and register, which every zoo command pays for: "
                "read what registration needs from a snapshot, and load the rest when a model is built")
    return None
