"""The model's declared metric on both sides of ``benchmarks/vs_tflite.py`` (issue 59, item 3).

zoo's side is its own numerical check (``--verify``): the float model and the int8 program (the
TOSA reference model) on the model's evaluation set. The TFLite flow's side runs the same samples,
saved here as an ``.npz``, through ONNX Runtime (the float network the flow starts from) and
TensorFlow Lite's interpreter (its int8 ``.tflite``) in the TensorFlow venv
(``_tflite_convert.py --evaluate``); the metric is then computed here, by the model's own
evaluators, on those outputs: the same data, labels and code for both flows.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["Evaluation", "export_evaluation", "metric_text", "tflite_metrics", "zoo_metrics"]


@dataclass(frozen=True)
class Evaluation:
    """The evaluation set as the TensorFlow venv reads it, and what the metrics need back here."""

    npz: Path
    labels: list[Any]
    samples: list[Any]
    name: str


def export_evaluation(spec: Any, work: Path) -> Evaluation | None:
    """The samples and labels zoo's check judges ``spec`` on (``numerics.data.evaluation_set``),
    one array per input (samples, *input shape) by input name; None without labelled data."""
    import numpy as np

    from zoo.registry.numerics.data import evaluation_set

    data = evaluation_set(spec, spec.calibration)
    if data.labels is None or not spec.metrics:
        return None
    names = [i.name for i in spec.inputs]
    arrays = {name: np.stack([s[i].numpy() for s in data.samples]).astype(np.float32) for i, name in enumerate(names)}
    npz = work / f"{spec.name}-evaluation.npz"
    np.savez(npz, **arrays)
    return Evaluation(npz, list(data.labels), list(data.samples), data.name)


def tflite_metrics(spec: Any, evaluation: Evaluation, outputs: Path) -> list[dict[str, Any]]:
    """Each declared metric on ONNX Runtime's float outputs and on the int8 ``.tflite``'s, as
    zoo's check records them (``float``, ``program``)."""
    import numpy as np
    import torch

    from zoo.registry.numerics.metrics import evaluate, owner

    with np.load(outputs) as data:
        count = sum(1 for k in data.files if k.startswith("tflite_"))
        tfl = [data[f"tflite_{j}"] for j in range(count)]
        onnx = [data[f"onnx_{j}"] for j in range(count)]
    n = len(evaluation.labels)
    if any(len(a) != n for a in tfl + onnx):
        raise ValueError(f"the TensorFlow venv returned outputs for {len(tfl[0])} samples, not {n}")

    def per_sample(arrays: list[Any]) -> list[list[Any]]:
        return [[torch.from_numpy(np.ascontiguousarray(a[i])) for a in arrays] for i in range(n)]

    floats, programs = per_sample(onnx), per_sample(tfl)
    where, plugin = f"{spec.name} (TFLite flow)", owner(spec)
    out = []
    for metric in spec.metrics:
        f = evaluate(metric, floats, evaluation.labels, evaluation.samples, where, "float", plugin, floats)
        p = evaluate(metric, programs, evaluation.labels, evaluation.samples, where, "int8 .tflite", plugin, floats)
        out.append({"name": metric.name, "unit": metric.unit_text, "higher_is_better": metric.higher_is_better,
                    "max_drop": metric.max_drop, "float": f, "program": p, "samples": n, "dataset": evaluation.name})
    return out


def zoo_metrics(result: Any) -> list[dict[str, Any]]:
    """The metrics zoo's numerical check recorded for a build (empty without one)."""
    record = result.numerics.record if result.numerics is not None else {}
    return [{k: m[k] for k in ("name", "unit", "higher_is_better", "max_drop", "float", "program", "samples", "dataset")
             if k in m} for m in record.get("metrics") or []]


def metric_text(metrics: list[dict[str, Any]], which: str) -> str:
    """``97.50 %`` (a percentage) or ``0.9512`` (another unit) for the first metric's ``float`` or ``program`` figure; ``-`` without one."""
    if not metrics:
        return "-"
    m = metrics[0]
    unit = m.get("unit") or ""
    value = float(m[which])
    return f"{value:.2f} %" if unit == "%" else f"{value:.4f}{unit}"  # a ROC-AUC needs its 4 places
