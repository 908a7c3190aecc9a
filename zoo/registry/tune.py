"""Find a recipe (``zoo tune``): which modules need 16-bit activations, with fake quantization only.

First each module with weights, and the operators of the model's own ``forward`` (``"."``),
is promoted to a16w8 alone, in an otherwise int8 model, and the
model's outputs are compared with float on its evaluation data: the gain in SQNR over int8 is the
module's sensitivity. Then the most sensitive modules are promoted, one more at a time, until the
model meets its goal: its declared metrics within their allowed drop where the weights are trained,
else an output SQNR within ``SQNR_GOAL_MARGIN_DB`` of a16w8 for the whole model. Every run is
seeded and in zoo's reproducible numerics, so the same inputs give the same recipe. Lowering,
the numerical check and Vela come after, through the normal build (``zoo._api.tuning``).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from zoo._errors import UsageError
from zoo._metric import max_drop_problem
from zoo._recipe import ROOT, Recipe
from zoo._spec import ModelSpec
from zoo.registry.npu.targets import Target
from zoo.registry.report import GENERATED
from zoo.registry.request.precision import Precision

SQNR_GOAL_MARGIN_DB = 1.0
"""Random weights: a recipe is good enough within this of a16w8 for the whole model."""


@dataclass(frozen=True)
class Trial:
    """One recipe, fake-quantized and run on the evaluation data."""

    label: str
    recipe: Recipe
    sqnr_db: tuple[float | None, ...]
    """Per output, against float over every sample."""
    metrics: dict[str, float] = field(default_factory=dict)
    meets: bool = False

    @property
    def worst_db(self) -> float:
        known = [x for x in self.sqnr_db if x is not None]
        return min(known) if known else math.inf


@dataclass(frozen=True)
class Search:
    model: str
    weights: str
    target: str
    goal: str
    """What "meets" means, in words."""
    float_metrics: dict[str, float]
    int8: Trial
    a16w8: Trial
    layers: tuple[Trial, ...]
    """One module at a16w8 each, most sensitive first."""
    steps: tuple[Trial, ...]
    """The greedy promotions, in order; the last meets the goal unless none could."""
    seconds: float

    @property
    def chosen(self) -> Trial:
        for t in (self.int8, *self.steps):
            if t.meets:
                return t
        return self.a16w8

    def to_json(self) -> dict[str, Any]:
        def trial(t: Trial) -> dict[str, Any]:
            return {"label": t.label, "recipe": t.recipe.to_json(), "sqnr_db": list(t.sqnr_db),
                    "metrics": t.metrics, "meets": t.meets}

        return {"model": self.model, "weights": self.weights, "target": self.target, "goal": self.goal,
                "float_metrics": self.float_metrics, "int8": trial(self.int8), "a16w8": trial(self.a16w8),
                "layers": [trial(t) for t in self.layers], "steps": [trial(t) for t in self.steps],
                "chosen": trial(self.chosen), "seconds": self.seconds}


def search(spec: ModelSpec, target: Target, weights: str | None, *, max_layers: int = 8,
           max_drop: dict[str, float] | None = None, progress: Callable[[str], None] | None = None) -> Search:
    """``max_drop`` replaces metrics' allowed drops by name, e.g. ``{"f1": 0.01}``."""
    unknown = sorted(set(max_drop or {}) - {m.name for m in spec.metrics})
    if unknown:
        raise UsageError(f"--max-drop {', '.join(unknown)}: {spec.name!r} declares no such metric; it declares "
                         f"{', '.join(m.name for m in spec.metrics) or 'none'}")
    for metric, drop in (max_drop or {}).items():
        if (problem := max_drop_problem(drop)) is not None:
            raise UsageError(f"--max-drop {metric}: {problem}")
    if max_drop:
        spec = replace(spec, metrics=tuple(replace(m, max_drop=max_drop.get(m.name, m.max_drop)) for m in spec.metrics))
    from zoo.registry.request import reproducible
    reproducible.pin()
    import torch

    variant = spec.weights_variant(weights)
    where = f"model {spec.name!r} (weights {variant.name!r}) for target {target.name!r}"
    started = time.perf_counter()
    with reproducible.numerics(torch, where), torch.random.fork_rng(devices=[]), torch.no_grad():
        torch.manual_seed(0)
        return _search(spec, target, variant.name, variant.origin == GENERATED, where, max_layers,
                       progress or (lambda _: None), started, torch)


