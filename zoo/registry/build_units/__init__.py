"""Builds as units of work: what one lowering makes, where it runs, and how
the driver accepts what comes back.

``unit`` is the plain data that crosses process (and, later, machine)
boundaries; ``run`` compiles a unit anywhere; ``executors`` map units to
results; ``accept`` checks a result before the cache stores it.
"""

from __future__ import annotations

from zoo.registry.build_units.unit import (
    BuildUnit,
    BuiltArtifact,
    UnitFailure,
    UnitResult,
    UnitTarget,
)

__all__ = ["BuildUnit", "BuiltArtifact", "UnitFailure", "UnitResult", "UnitTarget"]
