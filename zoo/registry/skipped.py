"""A request another shard builds (``--shard K/N``): an outcome that is neither
an artifact nor a failure. Apart from ``build_units/shard.py`` so that a fetch that
does not shard never imports the build units."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Skipped:
    """A request another shard builds (``--shard K/N``): neither built nor failed."""

    model: str
    target: str
    shard: tuple[int, int]

    def to_json(self) -> dict[str, Any]:
        return {"model": self.model, "target": self.target, "shard": f"{self.shard[0]}/{self.shard[1]}"}
