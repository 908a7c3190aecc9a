"""A board preset a plugin or zoo.toml declares: an Ethos-U accelerator and the Vela options it is wired
for. What a model is lives in ``zoo._spec``; a board is the other side, where it runs."""

from __future__ import annotations

import re
from dataclasses import dataclass

from zoo._errors import SpecError

__all__ = ["NAME", "Board"]

NAME = re.compile(r"^[a-z0-9][a-z0-9_.-]*\Z")
"""The names zoo takes: of models, boards, weights variants, metrics and outputs."""


@dataclass(frozen=True)
class Board:
    """A board preset: a name for an Ethos-U accelerator and the Vela options it
    is wired for. ``target`` is an accelerator name or alias, e.g.
    ``"ethos-u55-128"`` or ``"u55-128"``; ``None`` options take the accelerator's
    defaults. zoo.toml's ``[boards.NAME]``, the built-in presets and plugins'
    ``register_boards`` all give boards this way."""

    name: str
    target: str
    system_config: str | None = None
    memory_mode: str | None = None
    sram_bytes: int | None = None
    """On-chip SRAM: the default ``--sram-budget`` of builds for this board."""
    description: str = ""

    def validate(self) -> None:
        """Raise SpecError naming what is wrong with the fields' types. Whether
        the target and options exist is the target table's check."""
        problems: list[str] = []
        if not isinstance(self.name, str) or not NAME.match(self.name):
            problems.append(f"name {self.name!r} must be lower-case letters, digits, '-', '_' or '.'")
        if not isinstance(self.target, str) or not self.target.strip():
            problems.append(f"target must be an accelerator name such as 'ethos-u55-128', got {self.target!r}")
        for attr in ("system_config", "memory_mode"):
            value = getattr(self, attr)
            if value is not None and not isinstance(value, str):
                problems.append(f"{attr} must be a string or None, got {value!r}")
        sram = self.sram_bytes
        if sram is not None and (isinstance(sram, bool) or not isinstance(sram, int) or sram <= 0):
            problems.append(f"sram_bytes must be a positive number of bytes or None, got {sram!r}")
        if not isinstance(self.description, str):
            problems.append(f"description must be a string, got {self.description!r}")
        if problems:
            raise SpecError(f"invalid Board {self.name!r}: " + "; ".join(problems))
