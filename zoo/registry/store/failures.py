"""A build that failed, as data: what was built, where it failed and what was said.

A failure at a stage that depends only on the build key's inputs (export,
quantization, lowering, Vela, serialization) comes out the same on every try,
so the cache keeps it under that key: ``zoo fetch`` reports it without
compiling again, and ``zoo build`` tries again. A failure that depends on the
machine (weights that could not be downloaded, calibration data that could
not be read) is never recorded.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, fields
from typing import Any

from zoo._errors import BuildError

SCHEMA = 1

# Never recorded: stages whose outcome the machine can change (a download, a data
# file), and the numerical check, whose data (--eval-dir) is not in the key.
_TRANSIENT_STAGES = frozenset({"load", "calibration data loading", "numerical check", "verify"})


def recordable(stage: str | None) -> bool:
    """Whether a failure at ``stage`` comes out the same on every try of the same key."""
    return stage is not None and stage not in _TRANSIENT_STAGES and not stage.startswith("calibration sample")


@dataclass(frozen=True)
class Failure:
    """One model that did not build for one target."""

    model: str
    target: str
    weights: str
    key: str
    error: str
    """The error's type, e.g. ``BuildError``."""
    message: str
    stage: str | None = None
    operator: str | None = None
    pass_name: str | None = None
    tools: dict[str, str | None] | None = None
    """The tool versions of the build key: a new release tries again."""
    variant: dict[str, Any] | None = None
    """What else the key names: ``target`` (Vela options, SRAM budget) and ``io``, as the key has them,
    and ``precision`` when it is not int8."""
    recorded: bool = False
    """Whether the cache keeps it (``fetch`` reports it without compiling again)."""
    source: str = "build"
    """``build`` (just now) or ``cache`` (recorded by an earlier build)."""

    @property
    def where(self) -> str:
        """The stage, and the operator or pass, e.g. ``lower (aten.hardswish)``."""
        culprit = self.operator or self.pass_name
        stage = self.stage or "build"
        return f"{stage} ({culprit})" if culprit else stage

    def to_error(self, *, more: str = "") -> BuildError:
        hint = " ('zoo build' tries again)" if self.source == "cache" else ""
        prefix = "an earlier build failed and was recorded: " if self.source == "cache" else ""
        return BuildError(
            f"{prefix}{self.message}{hint}{more}", stage=self.stage, operator=self.operator, pass_name=self.pass_name
        )

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        del data["source"]
        return {"schema": SCHEMA, **data}

    def dumps(self) -> str:
        return json.dumps(self.to_json(), indent=2, sort_keys=True) + "\n"

    @classmethod
    def loads(cls, text: str) -> Failure:
        """Parse a recorded failure; ValueError says what is wrong with it."""
        data = json.loads(text)
        if not isinstance(data, dict) or data.get("schema") != SCHEMA:
            raise ValueError(f"not a failure record of schema {SCHEMA}")
        known = {f.name for f in fields(cls)} - {"source"}
        for name in ("model", "target", "weights", "key", "error", "message"):
            if not isinstance(data.get(name), str):
                raise ValueError(f"{name} must be a string")
        for name in ("stage", "operator", "pass_name"):
            if data.get(name) is not None and not isinstance(data[name], str):
                raise ValueError(f"{name} must be a string or null")
        if data.get("variant") is not None and not isinstance(data["variant"], dict):
            raise ValueError("variant must be an object or null")
        if not isinstance(data.get("recorded", False), bool):
            raise ValueError("recorded must be true or false")
        tools = data.get("tools")
        if tools is not None and not (
            isinstance(tools, dict) and all(isinstance(v, (str, type(None))) for v in tools.values())
        ):
            raise ValueError("tools must map names to versions")
        return cls(**{k: v for k, v in data.items() if k in known}, source="cache")


def first_error(failures: list[Failure]) -> BuildError:
    """The first failure as an error, counting the others."""
    others = len({f.key for f in failures}) - 1
    return failures[0].to_error(more=f" ({others} more build(s) failed too)" if others else "")
