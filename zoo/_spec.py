"""What a plugin declares: models and boards. Nothing here imports torch.

Factories (``build``, ``example_inputs``, dataset loaders, label loaders) are
called only by the pipeline, so they may import torch inside them.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from zoo._board import NAME as _NAME
from zoo._errors import SpecError
from zoo._metric import Metric
from zoo._recipe import Recipe
from zoo._sensor import SensorInput

_IDENTIFIER = re.compile(r"^[a-z][a-z0-9_]*\Z")
LAYOUTS = ("nchw", "nhwc")
"""How a 4-D image input lies in memory: planar (torch's default) or channels last."""
_DTYPES = ("float32", "float16", "int8", "uint8", "int16", "int32", "int64", "bool")

Sample = tuple[Any, ...]
"""One model call's positional inputs (torch tensors)."""


@dataclass(frozen=True)
class InputSpec:
    """One model input. ``range`` is the value range the model expects after
    preprocessing; ``mean``/``std`` the normalisation applied to raw data scaled to
    [0, 1] (``(x - mean) / std``), one value per index of ``normalise_axis``."""

    name: str
    shape: tuple[int, ...]
    dtype: str = "float32"
    range: tuple[float, float] | None = None
    mean: tuple[float, ...] | None = None
    std: tuple[float, ...] | None = None
    normalise_axis: int = 1
    """The axis ``mean`` and ``std`` run along: 1, an image's channels (the default), or
    another, e.g. the last axis of (1, 1, frames, coefficients) for per-coefficient MFCC
    statistics. ``--io pixels`` runs the normalisation on the NPU along this axis."""
    sensor: SensorInput | None = None
    """A sensor's window, rate, axes and normalisation: firmware gets ``<array>_normalise_input<i>``."""

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": self.name,
            "shape": list(self.shape),
            "dtype": self.dtype,
            "range": list(self.range) if self.range else None,
            "mean": list(self.mean) if self.mean else None,
            "std": list(self.std) if self.std else None,
        }
        if self.normalise_axis != 1:  # absent for the default, so earlier specs keep their JSON
            out["normalise_axis"] = self.normalise_axis
        if self.sensor is not None:  # absent when undeclared, so earlier specs keep their JSON (and keys)
            out["sensor"] = self.sensor.to_json()
        return out

    def problems(self) -> list[str]:
        out = []
        if not all(isinstance(d, int) and d > 0 for d in self.shape):
            out.append(f"input {self.name!r} has a bad shape {self.shape!r}")
        if self.dtype not in _DTYPES:
            out.append(f"input {self.name!r} has unknown dtype {self.dtype!r}")
        if (self.mean is None) != (self.std is None):
            out.append(f"input {self.name!r} declares {'mean' if self.std is None else 'std'} without "
                       f"{'std' if self.std is None else 'mean'}")
        elif self.mean is not None and self.std is not None:
            rank = len(self.shape)
            if not -rank <= self.normalise_axis < rank:
                out.append(f"input {self.name!r}: normalise_axis {self.normalise_axis} is not an axis of its "
                           f"shape {list(self.shape)}")
            else:
                size = self.shape[self.normalise_axis]
                if len(self.mean) != size or len(self.std) != size:
                    out.append(f"input {self.name!r}: mean and std need one value per index of axis "
                               f"{self.normalise_axis} ({size}), got {len(self.mean)} and {len(self.std)}")
            if any(not s > 0 for s in self.std):
                out.append(f"input {self.name!r}: std must be positive, got {list(self.std)}")
        for what in ("range", "mean", "std"):
            values = getattr(self, what)
            if values is not None and not all(isinstance(v, (int, float)) and math.isfinite(v) for v in values):
                out.append(f"input {self.name!r}: {what} must hold finite numbers, got {list(values)} "
                           "(a non-finite constant zeroes a channel, and is not JSON)")
        if self.sensor is not None:
            out += ([f"input {self.name!r}: sensor: {p}" for p in self.sensor.problems(self.shape)]
                    if isinstance(self.sensor, SensorInput) else [f"input {self.name!r}: sensor is not a zoo.SensorInput"])
        return out


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
    """The top-1 accuracy its publisher reports, in percent (e.g. 71.9 on ImageNet-1k).
    Kept for compatibility: it is ``reference["top1"]`` when that is not given."""
    reference: dict[str, float] = field(default_factory=dict)
    """Declared figures by metric name, each in that metric's own unit, e.g.
    ``{"top1": 97.6}``: shown beside the figures ``--verify`` measures."""

    def references(self) -> dict[str, float]:
        """The declared figures, ``reference_top1`` included as ``top1`` (percent, as
        zoo's ``top1`` evaluator measures it) unless ``reference`` names ``top1`` itself."""
        out = {"top1": float(self.reference_top1)} if self.reference_top1 is not None else {}
        return {**out, **{str(k): float(v) for k, v in self.reference.items()}}


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
    """Labelled data: ``load()`` returns ``(sample, label)`` items; ``metrics`` are measured on it."""
    metrics: tuple[Metric, ...] = ()
    """How the model is judged. None: the elementwise checks alone judge it."""
    labels: Sequence[str] | Callable[[], Sequence[str]] | None = None
    num_labels: int | None = None
    calibration_from_dir: Callable[[Path], Dataset] | None = None
    """Turns a user's folder (``--calibration-dir``) into a calibration set."""
    default_weights: str | None = None
    quantize: bool = True
    """False for models that are lowered in float (none of the built-ins)."""
    recipes: Mapping[str, Recipe] = field(default_factory=dict)
    """Named quantization recipes, taken with ``--precision NAME`` (``zoo._recipe``)."""
    training: Dataset | None = None
    """Inputs for ``--qat``, apart from ``evaluation``; samples, as ``calibration``'s. QAT matches
    the float model's own outputs on them, so they need no labels."""
    sensor_evaluation: Dataset | None = None
    """``evaluation`` as the device's sensor gives it, for ``zoo firmware``: the same ``(sample, label)``
    items in the same order, each input that declares a ``sensor`` as its raw window before the declared
    normalisation, a (steps, channels) array in the declared units, sample by sample; other inputs as
    ``evaluation`` has them. The firmware feeds these through ``<array>_normalise_input<i>``."""
    layouts: tuple[str, ...] = ("nchw",)
    """The input layouts the model can be built for (``--layout``), its default
    first. ``nhwc`` exports the model channels-last; the graph is the same."""
    axes: str = "nchw"
    """What the axes of the model's 4-D inputs and outputs are, as its module takes and gives
    them: ``nchw`` (torch's convention) or ``nhwc`` (a TFLite file's images, ``zoo.read_tflite``).
    The manifest records it, and the summary and the C header name each tensor's layout in memory
    from it and the tensor's dim order. ``--layout nhwc`` makes an ``nchw`` model's input
    channels-last, so an ``nhwc`` model does not list it in ``layouts``."""
    outputs: tuple[str, ...] = ()
    """The outputs' names, in the model's order, e.g. ``("boxes", "scores")``: the manifest
    and the C header use them (``MODEL_PTE_OUTPUT1_NAME``, ``MODEL_PTE_OUTPUT_SCORES``).
    Undeclared outputs are ``output0``, ``output1`` …"""
    code: tuple[Callable[..., Any], ...] = ()
    """More of the model's code for the build key than ``build`` and ``example_inputs``' modules,
    e.g. the network's factory and the data's loader when ``build`` is a shared helper's: each
    one's module and the modules of its package it reaches are hashed (``code_identity``)."""
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
            out += i.problems()
        input_names = [i.name for i in self.inputs]
        if len(set(input_names)) != len(input_names):
            out.append(f"input names repeat: {input_names} (the header indexes inputs by name)")
        if not isinstance(self.outputs, tuple) or not all(isinstance(o, str) and _IDENTIFIER.match(o)
                                                          for o in self.outputs):
            out.append(f"outputs {self.outputs!r} must be a tuple of names of lower-case letters, digits and '_', "
                       "each starting with a letter (they become C macro names)")
        elif len(set(self.outputs)) != len(self.outputs):
            out.append(f"output names repeat: {list(self.outputs)}")
        for attr in ("build", "example_inputs"):
            if not callable(getattr(self, attr)):
                out.append(f"{attr} is not callable")
        if not isinstance(self.code, tuple) or not all(callable(c) for c in self.code):
            out.append(f"code {self.code!r} must be a tuple of functions")
        if not isinstance(self.calibration, Dataset):
            out.append("calibration is not a zoo.Dataset")
        elif self.calibration.size < 1:
            out.append("calibration declares no samples")
        if not self.layouts or any(layout not in LAYOUTS for layout in self.layouts):
            out.append(f"layouts {self.layouts!r} must be one or more of {', '.join(LAYOUTS)}")
        if self.axes not in LAYOUTS:
            out.append(f"axes {self.axes!r} must be one of {', '.join(LAYOUTS)}")
        elif self.axes == "nhwc" and "nhwc" in self.layouts:
            out.append("axes 'nhwc': the images are channels-last already, so layouts must not offer 'nhwc' "
                       "(--layout nhwc makes an NCHW input channels-last); declare layouts=('nchw',)")
        if not self.weights:
            out.append("declares no weights variants")
        names = [w.name for w in self.weights]
        if len(set(names)) != len(names):
            out.append("weights variant names repeat")
        if self.default_weights is not None and self.default_weights not in names:
            out.append(f"default_weights {self.default_weights!r} is not a variant")
        out += self._metric_problems()
        for name, recipe in dict(self.recipes).items():
            if not isinstance(name, str) or not _NAME.match(name) or name in ("int8", "a16w8"):
                out.append(f"recipe name {name!r} must be lower-case letters, digits, '-', '_' or '.', and not a precision")
            out += ([f"recipe {name!r}: {p}" for p in recipe.problems()] if isinstance(recipe, Recipe)
                    else [f"recipe {name!r} is not a zoo.Recipe"])
        return out

    def _metric_problems(self) -> list[str]:
        if not isinstance(self.metrics, tuple):
            return [f"metrics must be a tuple of zoo.Metric, got {type(self.metrics).__name__}"]
        out: list[str] = []
        for m in self.metrics:
            out += m.problems() if isinstance(m, Metric) else [f"metrics holds {m!r}, not a zoo.Metric"]
        declared = [m.name for m in self.metrics if isinstance(m, Metric)]
        if len(set(declared)) != len(declared):
            out.append("metric names repeat")
        for kind in ("evaluation", "training", "sensor_evaluation"):
            if getattr(self, kind) is not None and not isinstance(getattr(self, kind), Dataset):
                out.append(f"{kind} is not a zoo.Dataset")
        if self.sensor_evaluation is not None and not any(isinstance(i, InputSpec) and i.sensor for i in self.inputs):
            out.append("sensor_evaluation is given, but no input declares a sensor (InputSpec.sensor) to take it")
        for w in self.weights:
            if not isinstance(w, WeightsVariant):
                continue
            for key, value in w.reference.items():
                if key not in declared:
                    out.append(f"weights {w.name!r} declares a reference for {key!r}, which is not one of its "
                               f"metrics ({', '.join(declared) or 'none declared'})")
                elif isinstance(value, bool) or not isinstance(value, (int, float)):
                    out.append(f"weights {w.name!r}: reference[{key!r}] must be a number, got {value!r}")
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
            "outputs": list(self.outputs),
            "weights": [
                {
                    "name": w.name,
                    "description": w.description,
                    "origin": w.origin,
                    "licence": w.licence,
                    "reference_top1": w.reference_top1,
                    "reference": w.references(),
                    "default": w.name == (self.default_weights or self.weights[0].name),
                }
                for w in self.weights
            ],
            "calibration": {
                "size": self.calibration.size,
                "description": self.calibration.description,
            },
            "evaluation": {"size": self.evaluation.size, "description": self.evaluation.description} if self.evaluation else None,
            **({"training": {"size": self.training.size, "description": self.training.description}} if self.training else {}),
            **({"sensor_evaluation": {"size": self.sensor_evaluation.size,
                                      "description": self.sensor_evaluation.description}}
               if self.sensor_evaluation else {}),
            "metrics": [m.to_json() for m in self.metrics],
            "labels": self.label_count(),
            "calibration_dir": self.calibration_from_dir is not None,
            "layouts": list(self.layouts),
            "plugin": self.source,
        }
