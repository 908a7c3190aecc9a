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
    from zoo.cli import snapshot

    snapshot.run(_main, sys.argv[1:])


def _main() -> None:
    from zoo.cli.app import main

    main()


def __getattr__(name: str) -> Any:
    if name == "main":
        from zoo.cli.app import main

        return main
    raise AttributeError(f"module 'zoo.cli' has no attribute {name!r}")
