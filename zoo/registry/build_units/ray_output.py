"""What a Ray task sends back (``TaskOutput``), and the driver's judgement of it
before ``accept`` sees any artifact. Pure data, no Ray: ``ray_executor.py`` runs
the tasks.

- **The environment.** A worker with other tool versions than the driver (or
  another zoo) would build artifacts with another key. The task compares its
  versions with the driver's before it builds, and the driver compares the tool
  versions each returned manifest carries with the ones the key was made with;
  a mismatch fails the unit's targets with a message naming the node, the tool
  and both versions.
- **Failures.** A task whose ``run_unit`` raised (a bug: it turns every
  ZooError into data) fails every target of its unit.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from zoo.registry.build_units.unit import BuildUnit, BuiltArtifact, Outcome, UnitFailure, UnitResult
from zoo.registry.request.keys import tool_versions

SHIP_HINT = ("ship the same environment to every node: a Ray runtime_env (pip or conda with the same pins) "
             "or a container image with the driver's zoo and toolchain")


@dataclass(frozen=True)
class Node:
    """Where a task ran."""

    id: str
    ip: str

    def __str__(self) -> str:
        return f"ray node {self.ip} ({self.id[:8]})"


@dataclass(frozen=True)
class TaskOutput:
    """What a task sends back: where it ran, the versions it found there, and the
    unit's result (None: not built, because those versions differ from the driver's,
    or because ``run_unit`` raised ``error``)."""

    node: Node
    environment: dict[str, str | None]
    result: UnitResult | None
    error: str | None = None
    """``ValueError: ...``: what ``run_unit`` raised besides a ZooError (a bug)."""


def environment() -> dict[str, str | None]:
    """zoo's version and the tool versions the build key covers, in this process."""
    from zoo._version import __version__

    return {"ethosu-zoo": __version__, **tool_versions()}


def differences(here: Mapping[str, str | None], there: Mapping[str, str | None]) -> list[str]:
    """``ethos-u-vela 4.0.0 where the driver has 5.1.0`` for each version that differs."""
    return [
        f"{name} {there.get(name) or 'not installed'} where the driver has {here.get(name) or 'not installed'}"
        for name in sorted(set(here) | set(there)) if here.get(name) != there.get(name)
    ]


def mismatch(unit: BuildUnit, node: Node, problems: list[str]) -> UnitFailure:
    return UnitFailure(
        "BuildError",
        f"{unit.label}: {node} has {'; '.join(problems)}, so its builds would not match this driver's keys and are "
        f"refused; {SHIP_HINT}",
    )


def checked(output: TaskOutput, unit: BuildUnit, driver: Mapping[str, str | None]) -> UnitResult:
    """``output``'s result, with a failure in place of every target if its worker had
    other versions than ``driver`` (the driver's ``environment()``) or ``run_unit``
    raised, and of each target whose manifest carries other tool versions than its
    key was made with."""
    problems = differences(driver, output.environment)
    if problems:
        return failed(unit, mismatch(unit, output.node, problems).message)
    if output.error is not None or output.result is None:
        return failed(unit, f"{unit.label}: the build raised {output.error or 'nothing, and returned nothing'} on "
                             f"{output.node}; that node's Ray worker log has the traceback: please report it")
    outcomes: list[Outcome] = []
    for outcome, wanted in zip(output.result.outcomes, unit.targets, strict=True):
        if isinstance(outcome, BuiltArtifact):
            tools = differences(wanted.key_inputs.get("tools") or {}, outcome.manifest.tools)
            if tools:
                outcome = mismatch(unit, output.node, [f"built {wanted.target.name} with {t}" for t in tools])
        outcomes.append(outcome)
    return UnitResult(unit, tuple(outcomes), output.result.seconds)


def failed(unit: BuildUnit, message: str) -> UnitResult:
    """Every target of ``unit`` failed with ``message``."""
    failure = UnitFailure("BuildError", message)
    return UnitResult(unit, tuple(failure for _ in unit.targets))


def first_line(text: object) -> str:
    lines = str(text).strip().splitlines()
    return lines[0] if lines else ""
