"""The ``zoo`` command line. Listing commands never import torch.

``run`` is the console script: it answers a repeated light command from its
snapshot (``zoo.cli.snapshot``) before click or any plugin is imported.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from zoo.cli.app import main

__all__ = ["main", "run"]


def run() -> None:
    from zoo import _interrupt

    _interrupt.install()  # first: a Ctrl-C at any later moment ends zoo with 130
    try:
        from zoo.cli import snapshot

        snapshot.run(_main, sys.argv[1:])
    except KeyboardInterrupt:
        _interrupt.end()
    except BaseException:
        # After a Ctrl-C, whatever ended the command (click's "Aborted!" and 1 outside a
        # command, an error that a library made of the interrupt) is the interrupt.
        if not _interrupt.received():
            raise
    if _interrupt.received():
        _interrupt.end()


def _main() -> None:
    from zoo.cli.app import main

    main()


def __getattr__(name: str) -> Any:
    if name == "main":
        from zoo.cli.app import main

        return main
    raise AttributeError(f"module 'zoo.cli' has no attribute {name!r}")
