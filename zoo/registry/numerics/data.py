"""The data a numerical check runs on, and the identity its recorded results hold for.

Torch-free at import: the fetcher calls ``data_identity`` on every cache hit.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from zoo._spec import Dataset, ModelSpec, Sample

# Bump when the check changes what it measures or accepts: recorded results
# from another version are run again by --verify.
CHECK_VERSION = "7"
# 3: declared metrics (ModelSpec.metrics) replace the top-1 of models whose task named "classif".
# 4: a float comparison that fake-quant fails too, and the lowering no worse, is left to the declared metrics.
# 5: an int8 output past the noise floor passes when it is no noisier against float than fake-quant (as at 16 bits),
#    and a float comparison fake-quant fails too is left to the metrics on the same condition.
# 6: Ethos-U builds add the "NPU program" level (npu_program.py): Vela's program on the command-stream
#    interpreter, bit for bit against the TOSA reference model; a difference fails the check.
# 7: an output whose count, shape or dtype differs from the float model's fails the check (issue 55); the
#    level also compares every convolution's weights, biases and scales in Vela's program with the TOSA
#    graph's constants (npu_constants.py), and a build whose samples call no delegate is skipped, not passed.
MAX_SAMPLES = 1000


@dataclass
class EvalSet:
    samples: list[Sample]
    labels: list[Any] | None
    name: str
    """``evaluation`` (the model's labelled set), ``eval-dir`` (the caller's) or ``calibration``."""
    identity: str = ""
    """The dataset's identity: the recorded results hold only for this data."""


def labelled_source(spec: ModelSpec, evaluation: Dataset | None) -> tuple[str, Dataset] | None:
    """The labelled set the check runs on: the caller's (``--eval-dir``), else the model's own."""
    if evaluation is not None:
        return "eval-dir", evaluation
    return ("evaluation", spec.evaluation) if spec.evaluation is not None else None


def data_identity(spec: ModelSpec, calibration: Dataset, evaluation: Dataset | None = None) -> str:
    """Names the data the check runs on, torch-free: the recorded results hold only for it.
    ``evaluation`` (the caller's labelled set, ``--eval-dir``) replaces the model's own."""
    kind, dataset = labelled_source(spec, evaluation) or ("calibration", calibration)
    # The declared metrics too: results recorded before a plugin declared one lack its figures.
    judged = ";metrics=" + ",".join(f"{m.name}:{m.max_drop:g}" for m in spec.metrics) if spec.metrics else ""
    return f"{kind}:{dataset.identity()};max={MAX_SAMPLES};check={CHECK_VERSION}{judged}"


def evaluation_set(
    spec: ModelSpec, calibration: Dataset, loaded: list[Sample] | None = None, evaluation: Dataset | None = None,
    labelled: tuple[str, list[tuple[Any, Any]]] | None = None,
) -> EvalSet:
    """The caller's labelled ``evaluation`` set if given, else the model's own if it has
    one, else the calibration samples (``loaded``, if the caller has them already).
    ``labelled`` is the labelled set's name and items, if the caller has loaded and checked them."""
    identity = data_identity(spec, calibration, evaluation)
    source = labelled_source(spec, evaluation)
    if source is not None:
        name, items = labelled or (source[0], list(source[1].load())[:MAX_SAMPLES])
        samples = [_as_sample(s) for s, _ in items]
        return EvalSet(samples, [label for _, label in items], name, identity)
    samples = loaded if loaded is not None else [_as_sample(s) for s in calibration.load()]
    return EvalSet(samples[:MAX_SAMPLES], None, "calibration", identity)


def declares_top1(spec: ModelSpec) -> bool:
    """Whether the model declares zoo's ``top1``: then the check also reports how often
    the program's top-1 agrees with float's, which needs no labels."""
    from zoo.registry.evaluators.classification import top1

    return any(m.fn is top1 for m in spec.metrics)


def _as_sample(value: Any) -> Sample:
    return tuple(value) if isinstance(value, (tuple, list)) else (value,)


def flat_outputs(value: Any) -> list[Any]:
    """A model's outputs as a flat list of tensors, however they are nested."""
    from torch.utils import _pytree

    leaves: list[Any] = _pytree.tree_flatten(value)[0]
    return leaves
