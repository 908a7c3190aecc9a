"""The ``zoo`` command line. Listing commands never import torch."""

from __future__ import annotations

from zoo.cli.app import main

__all__ = ["main"]
