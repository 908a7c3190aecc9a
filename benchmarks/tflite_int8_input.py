"""An int8 ``.tflite`` as zoo's input: how far zoo's int8 program is from the file's own int8 outputs.

zoo reads a quantized ``.tflite`` with its weights dequantized and quantizes it again with its own
recipe (docs/tflite.md, "Quantized (int8, uint8) files"). For each trained model the TFLite flow
converts, this measures the distance between the two int8 programs on the same inputs:

  the file   ``benchmarks/vs_tflite.py``'s TFLite flow: zoo's float model → ONNX → onnx2tf →
             TensorFlow's converter, full-integer int8 (int8 input and output), calibrated on the
             model's calibration samples; run by TensorFlow Lite's interpreter (ai-edge-litert) in the
             TensorFlow venv (``_tflite_convert.py --evaluate``) on the model's evaluation set;
  zoo        that ``.tflite`` read by ``zoo.read_tflite`` (its weights dequantized), as a plugin's
             ModelSpec whose calibration data are the model's own samples (the ones the file was
             calibrated on) in the file's input layout, built for the target with ``--io int8`` and
             ``--verify``: its int8 program on the TOSA reference model (the NPU program level checks
             Vela's command stream against it, bit for bit) on the same evaluation samples.

A ``--model-file x.tflite`` build takes calibration data (``--calibration-dir``) but declares no
metric, so the comparison goes through the API a plugin uses: the spec's evaluation labels carry
each sample's index, and its metrics compare the program's output with the file's on that sample.

Figures, on the first output: the largest and the mean absolute difference between zoo's int8
program (dequantized) and the file's int8 output (dequantized), in the file's output quantization
steps; how often their argmax agrees; and the model's metric (top-1) on zoo's int8 program, on the
file, and on the float networks (zoo's module of the file, dequantized, and ONNX Runtime's float
network the file was converted from). The float module's own distance from the file is the file's
quantization noise: a yardstick for zoo's.

    nice -n 5 .venv/bin/python benchmarks/tflite_int8_input.py --models mnist --json benchmarks/results/tflite_int8_input.json
    .venv/bin/python benchmarks/tflite_int8_input.py --table benchmarks/results/tflite_int8_input.json

Rows are added to ``--json`` as each model finishes (one model per run keeps each process short).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from zoo import ModelSpec, Zoo

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks._tflite_convert import _layout_for  # noqa: E402  (numpy only at import)
from benchmarks._vs_tflite_metrics import export_evaluation  # noqa: E402
from benchmarks.vs_tflite import (  # noqa: E402
    TFLITE_VENV,
    TRAINED_MODELS,
    choose_weights,
    convert_tflite,
    export_float,
    outputs_path,
    tflite_python,
)

# PP-OCR's detector and recogniser take 20 to 30 minutes each through onnx2tf on 2 cores: left out of the
# default run (ppocr-cls takes 5).
MODELS = tuple(m for m in TRAINED_MODELS if m not in ("ppocr-det", "ppocr-rec"))
RESULTS = ROOT / "benchmarks" / "results" / "tflite_int8_input.json"
"""The rows docs/tflite.md's table renders (a test holds the two equal)."""


class FileDistance:
    """A metric of the file's spec: the distance of output 0 from the file's int8 output on the same
    sample (its label's second item is the sample's index), in the file's output steps."""

    unit = ""

    def __init__(self, kind: str, reference: Any, scale: float) -> None:
        self.kind, self.reference, self.scale = kind, reference, scale

    def __call__(self, outputs: Sequence[Sequence[Any]], labels: Sequence[Any]) -> float:
        import numpy as np

        worst, total, count, same = 0.0, 0.0, 0, 0
        for out, (_, i) in zip(outputs, labels, strict=True):
            got = np.asarray(out[0], np.float64).reshape(-1)
            want = np.asarray(self.reference[i], np.float64).reshape(-1)
            if got.shape != want.shape:
                raise ValueError(f"output 0 has {got.size} values, the file's {want.size}")
            steps = np.abs(got - want) / self.scale
            worst, total, count = max(worst, float(steps.max())), total + float(steps.sum()), count + steps.size
            same += int(got.argmax() == want.argmax())
        if self.kind == "max":
            return worst
        return total / count if self.kind == "mean" else 100.0 * same / len(labels)


