"""Data sets that more than one model pack reads, public API for plugins: ``from zoo.datasets import lfw_subset``.

Each reads a file another installed distribution ships, without importing it, checked against a
snapshot zoo ships (`zoo.PackageData`). Module level is torch- and numpy-free.
"""

from __future__ import annotations

from zoo.datasets import lfw_subset

__all__ = ["lfw_subset"]
