"""The manifest that travels with every artifact: what went in, what came out."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import asdict, dataclass, field
from typing import Any

SCHEMA = 1


@dataclass(frozen=True)
class FileRecord:
    name: str
    kind: str
    size: int
    sha256: str


@dataclass
class Manifest:
    key: str
    model: str
    target: str
    key_inputs: dict[str, Any]
    files: list[FileRecord]
    vela: dict[str, Any] | None = None
    delegation: dict[str, Any] = field(default_factory=dict)
    cpu_operators: list[str] = field(default_factory=list)
    calibration: dict[str, Any] | None = None
    labels: list[str] | None = None
    header: dict[str, Any] = field(default_factory=dict)
    build: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    verification: dict[str, Any] | None = None
    """``structure`` (checks at build time), ``numerics`` (None unless built with
    --verify or --bundle) and ``bundle`` (the .bpte's test cases and tolerance)."""
    memory_fit: dict[str, Any] | None = None
    """For a target with an SRAM budget (``--sram-budget`` or a board's SRAM): the
    budget, the Vela options tried and the one chosen, and whether it fits."""
    schema: int = SCHEMA

    @property
    def vela_flags(self) -> tuple[str, ...]:
        """The target's extra Vela flags plus those chosen to fit its SRAM budget."""
        chosen = (self.memory_fit or {}).get("selected_flags") or ()
        return (*((self.key_inputs.get("target") or {}).get("extra_flags") or ()), *chosen)

    def file(self, kind: str) -> FileRecord | None:
        return next((f for f in self.files if f.kind == kind), None)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    def dumps(self) -> str:
        return json.dumps(self.to_json(), indent=2, sort_keys=True) + "\n"

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Manifest:
        if not isinstance(data, dict) or data.get("schema") != SCHEMA:
            raise ValueError(f"unsupported manifest schema {data.get('schema') if isinstance(data, dict) else data!r}")
        # Fields a later zoo added are left out rather than making the entry unreadable.
        known = {f.name for f in dataclasses.fields(cls)}
        values = {k: v for k, v in data.items() if k in known}
        values["files"] = [FileRecord(**f) for f in data["files"]]
        return cls(**values)

    @classmethod
    def loads(cls, text: str) -> Manifest:
        return cls.from_json(json.loads(text))