class OnClass:
    """The model's own metric on the class label (the first item of the spec's labels)."""

    def __init__(self, fn: Callable[..., float]) -> None:
        self.fn = fn
        self.unit = getattr(fn, "unit", "")
        self.wants_samples = getattr(fn, "wants_samples", False)
        self.wants_float = getattr(fn, "wants_float", False)

    def __call__(self, outputs: Sequence[Sequence[Any]], labels: Sequence[Any], *rest: Any, **kw: Any) -> float:
        return self.fn(outputs, [label for label, _ in labels], *rest, **kw)


def file_spec(model: ModelSpec, tflite: Path, info: dict[str, Any], calibration: list[Any],
              evaluation: list[tuple[Any, Any]], reference: Any) -> ModelSpec:
    """The ``.tflite`` as a plugin would declare it: ``zoo.read_tflite``, the model's calibration
    and evaluation samples in the file's input layout, its metric, and the distances from the file."""
    import hashlib

    import zoo
    from zoo import Dataset, InputSpec, Metric, ModelSpec, WeightsVariant

    shape = tuple(int(d) for d in info["inputs"][0]["shape"])
    scale = float(info["outputs"][0]["scale"])
    digest = hashlib.sha256(tflite.read_bytes()).hexdigest()
    metrics = [Metric(m.name, OnClass(m.fn), m.higher_is_better, m.max_drop, unit=m.unit_text) for m in model.metrics]
    metrics += [Metric(f"file-{kind}", FileDistance(kind, reference, scale), kind == "argmax", 1e9,
                       unit="%" if kind == "argmax" else " steps") for kind in ("max", "mean", "argmax")]
    return ModelSpec(
        name=f"{model.name}-int8-tflite",
        version=digest[:16],
        description=f"{model.name}'s full-integer .tflite, read by zoo.read_tflite",
        task=model.task,
        inputs=(InputSpec(model.inputs[0].name, shape),),
        build=lambda _weights: zoo.read_tflite(tflite),
        example_inputs=lambda: calibration[0],
        calibration=Dataset(len(calibration), f"{model.name}'s calibration samples, {list(shape)}",
                            lambda: list(calibration), lambda: f"{model.name}-calibration:{digest}"),
        evaluation=Dataset(len(evaluation), f"{model.name}'s evaluation samples", lambda: list(evaluation),
                           lambda: f"{model.name}-evaluation:{digest}"),
        metrics=tuple(metrics),
        num_labels=model.label_count(),
        weights=(WeightsVariant("file", f"the weights in {tflite.name}", str(tflite), "unknown", lambda: digest),),
    )


def in_file_layout(sample: Any, shape: tuple[int, ...]) -> tuple[Any, ...]:
    import torch

    first = sample[0] if isinstance(sample, (tuple, list)) else sample
    return (torch.from_numpy(_layout_for(first.numpy(), list(shape)).copy()),)


