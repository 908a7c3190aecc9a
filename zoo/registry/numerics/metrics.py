"""A model's declared metrics (``ModelSpec.metrics``) on its labelled data.

Two jobs: check the labelled items before anything is lowered (a label in the
wrong format must fail in a second, not after the lowering), and measure each
metric on the float model's outputs and on the program's, judged against the
drop the model allows, in the metric's own unit and direction.

Torch-free at import; the evaluators import numpy inside their functions.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from zoo._errors import BuildError
from zoo._metric import Metric
from zoo._spec import Dataset, ModelSpec, Sample
from zoo.registry.evaluators.classification import top1
from zoo.registry.events import Progress
from zoo.registry.numerics.compare import BUNDLE_CASES, Tally, agreement_record
from zoo.registry.numerics.data import (
    MAX_SAMPLES,
    EvalSet,
    declares_top1,
    evaluation_set,
    labelled_source,
)

NO_METRICS = "the model declares no metrics: judged by the elementwise checks alone"
NO_LABELS = "no labelled data (the model has no evaluation set and no --eval-dir was given): judged by the elementwise checks alone"


def owner(spec: ModelSpec) -> str:
    return f"plugin {spec.source!r}" if spec.source else "its plugin"


@dataclass
class Labelled:
    name: str
    """``evaluation`` (the model's own) or ``eval-dir`` (the caller's)."""
    items: list[tuple[Any, Any]]


@dataclass(frozen=True)
class Judging:
    """What a numerical check runs on and how it is judged, the same for both checkers:
    the data, the model's declared metrics, whether top-1 agreement with float is counted,
    the build and plugin that messages name, and who hears of each sample done."""

    data: EvalSet
    metrics: Sequence[Metric] = ()
    agreement: bool = False
    where: str = ""
    plugin: str = "its plugin"
    progress: Progress | None = None

    @classmethod
    def of(cls, spec: ModelSpec, calibration: Dataset, *, loaded: list[Sample] | None = None,
           evaluation: Dataset | None = None, labelled: Labelled | None = None, where: str = "",
           progress: Progress | None = None) -> Judging:
        """A build's judging: its evaluation set (``data.evaluation_set``), the metrics the spec
        declares, top-1 agreement where it declares zoo's ``top1``, its plugin by name."""
        data = evaluation_set(spec, calibration, loaded, evaluation,
                              labelled=(labelled.name, labelled.items) if labelled else None)
        return cls(data, spec.metrics, declares_top1(spec), where, owner(spec), progress)


def load_labelled(spec: ModelSpec, evaluation: Dataset | None, where: str) -> Labelled | None:
    """The labelled items the check will run on, each checked: a ``(sample, label)``
    pair whose label every declared metric's evaluator can read. None if there are none."""
    source = labelled_source(spec, evaluation)
    if source is None:
        return None
    name, dataset = source
    items = list(dataset.load())[:MAX_SAMPLES]
    if not items:
        raise BuildError(f"{where}: the {name} set is empty ({owner(spec)}); give it labelled items or drop it")
    for n, item in enumerate(items):
        if not isinstance(item, (tuple, list)) or len(item) != 2:
            raise BuildError(
                f"{where}: {name} item {n} is a {type(item).__name__}"
                f"{f' of {len(item)}' if isinstance(item, (tuple, list)) else ''}, not a (sample, label) pair "
                f"({owner(spec)}); an evaluation Dataset's load() returns [(sample, label), ...]"
            )
    labels = [label for _, label in items]
    for metric in spec.metrics:
        _check_labels(spec, metric, labels, name, where)
    return Labelled(name, [(s, label) for s, label in items])


def _check_labels(spec: ModelSpec, metric: Metric, labels: Sequence[Any], name: str, where: str) -> None:
    check = getattr(metric.fn, "check_label", None)
    if check is None:  # a plain function: it reads whatever the plugin gives it
        return
    wanted = getattr(metric.fn, "label_format", "")
    for n, label in enumerate(labels):
        problem = check(label)
        if problem:
            raise BuildError(
                f"{where}: metric {metric.name!r} of {owner(spec)} reads {wanted}, but {name} item {n}'s label "
                f"is {problem}; fix the labels the evaluation Dataset returns"
            )
    count = spec.label_count()
    if count and metric.fn is top1:
        beyond = [int(label) for label in labels if int(label) >= count]
        if beyond:
            raise BuildError(
                f"{where}: metric {metric.name!r}: {len(beyond)} {name} label(s) (e.g. {beyond[0]}) are beyond "
                f"the model's {count} classes ({owner(spec)}); the labels are class indices from 0"
            )


def evaluate(metric: Metric, outputs: Sequence[Sequence[Any]], labels: Sequence[Any],
              samples: Sequence[Sample], where: str, of: str, plugin: str,
              reference: Sequence[Sequence[Any]]) -> float:
    try:
        args: list[Any] = [outputs, labels]
        if getattr(metric.fn, "wants_samples", False):
            args.append(samples)
        if getattr(metric.fn, "wants_float", False):
            value = metric.fn(*args, reference=reference)  # type: ignore[call-arg]
        else:
            value = metric.fn(*args)
        value = float(value)
    except Exception as e:
        raise BuildError(
            f"{where}: metric {metric.name!r} of {plugin} raised {type(e).__name__} on the {of} outputs: {e}; "
            "fix the evaluator or its labels", stage="numerical check",
        ) from e
    if not math.isfinite(value):
        raise BuildError(
            f"{where}: metric {metric.name!r} of {plugin} returned {value} on the {of} outputs; an evaluator "
            "must return a finite number", stage="numerical check",
        )
    return value


