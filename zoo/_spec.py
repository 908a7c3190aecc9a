"""What a plugin declares: models and boards. Nothing here imports torch.

Factories (``build``, ``example_inputs``, dataset loaders, label loaders) are
called only by the pipeline, so they may import torch inside them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from zoo._errors import SpecError

_NAME = re.compile(r"^[a-z0-9][a-z0-9_.-]*$")
LAYOUTS = ("nchw", "nhwc")
"""How a 4-D image input lies in memory: planar (torch's default) or channels last."""
_DTYPES = ("float32", "float16", "int8", "uint8", "int16", "int32", "int64", "bool")

Sample = tuple[Any, ...]
"""One model call's positional inputs (torch tensors)."""


@dataclass(frozen=True)
class InputSpec:
    """One model input. ``range`` is the value range the model expects after
    preprocessing; ``mean``/``std`` document the normalisation applied to raw data."""

    name: str
    shape: tuple[int, ...]
    dtype: str = "float32"
    range: tuple[float, float] | None = None
    mean: tuple[float, ...] | None = None
    std: tuple[float, ...] | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "shape": list(self.shape),
            "dtype": self.dtype,
            "range": list(self.range) if self.range else None,
            "mean": list(self.mean) if self.mean else None,
            "std": list(self.std) if self.std else None,
        }


@dataclass(frozen=True)
class Dataset:
    """A lazily loaded set of samples.

    ``load()`` returns a list of samples; for evaluation sets each item is
    ``(sample, label)``. ``identity()`` must be cheap and torch-free: it names
    the exact data (e.g. a digest of the source files and the preprocessing),
    and goes into the build key.
    """

    size: int
    description: str
    load: Callable[[], list[Any]]
    identity: Callable[[], str]


@dataclass(frozen=True)
class WeightsVariant:
    """A named set of weights. ``identity`` names the exact bytes (a digest, or
    a seed for generated weights) and goes into the build key."""

    name: str
    description: str
    origin: str
    licence: str
    identity: Callable[[], str]
    reference_top1: float | None = None
    """The top-1 accuracy (percent) its publisher reports, e.g. on ImageNet-1k."""


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
        if not isinstance(self.name, str) or not _NAME.match(self.name):
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


@dataclass(frozen=True)
class ModelSpec:
    """Everything zoo needs to know about one model."""

    name: str
    version: str
    description: str
    task: str
    inputs: tuple[InputSpec, ...]
    build: Callable[[str], Any]
    """``build(weights_variant_name)`` returns an eval-mode ``torch.nn.Module``."""
    example_inputs: Callable[[], Sample]
    calibration: Dataset
    weights: tuple[WeightsVariant, ...]
    aliases: tuple[str, ...] = ()
    evaluation: Dataset | None = None
    labels: Sequence[str] | Callable[[], Sequence[str]] | None = None
    num_labels: int | None = None
    calibration_from_dir: Callable[[Path], Dataset] | None = None
    """Turns a user's folder (``--calibration-dir``) into a calibration set."""
    default_weights: str | None = None
    quantize: bool = True
    """False for models that are lowered in float (none of the built-ins)."""
    layouts: tuple[str, ...] = ("nchw",)
    """The input layouts the model can be built for (``--layout``), its default
    first. ``nhwc`` exports the model channels-last; the graph is the same."""
    source: str = field(default="", compare=False)
    """Set by the registry: the plugin that registered this spec."""
    distribution: str = field(default="", compare=False)
    """Set by the registry: ``NAME VERSION`` of the distribution that installed a
    third party's plugin; part of the build key. Empty for zoo's own models and
    for plugins that no distribution installed."""

    @property
    def weights_names(self) -> tuple[str, ...]:
        return tuple(w.name for w in self.weights)

    def weights_variant(self, name: str | None) -> WeightsVariant:
        wanted = name or self.default_weights or self.weights[0].name
        for w in self.weights:
            if w.name == wanted:
                return w
        raise SpecError(
            f"model {self.name!r} has no weights variant {wanted!r}; "
            f"choose one of: {', '.join(self.weights_names)}"
        )

    def load_labels(self) -> tuple[str, ...] | None:
        if self.labels is None:
            return None
        labels = self.labels() if callable(self.labels) else self.labels
        return tuple(str(x) for x in labels)

    def label_count(self) -> int | None:
        if self.num_labels is not None:
            return self.num_labels
        if self.labels is not None and not callable(self.labels):
            return len(self.labels)
        return None

    def validate(self) -> None:
        """Raise SpecError naming the first thing that is wrong."""
        problems = list(self._problems())
        if problems:
            raise SpecError(f"invalid ModelSpec {self.name!r}: " + "; ".join(problems))

    def _problems(self) -> list[str]:
        out: list[str] = []
        for n in (self.name, *self.aliases):
            if not isinstance(n, str) or not _NAME.match(n):
                out.append(f"name {n!r} must be lower-case letters, digits, '-', '_' or '.'")
        if not self.version:
            out.append("version is empty")
        if not self.inputs:
            out.append("declares no inputs")
        for i in self.inputs:
            if not all(isinstance(d, int) and d > 0 for d in i.shape):
                out.append(f"input {i.name!r} has a bad shape {i.shape!r}")
            if i.dtype not in _DTYPES:
                out.append(f"input {i.name!r} has unknown dtype {i.dtype!r}")
        for attr in ("build", "example_inputs"):
            if not callable(getattr(self, attr)):
                out.append(f"{attr} is not callable")
        if not isinstance(self.calibration, Dataset):
            out.append("calibration is not a zoo.Dataset")
        elif self.calibration.size < 1:
            out.append("calibration declares no samples")
        if not self.layouts or any(layout not in LAYOUTS for layout in self.layouts):
            out.append(f"layouts {self.layouts!r} must be one or more of {', '.join(LAYOUTS)}")
        if not self.weights:
            out.append("declares no weights variants")
        names = [w.name for w in self.weights]
        if len(set(names)) != len(names):
            out.append("weights variant names repeat")
        if self.default_weights is not None and self.default_weights not in names:
            out.append(f"default_weights {self.default_weights!r} is not a variant")
        return out

    def summary(self) -> dict[str, Any]:
        """JSON-friendly description; torch-free."""
        return {
            "name": self.name,
            "aliases": list(self.aliases),
            "version": self.version,
            "description": self.description,
            "task": self.task,
            "inputs": [i.to_json() for i in self.inputs],
            "weights": [
                {
                    "name": w.name,
                    "description": w.description,
                    "origin": w.origin,
                    "licence": w.licence,
                    "reference_top1": w.reference_top1,
                    "default": w.name == (self.default_weights or self.weights[0].name),
                }
                for w in self.weights
            ],
            "calibration": {
                "size": self.calibration.size,
                "description": self.calibration.description,
            },
            "evaluation": (
                {"size": self.evaluation.size, "description": self.evaluation.description}
                if self.evaluation
                else None
            ),
            "labels": self.label_count(),
            "calibration_dir": self.calibration_from_dir is not None,
            "layouts": list(self.layouts),
            "plugin": self.source,
        }