def measure(zoo: Zoo, python: Path, name: str, target: str, work: Path) -> dict[str, Any]:
    import numpy as np

    from zoo.registry.compile import compile_targets
    from zoo.registry.request.keys import BuildRequest

    started = time.perf_counter()
    spec = zoo.model(name)
    if len(spec.inputs) != 1:
        raise ValueError(f"{name} has {len(spec.inputs)} inputs; this benchmark compares single-input models")
    weights = choose_weights(zoo, name, None)
    onnx_path, calibration_npz, _ = export_float(zoo, name, weights, work)
    evaluation = export_evaluation(spec, work)
    if evaluation is None:
        raise ValueError(f"{name} has no labelled evaluation set")
    tflite = work / f"{name}.tflite"
    info, convert_seconds = convert_tflite(python, onnx_path, calibration_npz, tflite, evaluation.npz)
    if "error" in info:
        raise RuntimeError(f"the TFLite flow failed: {info['error']}")
    with np.load(outputs_path(tflite)) as data:
        file_out, onnx_out = data["tflite_0"], data["onnx_0"]
    shape = tuple(int(d) for d in info["inputs"][0]["shape"])
    with np.load(calibration_npz) as data:
        import torch
        calibration = [in_file_layout(torch.from_numpy(a), shape) for a in data[data.files[0]]]
    items = [(in_file_layout(s, shape), (label, i))
             for i, (s, label) in enumerate(zip(evaluation.samples, evaluation.labels, strict=True))]
    int8_spec = file_spec(spec, tflite, info, calibration, items, file_out)
    t = zoo.target(target)
    request = BuildRequest.create(int8_spec, t, weights="file", io="int8")
    build_started = time.perf_counter()
    result, = compile_targets(int8_spec, [t], weights="file", boundary=request.boundary,
                              precision=request.precision, verify=[True])
    build_seconds = time.perf_counter() - build_started
    assert result.numerics is not None
    record = result.numerics.record
    by_name = {m["name"]: m for m in record["metrics"]}
    task = spec.metrics[0]
    file_metric = _file_metric(spec, evaluation, file_out, onnx_out)
    scale = float(info["outputs"][0]["scale"])
    npu = record.get("npu_program") or {}
    return {
        "model": name, "target": target, "weights": weights, "samples": record["samples"],
        "tflite_bytes": tflite.stat().st_size, "operators": info["operators"],
        "file_input": info["inputs"][0], "file_output": info["outputs"][0],
        "zoo_io": result.io,
        "metric": {"name": task.name, "unit": task.unit_text, "zoo_int8": by_name[task.name]["program"],
                   "zoo_float": by_name[task.name]["float"], **file_metric},
        "zoo_int8_vs_file": {k: by_name[f"file-{k}"]["program"] for k in ("max", "mean", "argmax")},
        "zoo_float_vs_file": {k: by_name[f"file-{k}"]["float"] for k in ("max", "mean", "argmax")},
        "onnx_vs_file": _distance(onnx_out, file_out, scale),
        "check_passed": record["passed"],
        "failed_checks": [c["name"] for c in record["checks"] if not c["passed"]],
        "npu_program": {k: npu.get(k) for k in ("outcome", "samples", "delegate_calls", "skipped", "error")},
        "seconds": {"tflite_flow": round(convert_seconds, 1), "zoo_build_verify": round(build_seconds, 1),
                    "total": round(time.perf_counter() - started, 1)},
        "numerics_seconds": record.get("seconds"),
    }


def _file_metric(spec: ModelSpec, evaluation: Any, file_out: Any, onnx_out: Any) -> dict[str, float]:
    """The model's metric on the file's int8 outputs and on ONNX Runtime's float ones, by zoo's evaluator."""
    import torch

    from zoo.registry.numerics.metrics import evaluate, owner

    metric = spec.metrics[0]
    as_outputs = [[[torch.from_numpy(a[i].copy())] for i in range(len(a))] for a in (file_out, onnx_out)]
    file, onnx = (evaluate(metric, o, evaluation.labels, evaluation.samples, spec.name, kind, owner(spec), as_outputs[1])
                  for o, kind in zip(as_outputs, ("int8 .tflite", "ONNX float"), strict=True))
    return {"file_int8": file, "onnx_float": onnx}


def _distance(a: Any, b: Any, scale: float) -> dict[str, float]:
    import numpy as np

    a2, b2 = (np.asarray(x, np.float64).reshape(len(x), -1) for x in (a, b))
    steps = np.abs(a2 - b2) / scale
    return {"max": float(steps.max()), "mean": float(steps.mean()),
            "argmax": 100.0 * float((a2.argmax(1) == b2.argmax(1)).mean())}


