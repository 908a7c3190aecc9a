"""Declared metrics in the numerical check: labels checked before anything is lowered,
float against the program in each metric's direction, and evaluator faults as BuildErrors."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path
from typing import Any

import pytest

from zoo import BuildError, Dataset, Metric, ModelSpec, f1_at, top1
from zoo.plugins import add
from zoo.registry import numerics
from zoo.registry.numerics.metrics import NO_LABELS, NO_METRICS, Outputs, measure

FAKE = Path(__file__).resolve().parents[1] / "data" / "fake_compile"


def labelled(items: list[tuple[Any, Any]]) -> Dataset:
    return Dataset(len(items), "hand-made", lambda: items, identity=lambda: "hand-made")


def kws(labels: list[Any], metrics: tuple[Metric, ...] | None = None) -> ModelSpec:
    """The plugin author's keyword spotter: not named a classifier anywhere, labelled data, top-1 declared."""
    import torch

    items = [((torch.zeros(add.SHAPE), torch.zeros(add.SHAPE)), label) for label in labels]
    spec = dataclasses.replace(
        add.spec(), name="kws", task="keyword-spotting", evaluation=labelled(items), num_labels=10,
        metrics=metrics if metrics is not None else (Metric("top1", top1, higher_is_better=True, max_drop=1.0),),
    )
    object.__setattr__(spec, "source", "my-models")
    return spec