@dataclass
class Outputs:
    """What the check saw, kept for the metrics: each sample's outputs, float and program."""

    float: list[list[Any]]
    program: list[list[Any]]


def measure(metrics: Sequence[Metric], seen: Outputs, labels: Sequence[Any] | None, samples: Sequence[Sample],
            data_name: str, program_kind: str, where: str, plugin: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The ``metrics`` record and its checks (one per metric, failing when the program
    is worse than float by more than the metric's ``max_drop``)."""
    if not metrics:
        return {"metrics": [], "metrics_note": NO_METRICS}, []
    if labels is None:
        return {"metrics": [], "metrics_note": NO_LABELS}, []
    records, checks = [], []
    for metric in metrics:
        f = evaluate(metric, seen.float, labels, samples, where, "float", plugin, seen.float)
        p = evaluate(metric, seen.program, labels, samples, where, program_kind, plugin, seen.float)
        drop = metric.drop(f, p)
        passed = drop <= metric.max_drop + 1e-9
        unit = metric.unit_text
        records.append({
            **metric.to_json(), "dataset": data_name, "samples": len(labels), "float": f, "program": p,
            "program_kind": program_kind, "drop": drop, "passed": passed,
        })
        worse = "lower" if metric.higher_is_better else "higher"
        checks.append({"name": f"metric {metric.name}", "passed": passed, "detail": (
            f"{metric.name} on {len(labels)} {data_name} samples: float {f:.4g}{unit}, {program_kind} {p:.4g}{unit} "
            f"({abs(drop):.4g}{metric.drop_unit} {'drop' if drop >= 0 else 'gain'}; {worse} is worse; "
            f"allowed drop {metric.max_drop:g}{metric.drop_unit})"
        )})
    return {"metrics": records}, checks


@dataclass(frozen=True)
class Ran:
    """One sample through a check: the program's and float's outputs, as compared, and the
    program's own inputs and outputs, which the bundle keeps as a test case."""

    program: list[Any]
    float: list[Any]
    case_inputs: Sample
    case_outputs: list[Any]


@dataclass
class Kept:
    """What both checkers keep of their samples besides their own comparisons."""

    tally: Tally
    """How often the program's top-1 agreed with float's (with ``agreement``)."""
    seen: Outputs | None
    """Every sample's outputs, for the declared metrics; None without metrics or labels."""
    cases: list[tuple[Sample, list[Any]]]
    """The first ``BUNDLE_CASES`` samples' program inputs and outputs, cloned."""
    samples: int = 0
    """How many samples ran."""
    checks: list[dict[str, Any]] = field(default_factory=list)
    """The checker's own checks, one per output; ``conclude`` adds the metrics' after them."""
    outputs: list[dict[str, Any]] = field(default_factory=list)
    """The checker's record of each output."""

    def opening(self, method: str, data: EvalSet) -> dict[str, Any]:
        """The first keys of a numerics record: how the program ran, on what data, how many samples."""
        return {"method": method, "dataset": data.name, "data_identity": data.identity, "samples": self.samples}


def run_samples(judging: Judging, step: Callable[[int, Sample], Ran]) -> Kept:
    """The loop of both checkers: ``step(i, sample)`` runs the program and float on each sample
    of the judged data in order and compares them its own way; what both keep is kept here, and
    the judging's ``progress`` hears of each sample done."""
    data, progress = judging.data, judging.progress
    kept = Kept(Tally(), Outputs([], []) if judging.metrics and data.labels is not None else None, [], len(data.samples))
    for i, sample in enumerate(data.samples):
        ran = step(i, sample)
        if judging.agreement:
            kept.tally.add(ran.program, ran.float)
        if kept.seen is not None:
            kept.seen.float.append(ran.float)
            kept.seen.program.append(ran.program)
        if len(kept.cases) < BUNDLE_CASES:
            kept.cases.append((tuple(t.clone() for t in ran.case_inputs), [o.clone() for o in ran.case_outputs]))
        if progress:
            progress("verify", i + 1, len(data.samples))
    return kept


def conclude(record: dict[str, Any], kept: Kept, judging: Judging, program_kind: str, started: float) -> None:
    """End a numerics record as both checkers do: the top-1 agreement, the metrics (when
    outputs were kept against labels), every check (``kept.checks`` then the metrics'),
    the verdict and the time taken."""
    record.update(agreement_record(kept.tally))
    seen, data = kept.seen, judging.data
    judged, metric_checks = measure(judging.metrics, seen or Outputs([], []), data.labels if seen is not None else None,
                                    data.samples, data.name, program_kind, judging.where, judging.plugin)
    record.update(judged)
    checks = kept.checks + metric_checks
    record["checks"] = checks
    record["passed"] = all(c["passed"] for c in checks)
    record["seconds"] = round(time.perf_counter() - started, 2)