METRIC_NAMES = {"top1": "top-1", "reconstruction_roc_auc": "ROC-AUC"}


def _value(x: float, unit: str) -> str:
    return f"{x:.2f} %" if unit == "%" else f"{x:.4f}"


def markdown(rows: Sequence[dict[str, Any]]) -> str:
    """docs/tflite.md's table, the models in ``MODELS``' order. The argmax agreement of a model
    whose metric is not top-1 (a reconstruction's) is in brackets: it means little there."""
    head = ("| model | evaluation samples | zoo int8 vs file int8: max / mean steps | argmax agrees | "
            "zoo float vs file int8: max / mean steps | metric | zoo int8 | file int8 | zoo float | ONNX float |\n"
            "| --- | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: |\n")
    order = {m: i for i, m in enumerate(MODELS)}
    lines = []
    for r in sorted(rows, key=lambda r: (order.get(r["model"], len(order)), r["model"], r["target"])):
        model = r["model"] if r["target"] == "u55-128" else f"{r['model']} ({r['target']})"
        if "error" in r:
            lines.append(f"| {model} | | {r['error']} | | | | | | | |")
            continue
        d, f, m = r["zoo_int8_vs_file"], r["zoo_float_vs_file"], r["metric"]
        agree = f"{d['argmax']:.1f} %" if m["name"] == "top1" else f"({d['argmax']:.1f} %)"
        values = " | ".join(_value(m[k], m["unit"]) for k in ("zoo_int8", "file_int8", "zoo_float", "onnx_float"))
        lines.append(f"| {model} | {r['samples']:,} | {d['max']:.1f} / {d['mean']:.2f} | {agree} | "
                     f"{f['max']:.1f} / {f['mean']:.2f} | {METRIC_NAMES.get(m['name'], m['name'])} | {values} |")
    return head + "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    parser.add_argument("--models", default=",".join(MODELS), help=f"comma-separated (default: {', '.join(MODELS)})")
    parser.add_argument("--target", default="u55-128")
    parser.add_argument("--venv", type=Path, default=TFLITE_VENV, help="the TensorFlow venv (made if missing)")
    parser.add_argument("--keep", type=Path, help="keep the .onnx, .tflite and outputs here")
    parser.add_argument("--json", type=Path, help="add the rows to this file (rows of the same model and target replaced)")
    parser.add_argument("--table", type=Path, help="only print the table of the rows a --json run wrote")
    args = parser.parse_args()
    if args.table:
        print(markdown(json.loads(args.table.read_text())), end="")
        return 0
    from zoo import Zoo
    from zoo.registry.request import reproducible
    reproducible.pin()

    python = tflite_python(args.venv)
    zoo = Zoo()
    rows: list[dict[str, Any]] = json.loads(args.json.read_text()) if args.json and args.json.is_file() else []
    failed = False
    with tempfile.TemporaryDirectory(prefix="zoo-int8-tflite-") as tmp:
        work = (args.keep or Path(tmp)).resolve()
        work.mkdir(parents=True, exist_ok=True)
        for name in args.models.split(","):
            started = time.perf_counter()
            try:
                row = measure(zoo, python, name, args.target, work)
            except Exception as exc:  # the table says why; the other models go on
                failed = True
                row = {"model": name, "target": args.target, "error": f"{type(exc).__name__}: {exc}",
                       "seconds": {"total": round(time.perf_counter() - started, 1)}}
            print(json.dumps(row, indent=1, default=str), flush=True)
            rows = [r for r in rows if (r["model"], r["target"]) != (name, args.target)] + [row]
            if args.json:
                args.json.parent.mkdir(parents=True, exist_ok=True)
                args.json.write_text(json.dumps(rows, indent=1, default=str) + "\n")
    print("\n" + markdown(rows), end="")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