def _search(spec: ModelSpec, target: Target, variant: str, random: bool, where: str, max_layers: int,
            say: Callable[[str], None], started: float, torch: Any) -> Search:
    from zoo.registry import numerics
    from zoo.registry.compile.export import _as_sample, _export, _quantize
    from zoo.registry.compile.retarget import ethosu_compile_spec
    from zoo.registry.numerics.data import flat_outputs
    from zoo.registry.numerics.metrics import evaluate

    model = spec.build(variant).eval()
    example = _as_sample(spec.example_inputs())
    calibration = [_as_sample(s) for s in spec.calibration.load()]
    labelled = numerics.load_labelled(spec, None, where)
    samples = [_as_sample(s) for s, _ in labelled.items] if labelled else calibration
    labels: list[Any] = [label for _, label in labelled.items] if labelled else []
    judge_by_metrics = bool(spec.metrics) and labelled is not None and not random
    reference = [flat_outputs(model(*s)) for s in samples]
    plugin = numerics.owner(spec)

    def score(outputs: Sequence[Sequence[Any]], of: str) -> dict[str, float]:
        """Each metric as the numerical check measures it: samples and the float outputs for evaluators that take them."""
        return {m.name: evaluate(m, outputs, labels, samples, where, of, plugin, reference) for m in spec.metrics}

    float_metrics = score(reference, "float") if judge_by_metrics else {}
    compile_spec = ethosu_compile_spec(target)
    names = [n for n, _ in model.named_modules() if n]
    graph = _export(model, example).module(check_guards=False)
    own = any(n.op == "call_function" and len(n.meta.get("nn_module_stack") or {}) <= 1 for n in graph.graph.nodes)
    weighted = [*([ROOT] if own else []),
                *(n for n, m in model.named_modules() if n and any(True for _ in m.parameters(recurse=False)))]

    def run(label: str, recipe: Recipe, goal_db: float | None = None) -> Trial:
        say(label)
        graph = _export(model, example).module(check_guards=False)
        fake_quant = _quantize(graph, calibration, compile_spec, where, lambda *_: None, None,
                               Precision.of_recipe("tune", recipe), names)
        outputs = [flat_outputs(fake_quant(*s)) for s in samples]
        sqnr = _sqnr(outputs, reference)
        measured = score(outputs, "fake-quantized") if judge_by_metrics else {}
        if judge_by_metrics:
            meets = all(m.drop(float_metrics[m.name], measured[m.name]) <= m.max_drop for m in spec.metrics)
        else:
            worst = min((x for x in sqnr if x is not None), default=math.inf)
            meets = goal_db is not None and worst >= goal_db
        return Trial(label, recipe, sqnr, measured, meets)

    a16w8 = run("a16w8 everywhere", Recipe("a16w8"))
    goal_db = a16w8.worst_db - SQNR_GOAL_MARGIN_DB
    goal = (", ".join(f"{m.name} within {m.max_drop:g}{m.drop_unit} of float" for m in spec.metrics)
            if judge_by_metrics else f"output SQNR ≥ {goal_db:.1f} dB (a16w8 everywhere, less {SQNR_GOAL_MARGIN_DB:g} dB)")
    int8 = run("int8 everywhere", Recipe("int8"), goal_db)
    a16w8 = Trial(a16w8.label, a16w8.recipe, a16w8.sqnr_db, a16w8.metrics,
                  a16w8.meets if judge_by_metrics else True)
    layers = sorted((run(f"{n} at a16w8", Recipe("int8", {n: "a16w8"}), goal_db) for n in weighted),
                    key=lambda t: (-t.worst_db, t.label))
    steps: list[Trial] = []
    if not int8.meets:
        promoted: dict[str, str] = {}
        for layer in layers[:max_layers]:
            promoted.update(layer.recipe.modules)
            label = f"{len(promoted)} module(s) at a16w8"
            step = (Trial(label, layer.recipe, layer.sqnr_db, layer.metrics, layer.meets) if len(promoted) == 1
                    else run(label, Recipe("int8", dict(promoted)), goal_db))
            steps.append(step)
            if step.meets:
                break
    return Search(spec.name, variant, target.name, goal, float_metrics, int8, a16w8, tuple(layers), tuple(steps),
                  round(time.perf_counter() - started, 1))


def _sqnr(outputs: Sequence[Sequence[Any]], reference: Sequence[Sequence[Any]]) -> tuple[float | None, ...]:
    """Each output's SQNR against the reference in dB, over every sample (``compare.Versus.sqnr_db``)."""
    from zoo.registry.numerics.compare import Versus

    sums = [Versus() for _ in reference[0]]
    for got, want in zip(outputs, reference, strict=True):
        for v, g, w in zip(sums, got, want, strict=True):
            w = w.double()
            v.signal += float((w * w).sum())
            v.noise += float(((g.double() - w) ** 2).sum())
    return tuple(v.sqnr_db for v in sums)