@pytest.mark.stack
def test_names_as_labels_fail_before_anything_is_lowered(monkeypatch: pytest.MonkeyPatch) -> None:
    """issue 21 §1b: labels given as names failed only after a 13 s lowering, with int()'s raw message."""
    from zoo.registry.compile import lower, pipeline
    from zoo.registry.npu.targets import TargetTable

    def no_lowering(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("lowered before the evaluation labels were checked")

    monkeypatch.setattr(lower, "_lower_ethosu", no_lowering)
    target = TargetTable().resolve("u55-128")
    with pytest.raises(BuildError) as caught:
        pipeline.compile_targets(kws(["three", "seven"]), [target], verify=[True])
    text = str(caught.value)
    assert "metric 'top1' of plugin 'my-models'" in text and "model 'kws'" in text
    assert "item 0's label is 'three' (str) is not a class index" in text and "not a class name" in text


@pytest.mark.stack
def test_labels_beyond_the_classes_and_items_that_are_not_pairs() -> None:
    with pytest.raises(BuildError, match="beyond the model's 10 classes"):
        numerics.load_labelled(kws([1, 12]), None, "model 'kws'")
    spec = dataclasses.replace(kws([1]), evaluation=labelled([(1, 2, 3)]))  # type: ignore[list-item]
    with pytest.raises(BuildError, match=r"evaluation item 0 is a tuple of 3, not a \(sample, label\) pair"):
        numerics.load_labelled(spec, None, "model 'kws'")
    # A plain function has no label check: it reads whatever the plugin gives it.
    plain = kws(["three"], (Metric("mine", lambda outs, labels: 1.0, higher_is_better=True, max_drop=0.0),))
    assert numerics.load_labelled(plain, None, "w") is not None


def outs(*values: float) -> list[list[Any]]:
    import numpy as np

    return [[np.asarray([v])] for v in values]


def test_drop_is_judged_in_the_metric_direction() -> None:
    higher = Metric("f1", f1_at(0.5), higher_is_better=True, max_drop=0.2)
    lower = Metric("miss", lambda o, labels: 100.0 * sum(float(x[0][0]) < 0.5 for x in o) / len(o),
                   higher_is_better=False, max_drop=10.0, unit="%")
    seen = Outputs(float=outs(0.9, 0.8, 0.1), program=outs(0.9, 0.4, 0.1))
    record, checks = measure([higher, lower], seen, [1, 1, 0], [], "evaluation", "int8", "w", "p")
    f1, miss = record["metrics"]
    assert f1["float"] == 1.0 and f1["program"] == pytest.approx(2 / 3) and not f1["passed"]
    assert miss["float"] == pytest.approx(100 / 3) and miss["program"] == pytest.approx(200 / 3)
    assert miss["drop"] == pytest.approx(100 / 3) and not miss["passed"]  # a higher miss rate is worse
    assert [c["passed"] for c in checks] == [False, False]
    assert "33.33 pp drop" in checks[1]["detail"] and "lower is worse" not in checks[1]["detail"]
    better = Outputs(float=outs(0.9, 0.4, 0.1), program=outs(0.9, 0.8, 0.1))
    record, checks = measure([higher, lower], better, [1, 1, 0], [], "evaluation", "int8", "w", "p")
    assert all(m["passed"] for m in record["metrics"]) and "gain" in checks[0]["detail"]


def test_without_metrics_or_labels_the_record_says_so() -> None:
    assert measure([], Outputs([], []), [1], [], "evaluation", "int8", "w", "p") == ({"metrics": [], "metrics_note": NO_METRICS}, [])
    metric = Metric("top1", top1, higher_is_better=True, max_drop=1.0)
    assert measure([metric], Outputs([], []), None, [], "calibration", "int8", "w", "p")[0]["metrics_note"] == NO_LABELS


@pytest.mark.parametrize("value", [math.nan, math.inf])
def test_a_non_finite_figure_is_a_build_error_naming_plugin_model_and_metric(value: float) -> None:
    metric = Metric("auc", lambda o, labels: value, higher_is_better=True, max_drop=0.01)
    with pytest.raises(BuildError, match=rf"model 'kws': metric 'auc' of plugin 'my-models' returned {value}"):
        measure([metric], Outputs(outs(1.0), outs(1.0)), [1], [], "evaluation", "int8", "model 'kws'", "plugin 'my-models'")


@pytest.mark.stack
def test_the_portable_check_records_float_and_program_figures_and_an_evaluator_that_raises_fails() -> None:
    """Through check_portable on add's real .pte: the figures land in verification.numerics."""
    import torch

    spec = kws([0, 1])
    samples = [(torch.full(add.SHAPE, 0.25), torch.full(add.SHAPE, 0.5)), (torch.full(add.SHAPE, -1.0), torch.zeros(add.SHAPE))]
    data = numerics.EvalSet(samples=samples, labels=[1, 0], name="evaluation", identity="x")
    positive = Metric("positive", lambda o, labels: 100.0 * sum((float(x[0].flatten()[0]) > 0) == bool(y) for x, y in zip(o, labels, strict=True)) / len(o),
                      higher_is_better=True, max_drop=0.0, unit="%", description="sign of x + y")
    pte = (FAKE / "add_portable.pte").read_bytes()
    result = numerics.check_portable(pte=pte, float_model=spec.build("none"), judging=numerics.Judging(data, (positive,)))
    (m,) = result.record["metrics"]
    assert (m["float"], m["program"], m["program_kind"], m["passed"]) == (100.0, 100.0, "portable", True)
    assert any(c["name"] == "metric positive" for c in result.record["checks"])

    def broken(o: Any, labels: Any) -> float:
        return 1 / 0

    with pytest.raises(BuildError, match=r"metric 'boom' of plugin 'my-models' raised ZeroDivisionError on the float outputs"):
        numerics.check_portable(pte=pte, float_model=spec.build("none"), judging=numerics.Judging(
            data, (Metric("boom", broken, higher_is_better=True, max_drop=0.0),), where="model 'kws'", plugin=numerics.owner(spec)))


def test_the_spec_refuses_a_reference_for_an_undeclared_metric_and_repeated_names() -> None:
    from zoo import SpecError, WeightsVariant

    metric = Metric("top1", top1, higher_is_better=True, max_drop=1.0)
    variant = WeightsVariant("w", "d", "o", "MIT", lambda: "id", reference={"auc": 0.9})
    with pytest.raises(SpecError, match="weights 'w' declares a reference for 'auc', which is not one of its metrics \\(top1\\)"):
        dataclasses.replace(add.spec(), metrics=(metric,), weights=(variant,)).validate()
    with pytest.raises(SpecError, match="metric names repeat"):
        dataclasses.replace(add.spec(), metrics=(metric, metric)).validate()
    with pytest.raises(SpecError, match="metrics must be a tuple"):
        dataclasses.replace(add.spec(), metrics=[metric]).validate()  # type: ignore[arg-type]
    # reference_top1 stays: it is reference["top1"], in percent, whether or not top-1 is declared.
    assert WeightsVariant("w", "d", "o", "MIT", lambda: "id", reference_top1=71.9).references() == {"top1": 71.9}


def _eval_set(n: int, labelled: bool) -> Any:
    import torch

    from zoo.registry.numerics.data import EvalSet

    samples = [(torch.full((2,), float(i)),) for i in range(n)]
    return EvalSet(samples, [i % 2 for i in range(n)] if labelled else None, "evaluation", "id")


@pytest.mark.stack
def test_the_checkers_sample_loop_keeps_what_both_need() -> None:
    """host.check_portable and reference.check_ethosu run their samples through metrics.run_samples:
    each sample in order, the agreement tally, the outputs for the metrics (only with labels)
    and the bundle's first cases, cloned."""
    import torch

    from zoo.registry.numerics.metrics import Judging, Ran, run_samples

    data = _eval_set(5, labelled=True)
    done: list[tuple[int, int]] = []
    order: list[int] = []

    def step(i: int, sample: Any) -> Ran:
        order.append(i)
        out = [sample[0] * 2]
        return Ran(out, [sample[0].flip(0)], sample, out)

    top = (Metric("top1", top1, higher_is_better=True, max_drop=1.0),)
    kept = run_samples(Judging(data, top, agreement=True, progress=lambda stage, i, n: done.append((i, n))), step)
    assert order == [0, 1, 2, 3, 4]
    assert done == [(i, 5) for i in range(1, 6)]
    assert kept.seen is not None and len(kept.seen.program) == len(kept.seen.float) == 5
    assert kept.tally.compared + kept.tally.constant == 5
    assert len(kept.cases) == 3
    inputs, outputs = kept.cases[2]
    assert torch.equal(outputs[0], torch.full((2,), 4.0)) and inputs[0] is not data.samples[2][0]  # cloned
    plain = run_samples(Judging(_eval_set(2, labelled=False), top), step)
    assert plain.seen is None and plain.tally.compared == plain.tally.constant == 0
