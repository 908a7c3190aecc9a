"""The unit of work: one model, one weights variant, the targets of one TOSA
specification. Plain data that pickles cheaply, so any process can run it."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from zoo import _errors
from zoo._errors import BuildError, ZooError
from zoo.registry.catalog.plugin_loader import LoadOptions
from zoo.registry.npu.targets import PORTABLE, Target
from zoo.registry.request.io_boundary import DEFAULT, Boundary
from zoo.registry.request.keys import key_of
from zoo.registry.request.precision import DEFAULT as DEFAULT_PRECISION
from zoo.registry.request.precision import Precision
from zoo.registry.store.manifest import Manifest


@dataclass(frozen=True)
class UnitTarget:
    """One target of a unit, with the key the driver expects its artifact to have."""

    target: Target
    key_inputs: dict[str, Any]
    """Everything the driver's build key covers; the artifact must come back with these."""
    verify: bool = False
    """Run the numerical check (and record it in the manifest)."""
    bundle: bool = False
    """Also make the .bpte self-test (implies the numerical check)."""

    @property
    def key(self) -> str:
        return key_of(self.key_inputs)


@dataclass(frozen=True)
class BuildUnit:
    """What ``run_unit`` compiles in one lowering: ``model`` with ``weights``
    for every target in ``targets`` (all of one TOSA specification)."""

    model: str
    weights: str
    targets: tuple[UnitTarget, ...]
    plugins: LoadOptions = field(default_factory=LoadOptions)
    """How a fresh process finds ``model``: the same plugins the driver loaded."""
    calibration_dir: Path | None = None
    boundary: Boundary = DEFAULT
    """The I/O mode and layout, the same for every target of the unit."""
    precision: Precision = DEFAULT_PRECISION
    eval_dir: Path | None = None
    """The numerical check runs on these labelled class folders (``--eval-dir``)."""
    built_with: tuple[str, ...] = ()
    """Every target of this model built in the same run, this unit's and others'
    (recorded in the manifest; it does not change the bytes)."""
    offline: bool = False
    """Build without opening a connection (``--offline``): a plugin that downloads fails."""

    @property
    def label(self) -> str:
        return f"{self.model} → {', '.join(t.target.name for t in self.targets)}"

    @property
    def family(self) -> str:
        return self.targets[0].target.tosa_spec or PORTABLE


@dataclass(frozen=True)
class BuiltArtifact:
    """A target's artifact as the unit made it: the manifest and every file's bytes."""

    manifest: Manifest
    files: dict[str, bytes]


@dataclass(frozen=True)
class UnitFailure:
    """Why a target could not be built, as data: where it failed and what was said."""

    error: str
    """The ZooError subclass raised, e.g. ``BuildError``."""
    message: str
    stage: str | None = None
    operator: str | None = None
    pass_name: str | None = None

    @classmethod
    def of(cls, exc: ZooError) -> UnitFailure:
        return cls(
            type(exc).__name__, str(exc),
            getattr(exc, "stage", None), getattr(exc, "operator", None), getattr(exc, "pass_name", None),
        )

    def to_error(self, *, more: str = "") -> ZooError:
        """The error as the unit raised it (same type and message)."""
        kind = getattr(_errors, self.error, None)
        message = self.message + more
        if not (isinstance(kind, type) and issubclass(kind, ZooError)):
            return BuildError(message)
        if issubclass(kind, BuildError):
            return kind(message, stage=self.stage, operator=self.operator, pass_name=self.pass_name)
        if kind.__init__ is Exception.__init__:
            return kind(message)
        error = kind.__new__(kind)  # a constructor that builds its own message; keep the unit's
        Exception.__init__(error, message)
        return error


Outcome = BuiltArtifact | UnitFailure


@dataclass(frozen=True)
class UnitResult:
    """One outcome per target of ``unit``, in its order."""

    unit: BuildUnit
    outcomes: tuple[Outcome, ...]
    seconds: float = 0.0

    @property
    def failures(self) -> list[UnitFailure]:
        return [o for o in self.outcomes if isinstance(o, UnitFailure)]
