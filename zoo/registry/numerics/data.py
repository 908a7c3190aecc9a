"""The data a numerical check runs on, and the identity its recorded results hold for.

Torch-free at import: the fetcher calls ``data_identity`` on every cache hit.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from zoo._spec import Dataset, ModelSpec, Sample

# Bump when the check changes what it measures or accepts: recorded results
# from another version are run again by --verify.
CHECK_VERSION = "2"
MAX_SAMPLES = 1000


@dataclass
class EvalSet:
    samples: list[Sample]
    labels: list[int] | None
    name: str
    """``evaluation`` (the model's labelled set), ``eval-dir`` (the caller's) or ``calibration``."""
    identity: str = ""
    """The dataset's identity: the recorded results hold only for this data."""


def _labelled(spec: ModelSpec, evaluation: Dataset | None) -> tuple[str, Dataset] | None:
    if evaluation is not None:
        return "eval-dir", evaluation
    return ("evaluation", spec.evaluation) if spec.evaluation is not None else None


def data_identity(spec: ModelSpec, calibration: Dataset, evaluation: Dataset | None = None) -> str:
    """Names the data the check runs on, torch-free: the recorded results hold only for it.
    ``evaluation`` (the caller's labelled set, ``--eval-dir``) replaces the model's own."""
    kind, dataset = _labelled(spec, evaluation) or ("calibration", calibration)
    return f"{kind}:{dataset.identity()};max={MAX_SAMPLES};check={CHECK_VERSION}"


def evaluation_set(
    spec: ModelSpec, calibration: Dataset, loaded: list[Sample] | None = None, evaluation: Dataset | None = None
) -> EvalSet:
    """The caller's labelled ``evaluation`` set if given, else the model's own if it has
    one, else the calibration samples (``loaded``, if the caller has them already)."""
    identity = data_identity(spec, calibration, evaluation)
    labelled = _labelled(spec, evaluation)
    if labelled is not None:
        name, dataset = labelled
        items = dataset.load()[:MAX_SAMPLES]
        samples = [_as_sample(s) for s, _ in items]
        return EvalSet(samples, [int(label) for _, label in items], name, identity)
    samples = loaded if loaded is not None else [_as_sample(s) for s in calibration.load()]
    return EvalSet(samples[:MAX_SAMPLES], None, "calibration", identity)


def is_classifier(spec: ModelSpec) -> bool:
    return "classif" in spec.task


def _as_sample(value: Any) -> Sample:
    return tuple(value) if isinstance(value, (tuple, list)) else (value,)


def flat_outputs(value: Any) -> list[Any]:
    """A model's outputs as a flat list of tensors, however they are nested."""
    from torch.utils import _pytree

    leaves: list[Any] = _pytree.tree_flatten(value)[0]
    return leaves
