"""zoo's Ethos-U program against the int8 TFLite → Vela flow: the same network, weights and calibration data.

For each model and target, every run builds afresh (nothing stored is read):
  zoo best      what ``zoo fetch MODEL -t TARGET --io int8 [--layout nhwc]`` builds (``--layout nhwc``
                where the model offers it), compiled in this process without the cache, so that its
                TOSA graphs are at hand;
  zoo defaults  the same with zoo's default boundary (float I/O, NCHW);
  TFLite        the float model zoo quantizes (same plugin, weights variant and seed) → torch.onnx.export
                → onnx2tf → TensorFlow's converter, full-integer int8 with int8 input and output, the
                representative dataset being zoo's own calibration samples; TensorFlow runs in a venv
                of its own (``.venv-tflite``, made on first use) through ``benchmarks/_tflite_convert.py``.
Then Vela runs with the flags zoo's build recorded in its manifest (accelerator, ``--config``,
system config, memory mode, its extra flags) plus ``--verbose-performance``, on zoo's TOSA graphs
and on the ``.tflite``; it prints the totals of each, the ratios zoo / TFLite, and the layers,
matched by order, operator and MACs, whose cycles differ most.

    python benchmarks/vs_tflite.py mnist u55-128
    python benchmarks/vs_tflite.py mv2 u55-128 --weights random
    python benchmarks/vs_tflite.py --all --markdown out/vs_tflite.md   # 4 models × u55-128, u85-256
    python benchmarks/vs_tflite.py --catalogue --jobs 2 --markdown out/vs_tflite.md  # the whole table

``--jobs N`` runs N models at a time, each in a process of its own (its log in ``--logs``).

With ``--metrics`` (``--trained`` implies it) the table also holds each model's declared metric
(top-1, ROC-AUC, ...) on its own evaluation set: zoo's from its numerical check (float model and
int8 program on the TOSA reference model, ``--verify``), the TFLite flow's from ONNX Runtime (float)
and TensorFlow Lite's interpreter (its int8 ``.tflite``), computed by the model's own evaluators
(``benchmarks/_vs_tflite_metrics.py``). ``--trained`` is every model trained here that the converter
takes, on u55-128, u65-256 and u85-256; ``--no-defaults`` skips zoo's float-I/O NCHW build.

    python benchmarks/vs_tflite.py --trained --no-defaults --markdown out/vs_tflite_trained.md --json out/vs_tflite_trained.json
    python benchmarks/vs_tflite.py --table out/vs_tflite_trained.json --recipes out/weight_recipes.json  # the table again

``--recipes`` adds a column: the fastest of ``benchmarks/weight_recipes.py --json``'s recipes whose
numerical check passed, for each model and target.

Run with zoo's venv, under ``nice -n 19`` on a shared machine. ``--weights`` defaults to the
model's own weights where they load offline, else ``random``; both sides always get the same.
"""

from __future__ import annotations

import argparse
import csv
import difflib
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from zoo import Zoo

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks._vs_tflite_metrics import (  # noqa: E402  (torch-free at import)
    Evaluation,
    export_evaluation,
    metric_text,
    tflite_metrics,
    zoo_metrics,
)

HELPER = Path(__file__).with_name("_tflite_convert.py")
TFLITE_VENV = ROOT / ".venv-tflite"
TFLITE_PACKAGES = (
    "tensorflow-cpu==2.21.0", "tf-keras", "onnx2tf==1.28.8", "onnx", "onnxruntime", "onnx-graphsurgeon",
    "sng4onnx", "sne4onnx", "psutil", "ai-edge-litert",
)
ALL_MODELS = ("mv2", "mnist", "mobilenet-v3-small", "resnet8-cifar")
ALL_TARGETS = ("u55-128", "u85-256")
# Issue 45's table: every image classifier, the audio and vision packs' networks it names, cheapest first.
CATALOGUE_MODELS = (
    "mnist", "resnet8-cifar", "ds-cnn-fsdd", "vww-mobilenetv1-025", "silero-vad", "crepe-tiny", "ppocr-cls",
    "shufflenet-v2-x0-5", "mobilenet-v3-small", "squeezenet1-1", "mnasnet0-5", "shufflenet-v2-x1-0", "mnasnet0-75",
    "mv2", "squeezenet1-0", "mnasnet1-0", "shufflenet-v2-x1-5", "mobilenet-v3-large", "regnet-x-400mf",
    "regnet-y-400mf", "mnasnet1-3", "efficientnet-b0", "shufflenet-v2-x2-0", "regnet-x-800mf", "regnet-y-800mf",
    "ppocr-rec", "ppocr-det", "googlenet", "efficientnet-b1", "deit-tiny", "mobilevit-xs", "resnet18",
    "regnet-x-1-6gf", "regnet-y-1-6gf", "efficientnet-b2", "ssdlite320-mobilenetv3-large", "lraspp-mobilenetv3-large",
)
CATALOGUE_TARGETS = ("u55-128", "u65-256", "u85-256")
# Issue 59: the trained models onnx2tf converts: those trained here (the sensors pack's four and the two digit
# models with them), then PP-OCR's (its recogniser and detector take 20 to 30 minutes each on 2 cores).
# silero-vad's and crepe-tiny's 1-D convolutions are beyond onnx2tf (see the catalogue's table).
TRAINED_MODELS = ("mnist", "ds-cnn-fsdd", "vww-mobilenetv1-025", "har-cnn-spar", "ad-autoencoder-spar",
                  "speaker-id-vowels", "appliance-id-plaid", "yolo-tiny-mcu", "seg-tiny-mcu", "ppocr-cls", "ppocr-det",
                  "ppocr-rec")
NOT_BUILT = "not built (--no-defaults)"
SAME_NETWORK = 0.5
"""The lowest cosine similarity of the int8 .tflite's output to ONNX Runtime's float output at which the
two count as one network: the converted catalogue models measured 0.92 (mobilenet-v3-large at random
weights) to 1.00; squeezenet1-0's, broken by onnx2tf's ceil-mode pooling, 0.0."""
VELA = Path(sys.executable).with_name("vela")
_OPERATORS = re.compile(r"^(CPU|NPU) operators = (\d+)", re.MULTILINE)
_SAME_KIND = {"FullyConnected": "Conv2D"}
# Vela lists an activation it fused into the operator before it as a row of its own with no
# cycles and no MACs (see vela's npu_performance.py); such rows are folded into that operator.
_ACTIVATIONS = {"Relu", "Relu6", "ReluN1To1", "Clamp", "Clip", "Sigmoid", "Tanh", "LUT", "HardSwish", "LeakyRelu"}


@dataclass(frozen=True)
class Layer:
    """One row of Vela's per-layer CSV (``--verbose-performance``)."""

    partition: int
    original: str
    """The operator as Vela read it (TFLite's name, also for a TOSA graph)."""
    op: str
    """Vela's own operator after its graph rewrites (``NNG Operator``)."""
    cycles: int
    npu_cycles: int
    macs: int
    name: str
    activation: str = ""
    """The activation Vela fused into it (its own 0-cycle row in the CSV), e.g. ``Relu``."""

    @property
    def key(self) -> tuple[str, int]:
        """What pairs it with a layer of the other program: Vela runs a fully connected layer as a
        1×1 convolution on a TOSA graph, so the two are one kind here."""
        return (_SAME_KIND.get(self.op, self.op), self.macs)


@dataclass
class VelaRun:
    total: dict[str, Any]
    layers: list[Layer]
    flags: list[str]


@dataclass
class Side:
    """One program's figures; ``error`` instead where it could not be built."""

    label: str
    vela: VelaRun | None = None
    cpu_ops: int = 0
    input_quant: str = ""
    seconds: float = 0.0
    error: str | None = None
    notes: list[str] = field(default_factory=list)
    metrics: list[dict[str, Any]] = field(default_factory=list)
    """The model's declared metrics, float and int8 program (``_vs_tflite_metrics.py``); empty when not measured."""


def side_json(side: Side) -> dict[str, Any]:
    return asdict(side)


def side_from_json(data: dict[str, Any]) -> Side:
    data = dict(data)
    vela = data.pop("vela")
    run = VelaRun(vela["total"], [Layer(**x) for x in vela["layers"]], vela["flags"]) if vela else None
    return Side(**data, vela=run)


# --- Vela ---------------------------------------------------------------------------------------


def run_vela(network: Path, flags: Sequence[str], out_dir: Path, partition: int = 0) -> VelaRun:
    """Vela's summary and per-layer figures for ``network`` (.tosa or .tflite) with ``flags``."""
    from zoo.registry.npu import vela_report
    command = [str(VELA), *flags, "--verbose-performance", f"--output-dir={out_dir}", str(network)]
    proc = subprocess.run(command, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"Vela failed ({' '.join(command[1:])}):\n" + _tail(proc.stdout + proc.stderr))
    stem = network.stem
    summaries = sorted(out_dir.glob(f"{stem}_summary_*.csv"))
    if len(summaries) != 1:
        raise RuntimeError(f"Vela wrote {len(summaries)} summary CSVs for {network.name}:\n{_tail(proc.stdout)}")
    total = vela_report._from_summary(vela_report._read_summary(summaries[0]))
    counts = {kind.lower(): int(n) for kind, n in _OPERATORS.findall(proc.stdout)}
    total["npu_operators"], total["cpu_operators"] = counts.get("npu", 0), counts.get("cpu", 0)
    layers: list[Layer] = []
    with (out_dir / f"{stem}_per-layer.csv").open(newline="") as f:
        for row in csv.DictReader(f):
            layer = Layer(partition, row["Original Operator"], row["NNG Operator"], round(float(row["Op Cycles"])),
                          round(float(row["NPU"])), round(float(row["MAC Count"])), row["Name"])
            fused = layer.op in _ACTIVATIONS and layer.cycles == 0 and layer.macs == 0
            if fused and layers and layers[-1].name == layer.name:
                layers[-1] = replace(layers[-1], activation=layer.op)
            else:
                layers.append(layer)
    return VelaRun(total, layers, list(flags))


def combine(runs: Sequence[VelaRun]) -> VelaRun:
    """Several partitions as one program: ``vela_report.summarize``'s rules, layers in program order."""
    from zoo.registry.npu import vela_report
    total = vela_report.summarize([r.total for r in runs])["total"]
    for key in ("cpu_operators", "npu_operators"):
        total[key] = sum(r.total[key] for r in runs)
    return VelaRun(total, [layer for r in runs for layer in r.layers], runs[0].flags)


def flash_bytes(total: dict[str, Any]) -> int:
    """Where the weights and command stream live: flash, or DRAM in the DRAM memory modes."""
    return int(total["off_chip_flash_bytes"] + total["on_chip_flash_bytes"] + total["dram_bytes"])


# --- zoo's side ---------------------------------------------------------------------------------


def build_zoo(zoo: Zoo, model: str, targets: Sequence[str], weights: str | None, best: bool,
              work: Path, metrics: bool = False) -> list[Side]:
    """zoo's program of ``model`` for each target (one lowering per TOSA specification) and
    Vela's per-layer run on its TOSA graphs, with the flags its manifest records."""
    from zoo.registry.compile import compile_targets
    from zoo.registry.request.keys import BuildRequest

    spec = zoo.model(model)
    resolved = [zoo.target(t) for t in targets]
    layout = "nhwc" if best and "nhwc" in spec.layouts else None
    requests = [BuildRequest.create(spec, t, weights=weights, io="int8" if best else None, layout=layout)
                for t in resolved]
    b = requests[0].boundary
    label = f"zoo {b.mode} {b.layout}" + ("" if best else " (defaults)")
    started = time.perf_counter()
    verify, lowered = [], set()
    for t in resolved:  # the check runs once per TOSA specification; its targets share the program's numerics
        verify.append(metrics and t.tosa_spec not in lowered)
        lowered.add(t.tosa_spec)
    try:
        results = compile_targets(spec, resolved, weights=weights, boundary=b, precision=requests[0].precision,
                                  verify=verify)
    except Exception as exc:  # a BuildError names the stage; report it and go on
        return [Side(label, error=f"{type(exc).__name__}: {exc}") for _ in targets]
    seconds = (time.perf_counter() - started) / len(targets)
    sides = []
    for target, result in zip(targets, results, strict=True):
        assert result.vela is not None
        side = Side(label, seconds=seconds)
        recorded = result.vela["partitions"]  # what the manifest's "vela" holds
        runs = []
        for i, (graph, partition) in enumerate(zip(result.tosa_graphs, recorded, strict=True)):
            path = work / f"{model}-{target}-{b.mode}-{b.layout}-{i}.tosa"
            path.write_bytes(graph)
            runs.append(run_vela(path, partition["flags"], work / f"vela-{path.stem}", i))
        side.vela = combine(runs)
        manifest = result.vela["total"]
        if side.vela.total["total_cycles"] != manifest["total_cycles"]:
            side.notes.append(f"Vela rerun gives {side.vela.total['total_cycles']:,} cycles, "
                              f"the manifest {manifest['total_cycles']:,}")
        d = result.delegation
        side.cpu_ops = d["cpu_ops"] + d.get("cpu_quantize_ops", 0)
        given = (result.io or {}).get("inputs") or [{}]
        if given[0].get("scale") is not None:
            side.input_quant = f"{given[0]['dtype']} scale {given[0]['scale']:.6g} zp {given[0]['zero_point']}"
        else:
            side.input_quant = str(given[0].get("dtype", "?"))
        side.notes.append(f"calibration sha256 {result.calibration['sha256'][:12]} ({result.calibration['samples']} samples)")
        side.metrics = zoo_metrics(result) or next(
            (zoo_metrics(r) for t, r in zip(resolved, results, strict=True)
             if t.tosa_spec == zoo.target(target).tosa_spec and r.numerics is not None), [])
        sides.append(side)
    return sides


def export_float(zoo: Zoo, model: str, weights: str | None, work: Path) -> tuple[Path, Path, str]:
    """The float model and calibration samples zoo quantizes, rebuilt as ``compile_targets`` does
    (same seed, same order of draws): the ONNX file, an .npz of the samples (one array per input,
    (samples, *input shape), NCHW) and their digest, which must equal the one zoo's build records."""
    import numpy as np
    import torch

    from zoo.registry.compile.export import _as_sample, digest_samples
    from zoo.registry.request import reproducible

    spec = zoo.model(model)
    variant = spec.weights_variant(weights).name
    reproducible.pin()
    with reproducible.numerics(torch, f"model {model!r}"), torch.random.fork_rng(devices=[]), torch.no_grad():
        torch.manual_seed(0)
        net = spec.build(variant).eval()
        example = _as_sample(spec.example_inputs())
        samples = [_as_sample(s) for s in spec.calibration.load()]
        onnx_path = work / f"{model}.onnx"
        names = [i.name for i in spec.inputs]
        with warnings.catch_warnings():  # the TorchScript exporter: the dynamo one needs onnxscript
            warnings.simplefilter("ignore", DeprecationWarning)
            torch.onnx.export(net, example, str(onnx_path), dynamo=False, opset_version=17, input_names=names,
                              do_constant_folding=True)
    arrays = {name: np.stack([s[i].numpy() for s in samples]).astype(np.float32)
              for i, name in enumerate(names)}
    npz = work / f"{model}-calibration.npz"
    np.savez(npz, **arrays)
    return onnx_path, npz, digest_samples(samples)


# --- the TFLite flow ----------------------------------------------------------------------------


def tflite_python(venv: Path) -> Path:
    """The TensorFlow venv's interpreter, made on first use (never zoo's dependencies). A marker
    holding the package list says the install finished; a venv without it is installed again."""
    python = venv / "bin" / "python"
    marker = venv / ".zoo-installed"
    wanted = "\n".join(TFLITE_PACKAGES) + "\n"
    if python.exists() and marker.is_file() and marker.read_text() == wanted:
        return python
    print(f"making {venv} (TensorFlow {TFLITE_PACKAGES[0].split('==')[1]}, onnx2tf): a few minutes ...", flush=True)
    if not python.exists():
        subprocess.run(["nice", "-n", "19", "python3.11", "-m", "venv", str(venv)], check=True)
    subprocess.run(["nice", "-n", "19", str(python), "-m", "pip", "install", "-q", *TFLITE_PACKAGES], check=True)
    marker.write_text(wanted)
    return python


def convert_tflite(python: Path, onnx_path: Path, npz: Path, out: Path,
                   evaluation: Path | None = None) -> tuple[dict[str, Any], float]:
    """Run the helper in the TensorFlow venv, a process of its own, so that TensorFlow aborting
    (resnet18's ``allocate_tensors``) ends only it; its JSON (``error`` where a converter failed,
    naming the signal and the stage for a process that died without one). With ``evaluation``,
    the outputs on those samples go to ``out``'s ``-outputs.npz``."""
    started = time.perf_counter()
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2", "CUDA_VISIBLE_DEVICES": ""}
    env.pop("PYTHONPATH", None)  # zoo's tree is not the TF venv's business
    extra = ["--evaluate", str(evaluation), "--outputs", str(outputs_path(out))] if evaluation else []
    proc = subprocess.run([str(python), str(HELPER), str(onnx_path), str(npz), str(out), *extra],
                          capture_output=True, text=True, env=env)
    seconds = time.perf_counter() - started
    return helper_result(proc.returncode, proc.stdout, proc.stderr), seconds


def outputs_path(tflite: Path) -> Path:
    return tflite.with_name(tflite.stem + "-outputs.npz")


_STAGE = re.compile(r"^zoo-stage: (.+)$", re.MULTILINE)


def helper_result(code: int, stdout: str, stderr: str) -> dict[str, Any]:
    """The helper's JSON (its last line of stdout), or an ``error`` saying how the process ended:
    killed by a signal (``SIGABRT``, status −6) in the stage it last announced, or another status."""
    last = stdout.strip().splitlines()[-1:] or [""]
    try:
        info: dict[str, Any] = json.loads(last[0])
        return info
    except json.JSONDecodeError:
        pass
    stages = _STAGE.findall(stderr)
    where = f" while {stages[-1]}" if stages else " before its first stage"
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        said = f"the TFLite process was killed by {name} (status {code}){where}"
    else:
        said = f"the TFLite process exited with status {code} and no result{where}"
    return {"error": f"{said}:\n{_tail(_STAGE.sub('', stdout + stderr))}", "stage": stages[-1] if stages else None}


def build_tflite(python: Path, model: str, onnx_path: Path, npz: Path, work: Path,
                 evaluation: Evaluation | None = None, spec: Any = None) -> tuple[Path | None, Side]:
    out = work / f"{model}.tflite"
    info, seconds = convert_tflite(python, onnx_path, npz, out, evaluation.npz if evaluation else None)
    side = Side("TFLite int8", seconds=seconds)
    if "error" in info:
        side.error = info["error"] + "".join(f"\n    {line}" for line in info.get("traceback", []))
        return None, side
    i = info["inputs"][0]
    side.input_quant = f"{i['dtype']} scale {i['scale']:.6g} zp {i['zero_point']}"
    side.notes.append("TFLite operators: " + ", ".join(f"{k} {v}" for k, v in sorted(info["operators"].items())))
    side.notes.append(f"int8 output against ONNX Runtime's float output, lowest cosine similarity over 8 "
                      f"calibration samples: {info['cosine_vs_onnx']:.4f}")
    side.notes.append("converted with " + ", ".join(f"{k} {v}" for k, v in info.get("versions", {}).items()))
    if evaluation is not None and spec is not None:
        try:
            side.metrics = tflite_metrics(spec, evaluation, outputs_path(out))
            side.notes.append(f"metrics on {info.get('evaluated')} {evaluation.name} samples, ONNX Runtime (float) "
                              "and TensorFlow Lite's interpreter (int8)")
        except Exception as exc:  # the cycles still stand; the table says why the metric does not
            side.notes.append(f"no metric: {type(exc).__name__}: {exc}")
    if info["cosine_vs_onnx"] < SAME_NETWORK:
        side.error = (f"the int8 .tflite does not compute the network ONNX Runtime does (lowest cosine similarity "
                      f"{info['cosine_vs_onnx']:.4f} over 8 calibration samples, under {SAME_NETWORK}): no ratio "
                      f"against it; its tensors' quantization shows where it breaks")
        return None, side
    return out, side


def vela_tflite(tflite: Path, side: Side, flags: Sequence[str], work: Path, target: str) -> None:
    """Vela on the .tflite with zoo's flags; Vela's CPU operators are the TFLite program's CPU ops."""
    copy = work / f"{tflite.stem}-{target}.tflite"
    copy.write_bytes(tflite.read_bytes())
    try:
        side.vela = run_vela(copy, flags, work / f"vela-{copy.stem}")
    except RuntimeError as exc:
        side.error = str(exc)
        return
    side.cpu_ops = side.vela.total["cpu_operators"]


# --- comparison ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Pair:
    zoo: Layer | None
    tflite: Layer | None

    @property
    def delta(self) -> int:
        return (self.zoo.cycles if self.zoo else 0) - (self.tflite.cycles if self.tflite else 0)


def match_layers(zoo: Sequence[Layer], tflite: Sequence[Layer]) -> list[Pair]:
    """Pair the layers by order on (Vela operator, MACs). Within a run that differs, runs of equal
    length pair by position; otherwise layers of equal MACs pair in order (e.g. zoo's AvgPool and
    the DepthwiseConv2D Vela makes of TFLite's MEAN), and the rest stand alone."""
    matcher = difflib.SequenceMatcher(a=[x.key for x in zoo], b=[x.key for x in tflite], autojunk=False)
    pairs: list[Pair] = []
    for tag, a0, a1, b0, b1 in matcher.get_opcodes():
        if tag == "equal" or (tag == "replace" and a1 - a0 == b1 - b0):
            pairs += [Pair(zoo[a0 + k], tflite[b0 + k]) for k in range(a1 - a0)]
        else:
            pairs += _pair_by_macs(zoo[a0:a1], tflite[b0:b1])
    return pairs


def _pair_by_macs(zoo: Sequence[Layer], tflite: Sequence[Layer]) -> list[Pair]:
    pairs: list[Pair] = []
    j = 0
    for x in zoo:
        match = next((k for k in range(j, len(tflite)) if x.macs and tflite[k].macs == x.macs), None)
        if match is None:
            pairs.append(Pair(x, None))
            continue
        pairs += [Pair(None, y) for y in tflite[j:match]]
        pairs.append(Pair(x, tflite[match]))
        j = match + 1
    return pairs + [Pair(None, y) for y in tflite[j:]]


def _layer(x: Layer | None) -> str:
    return f"{x.op}{'+' + x.activation if x.activation else ''} {x.macs:,} MACs" if x else "-"


def _fused(run: VelaRun) -> str:
    weighted = [x for x in run.layers if x.macs and x.op in ("Conv2D", "DepthwiseConv2D", "FullyConnected")]
    return f"{sum(1 for x in weighted if x.activation)} of {len(weighted)}"


def _totals(ok: Sequence[Side], width: int = 32) -> None:
    rows: list[tuple[str, Any]] = [
        ("inference time (ms)", lambda s: f"{s.vela.total['inference_time_ms']:.4f}"),
        ("total cycles", lambda s: f"{s.vela.total['total_cycles']:,}"),
        ("NPU cycles", lambda s: f"{s.vela.total['npu_cycles']:,}"),
        ("SRAM (KiB)", lambda s: f"{s.vela.total['sram_bytes'] / 1024:.2f}"),
        ("flash / DRAM (KiB)", lambda s: f"{flash_bytes(s.vela.total) / 1024:.2f}"),
        ("MACs", lambda s: f"{s.vela.total['macs']:,}"),
        ("NPU operators (Vela)", lambda s: f"{s.vela.total['npu_operators']}"),
        ("CPU operators", lambda s: f"{s.cpu_ops}"),
        ("convs/FCs with a fused activation", lambda s: _fused(s.vela)),
        ("input", lambda s: s.input_quant),
        ("build (s)", lambda s: f"{s.seconds:.1f}"),
    ]
    print(f"{'':34}" + "".join(f"{s.label:>{width}}" for s in ok))
    for name, fmt in rows:
        print(f"{name:34}" + "".join(f"{fmt(s):>{width}}" for s in ok))


def print_comparison(model: str, target: str, weights: str, best: Side, defaults: Side, tfl: Side,
                     top: int) -> None:
    print(f"\n=== {model} on {target}, weights {weights} ===")
    sides = [best, defaults, tfl]
    for s in sides:
        if s.error:
            print(f"{s.label}: {s.error}" if s.error == NOT_BUILT else f"{s.label}: FAILED: {s.error}")
    ok = [s for s in sides if s.vela]
    if ok:
        _totals(ok)
        print(f"Vela flags (both sides): {' '.join(ok[0].vela.flags) if ok[0].vela else ''} --verbose-performance")
    for s in sides:
        for note in s.notes:
            print(f"  {s.label}: {note}")
    if tfl.vela is None:
        return
    for s in (best, defaults):
        if s.vela:
            r = s.vela.total["inference_time_ms"] / tfl.vela.total["inference_time_ms"]
            c = s.vela.total["total_cycles"] / tfl.vela.total["total_cycles"]
            print(f"ratio {s.label} / TFLite: time {r:.3f}, cycles {c:.3f}")
    if best.vela is None:
        return
    pairs = match_layers(best.vela.layers, tfl.vela.layers)
    matched = [p for p in pairs if p.zoo and p.tflite]
    only_zoo = sum(p.zoo.cycles for p in pairs if p.zoo and not p.tflite)
    only_tfl = sum(p.tflite.cycles for p in pairs if p.tflite and not p.zoo)
    diff = best.vela.total["total_cycles"] - tfl.vela.total["total_cycles"]
    print(f"layers ({best.label} against TFLite): zoo {len(best.vela.layers)}, TFLite {len(tfl.vela.layers)}, "
          f"paired {len(matched)}; cycle difference {diff:+,} = paired {sum(p.delta for p in matched):+,} "
          f"+ zoo only {only_zoo:,} - TFLite only {only_tfl:,}")
    same = [p for p in matched if p.zoo and p.tflite and p.zoo.key == p.tflite.key]
    more = [p.delta for p in same if p.delta > 0]
    less = [p.delta for p in same if p.delta < 0]
    print(f"  paired with the same operator and MACs: {len(same)}; {len(more)} cost zoo more ({sum(more):+,} cycles), "
          f"{len(less)} less ({sum(less):+,})")
    other = [p for p in matched if p not in same]
    if other:
        kinds = sorted({f"{p.zoo.op}/{p.tflite.op}" for p in other if p.zoo and p.tflite})
        print(f"  paired with another operator or MAC count: {len(other)} ({', '.join(kinds)}), "
              f"{sum(p.delta for p in other):+,} cycles")
    fused = activation_gap(pairs)
    print(f"  paired layers where only TFLite's Vela fused an activation: {len(fused)}, {sum(fused):+,} cycles"
          + (f" = {sum(fused) / diff:.0%} of the difference" if diff > 0 and sum(fused) > 0 else ""))
    print(f"  top {top} layers by |zoo - TFLite| cycles (# is the position in the paired order):")
    print(f"  {'#':>3} {'zoo layer':40} {'zoo cyc':>10} {'TFLite layer':40} {'TFL cyc':>10} {'delta':>10}")
    ranked = sorted(((i, p) for i, p in enumerate(pairs) if p.delta), key=lambda ip: -abs(ip[1].delta))
    for i, p in ranked[:top]:
        print(f"  {i:>3} {_layer(p.zoo):40} {(p.zoo.cycles if p.zoo else 0):>10,} "
              f"{_layer(p.tflite):40} {(p.tflite.cycles if p.tflite else 0):>10,} {p.delta:>+10,}")


def activation_gap(pairs: Sequence[Pair]) -> list[int]:
    """The cycle differences of paired layers that have an activation fused on the TFLite side only."""
    return [p.delta for p in pairs if p.zoo and p.tflite and p.tflite.activation and not p.zoo.activation]


def _gap_share(best: Side, tfl: Side) -> str:
    if not (best.vela and tfl.vela):
        return "-"
    gap = activation_gap(match_layers(best.vela.layers, tfl.vela.layers))
    diff = best.vela.total["total_cycles"] - tfl.vela.total["total_cycles"]
    return f"{len(gap)} layers, {sum(gap):+,}" + (f" ({sum(gap) / diff:.0%})" if diff > 0 and sum(gap) > 0 else "")


def top_layers(best: Side, tfl: Side, n: int = 2) -> str:
    """The ``n`` layers whose cycles differ most, for the Markdown table."""
    if not (best.vela and tfl.vela):
        return ""
    out = []
    for p in sorted((p for p in match_layers(best.vela.layers, tfl.vela.layers) if p.delta), key=lambda p: -abs(p.delta))[:n]:
        layer = p.zoo or p.tflite
        assert layer is not None
        where = "" if p.zoo and p.tflite else (" zoo only" if p.zoo else " TFLite only")
        if p.zoo and p.tflite and p.zoo.op != p.tflite.op:
            where = f" (TFLite {p.tflite.op})"
        acts = ""
        if p.zoo and p.tflite and p.zoo.activation != p.tflite.activation:
            acts = f" (activation zoo {p.zoo.activation or 'none'}, TFLite {p.tflite.activation or 'none'})"
        out.append(f"{layer.op} {layer.macs / 1e6:.2f} M MACs{where}{acts} {p.delta:+,}")
    return "; ".join(out)


def _ms(s: Side) -> str:
    return f"{s.vela.total['inference_time_ms']:.3f}" if s.vela else ("not built" if s.error == NOT_BUILT else "failed")


def _ratio(s: Side, tfl: Side) -> str:
    if not (s.vela and tfl.vela):
        return "-"
    return f"{s.vela.total['inference_time_ms'] / tfl.vela.total['inference_time_ms']:.3f}"


def _both(best: Side, tfl: Side, figure: str) -> str:
    def one(s: Side) -> str:
        if s.vela is None:
            return "-"
        t = s.vela.total
        return {"cycles": f"{t['total_cycles']:,}", "sram": f"{t['sram_bytes'] / 1024:.1f}",
                "flash": f"{flash_bytes(t) / 1024:.1f}"}[figure]

    return f"{one(best)} / {one(tfl)}"


def markdown(rows: list[dict[str, Any]]) -> str:
    head = ("| model | target | weights | zoo best (ms) | zoo defaults (ms) | TFLite (ms) | best / TFLite "
            "| defaults / TFLite | cycles zoo best / TFLite | SRAM KiB zoo best / TFLite "
            "| flash KiB zoo best / TFLite | CPU ops zoo best / defaults / TFLite "
            "| layers fused with an activation on the TFLite side only: cycles zoo best − TFLite (share of the difference) "
            "| layers that differ most (cycles zoo best − TFLite) |")
    lines = [head, "|" + " --- |" * head.count(" | ") + " --- |"]
    if any(s.metrics for r in rows for s in (r["best"], r["tflite"])):
        lines = [side_by_side(rows), *lines]
    for r in rows:
        best, defaults, tfl = r["best"], r["defaults"], r["tflite"]
        lines.append(
            f"| {r['model']} | {r['target']} | {r['weights']} | {_ms(best)} | {_ms(defaults)} | {_ms(tfl)} "
            f"| {_ratio(best, tfl)} | {_ratio(defaults, tfl)} | {_both(best, tfl, 'cycles')} "
            f"| {_both(best, tfl, 'sram')} | {_both(best, tfl, 'flash')} "
            f"| {best.cpu_ops} / {defaults.cpu_ops} / {tfl.cpu_ops if tfl.vela else '-'} | {_gap_share(best, tfl)} "
            f"| {top_layers(best, tfl)} |"
        )
    failed: dict[tuple[str, str, str], list[str]] = {}
    for r in rows:
        for s in (r["best"], r["defaults"], r["tflite"]):
            if s.error and s.error != NOT_BUILT:
                failed.setdefault((r["model"], s.label, _gist(s.error)), []).append(r["target"])
    if failed:
        lines += ["", "What could not be built or converted (the gist of its error):", ""]
        lines += [f"- {model} ({', '.join(targets)}), {label}: {gist}" for (model, label, gist), targets in failed.items()]
    return "\n".join(lines) + "\n"


def best_recipe(recipes: Sequence[dict[str, Any]], model: str, target: str) -> dict[str, Any] | None:
    """The fastest weight recipe of ``benchmarks/weight_recipes.py``'s rows for ``model`` on ``target``
    whose numerical check passed (its int8 metric within the model's declared drop)."""
    fit = [r for r in recipes if r.get("model") == model and r["target"] == target and r["transform"] != "-"
           and r.get("passed")]
    return min(fit, key=lambda r: r["cycles"]) if fit else None


def _recipe_cell(recipe: dict[str, Any] | None, tfl: Side, unit: str = "%") -> str:
    """The recipe's cycles, flash and int8 metric, the metric with as many places as its unit needs
    (a ROC-AUC's 0.9535 is not 0.95), as ``metric_text`` prints it."""
    if recipe is None:
        return "-"
    ratio = f" ({recipe['cycles'] / tfl.vela.total['total_cycles']:.3f})" if tfl.vela else ""
    tuned = f", {recipe['qat']} QAT steps" if recipe.get("qat") else ""
    tuned += ", NHWC" if recipe.get("layout") == "nhwc" else ""
    flash = (recipe.get("flash_bytes", 0) + recipe.get("dram_bytes", 0)) / 1024
    return (f"{recipe['transform']}{tuned}: {recipe['cycles']:,}{ratio}, {flash:.1f} KiB, "
            f"{recipe['metric']} {recipe['int8']:{'.2f' if unit == '%' else '.4f'}}")


def side_by_side(rows: list[dict[str, Any]], recipes: Sequence[dict[str, Any]] | None = None) -> str:
    """Issue 59's table: Vela's cycles, SRAM and flash of zoo's program (``--io int8``, NHWC where
    offered; zoo's default precision, no weight recipe) and of the TFLite flow's, and the model's
    metric in float and in each int8 program on the same evaluation set. With ``recipes``
    (``benchmarks/weight_recipes.py --json``), a column for the fastest recipe within the drop."""
    head = ("| model | target | cycles zoo / TFLite (ratio) | SRAM KiB zoo / TFLite | flash KiB zoo / TFLite "
            "| metric (samples) | float: zoo (torch) / TFLite flow (ONNX Runtime) | int8: zoo program / TFLite "
            "| drop zoo / TFLite |" + (" weight recipe within the drop: cycles (vs TFLite), flash, int8 |"
                                       if recipes is not None else ""))
    lines = [head, "|" + " --- |" * (head.count(" | ") + 1)]
    for r in rows:
        best, tfl = r["best"], r["tflite"]
        if best.vela and tfl.vela:
            b, t = best.vela.total["total_cycles"], tfl.vela.total["total_cycles"]
            cycles = f"{b:,} / {t:,} ({b / t:.3f})"
        else:
            cycles = f"{_both(best, tfl, 'cycles')} ({'no TFLite program' if not tfl.vela else 'no zoo program'})"
        m = (best.metrics or tfl.metrics or [{}])[0]
        name = f"{m['name']} ({m['samples']})" if m else "-"
        lines.append(
            f"| {r['model']} | {r['target']} | {cycles} | {_both(best, tfl, 'sram')} | {_both(best, tfl, 'flash')} "
            f"| {name} | {metric_text(best.metrics, 'float')} / {metric_text(tfl.metrics, 'float')} "
            f"| {metric_text(best.metrics, 'program')} / {metric_text(tfl.metrics, 'program')} "
            f"| {_drop(best.metrics)} / {_drop(tfl.metrics)} |"
            + (f" {_recipe_cell(best_recipe(recipes, r['model'], r['target']), tfl, m.get('unit', '%') if m else '%')} |"
               if recipes is not None else ""))
    return "\n".join(lines) + "\n"


def _drop(metrics: list[dict[str, Any]]) -> str:
    if not metrics:
        return "-"
    m = metrics[0]
    drop = (m["float"] - m["program"]) if m.get("higher_is_better", True) else (m["program"] - m["float"])
    return f"{drop:+.2f}" if m.get("unit") == "%" else f"{drop:+.4f}"


_NOISE = re.compile(r"^(WARNING|[IWE]\d{4} |Call arguments|•|File \"|in user code:|lambda |.*Exception encountered when calling)")


def _gist(error: str) -> str:
    """The first line of an error, and the last line before any traceback that says what went wrong
    (onnx2tf's first line only names the layer; TensorFlow's start-up logs say nothing)."""
    message = error.split("Traceback (most recent call last)")[0]
    lines = [x.strip() for x in message.strip().splitlines() if x.strip()]
    said = [x for x in lines[1:] if not _NOISE.match(x) and x != lines[0]]
    return (lines[0] + (f" {said[-1]}" if said else ""))[:240]


def rows_json(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: side_json(v) if isinstance(v, Side) else v for k, v in r.items()} for r in rows]


def rows_from_json(data: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: side_from_json(r[k]) if k in ("best", "defaults", "tflite") else v for k, v in r.items()} for r in data]


def run_jobs(models: Sequence[str], targets: Sequence[str], args: argparse.Namespace, work: Path) -> list[dict[str, Any]]:
    """Each model in a fresh process of this script, ``args.jobs`` at a time, in the order given;
    each one's output goes to its log, its rows to a JSON file this run reads back."""
    from concurrent.futures import ThreadPoolExecutor

    logs = (args.logs or work / "logs").resolve()
    logs.mkdir(parents=True, exist_ok=True)
    print(f"{len(models)} models × {', '.join(targets)}, {args.jobs} at a time; logs in {logs}", flush=True)
    env = {**os.environ, "OMP_NUM_THREADS": "1", "TF_NUM_INTRAOP_THREADS": "1", "TF_NUM_INTEROP_THREADS": "1"}
    done: list[str] = []
    finished: dict[str, list[dict[str, Any]]] = {}

    def one(model: str) -> list[dict[str, Any]]:
        rows_file = work / f"rows-{model}.json"
        rows_file.unlink(missing_ok=True)
        command = [sys.executable, str(Path(__file__).resolve()), "--models", model, "--targets", ",".join(targets),
                   "--top", str(args.top), "--venv", str(args.venv), "--keep", str(work / model),
                   "--rows", str(rows_file), *(["--weights", args.weights] if args.weights else []),
                   *(["--metrics"] if args.metrics else []), *(["--no-defaults"] if args.no_defaults else [])]
        started = time.perf_counter()
        with (logs / f"{model}.log").open("w") as log:
            code = subprocess.run(command, stdout=log, stderr=subprocess.STDOUT, env=env).returncode
        seconds = time.perf_counter() - started
        done.append(model)
        if not rows_file.is_file():
            print(f"[{len(done)}/{len(models)}] {model}: no result, exit status {code} after {seconds:.0f} s "
                  f"(see {logs / f'{model}.log'})", flush=True)
            return [{"model": model, "target": t, "weights": "?", "seconds": seconds,
                     **{k: Side(k, error=f"the comparison process ended with status {code}; see its log")
                        for k in ("best", "defaults", "tflite")}} for t in targets]
        rows = rows_from_json(json.loads(rows_file.read_text()))
        ratios = ", ".join(f"{r['target']} {_ratio(r['best'], r['tflite'])}" for r in rows)
        print(f"[{len(done)}/{len(models)}] {model}: {seconds:.0f} s; zoo best / TFLite: {ratios}", flush=True)
        finished[model] = rows
        if args.markdown:  # the table so far, in the models' order: a run stopped early leaves what it measured
            so_far = [row for m in models for row in finished.get(m, [])]
            _write(args.markdown, markdown(so_far) + f"\n{len(finished)} of {len(models)} models measured so far.\n")
        return rows

    with ThreadPoolExecutor(args.jobs) as pool:
        return [row for rows in pool.map(one, models) for row in rows]


# --- driver -------------------------------------------------------------------------------------


def choose_weights(zoo: Zoo, model: str, asked: str | None) -> str:
    """``asked``, else the model's own weights where they load offline, else ``random``."""
    spec = zoo.model(model)
    if asked:
        return spec.weights_variant(asked).name
    default = spec.weights_variant(None).name
    from zoo.registry.offline import no_network

    try:
        with no_network(True):
            spec.build(default)
    except Exception:
        return "random" if "random" in spec.weights_names else default
    return default


def compare_model(zoo: Zoo, python: Path, model: str, targets: Sequence[str], asked: str | None, top: int,
                  work: Path, metrics: bool = False, defaults_too: bool = True) -> list[dict[str, Any]]:
    started = time.perf_counter()
    weights = choose_weights(zoo, model, asked)
    print(f"\n### {model} ({weights} weights) for {', '.join(targets)}", flush=True)
    best = build_zoo(zoo, model, targets, weights, True, work, metrics=metrics)
    defaults = (build_zoo(zoo, model, targets, weights, False, work) if defaults_too
                else [Side("zoo defaults", error=NOT_BUILT) for _ in targets])
    tfl_path: Path | None = None
    try:
        onnx_path, npz, digest = export_float(zoo, model, weights, work)
        evaluation = export_evaluation(zoo.model(model), work) if metrics else None
        tfl_path, tfl_template = build_tflite(python, model, onnx_path, npz, work, evaluation, zoo.model(model))
        recorded = [n for s in best if s.vela for n in s.notes if n.startswith("calibration sha256")]
        if recorded and digest[:12] not in recorded[0]:
            tfl_template.notes.append(f"calibration sha256 {digest[:12]} differs from zoo's build")
        else:
            tfl_template.notes.append(f"calibration sha256 {digest[:12]}, as zoo's build")
    except Exception as exc:
        tfl_template = Side("TFLite int8", error=f"torch.onnx.export: {type(exc).__name__}: {exc}")
    rows = []
    for i, target in enumerate(targets):
        tfl = Side(tfl_template.label, cpu_ops=0, input_quant=tfl_template.input_quant,
                   seconds=tfl_template.seconds, error=tfl_template.error, notes=list(tfl_template.notes),
                   metrics=list(tfl_template.metrics))
        flags = next((s.vela.flags for s in (best[i], defaults[i]) if s.vela), None)
        if tfl_path and flags:
            vela_tflite(tfl_path, tfl, flags, work, target)
        elif tfl_path:
            tfl.error = "no zoo build to take Vela's flags from"
        print_comparison(model, target, weights, best[i], defaults[i], tfl, top)
        rows.append({"model": model, "target": target, "weights": weights,
                     "best": best[i], "defaults": defaults[i], "tflite": tfl})
    seconds = time.perf_counter() - started
    for row in rows:
        row["seconds"] = seconds
    print(f"{model}: {seconds:.1f} s for {len(targets)} target(s)", flush=True)
    return rows


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    partial.write_text(text)
    partial.replace(path)


def _tail(text: str, lines: int = 20) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    parser.add_argument("model", nargs="?", help="a zoo model, e.g. mnist; or --models")
    parser.add_argument("target", nargs="?", help="an Ethos-U target, e.g. u55-128; or --targets")
    parser.add_argument("--models", help="comma-separated models")
    parser.add_argument("--targets", help="comma-separated targets")
    parser.add_argument("--all", action="store_true", help=f"{', '.join(ALL_MODELS)} × {', '.join(ALL_TARGETS)}")
    parser.add_argument("--catalogue", action="store_true",
                        help=f"the {len(CATALOGUE_MODELS)} models of issue 45's table × {', '.join(CATALOGUE_TARGETS)}")
    parser.add_argument("--jobs", type=int, default=1, help="models compared at a time, each in a process of its own")
    parser.add_argument("--logs", type=Path, help="with --jobs: each model's output here (default: the work folder)")
    parser.add_argument("--rows", type=Path, help=argparse.SUPPRESS)  # a --jobs child writes its rows here
    parser.add_argument("--weights", help="weights variant for every model (default: its own if offline, else random)")
    parser.add_argument("--top", type=int, default=8, help="layers to show per comparison")
    parser.add_argument("--markdown", type=Path, help="also write the table here")
    parser.add_argument("--venv", type=Path, default=TFLITE_VENV, help="the TensorFlow venv (made if missing)")
    parser.add_argument("--keep", type=Path, help="keep the .onnx, .tflite, .tosa and Vela's output here")
    parser.add_argument("--venv-only", action="store_true", help="make the TensorFlow venv and stop (make tflite-venv)")
    parser.add_argument("--trained", action="store_true",
                        help=f"the models trained here ({', '.join(TRAINED_MODELS)}) × {', '.join(CATALOGUE_TARGETS)}, "
                             "with --metrics")
    parser.add_argument("--metrics", action="store_true",
                        help="also the model's metric, float and int8, for zoo (its --verify) and the TFLite flow")
    parser.add_argument("--no-defaults", action="store_true", help="skip zoo's float-I/O NCHW build")
    parser.add_argument("--json", type=Path, help="also write the rows here (JSON)")
    parser.add_argument("--table", type=Path, help="only print the side-by-side table of the rows a --json run wrote")
    parser.add_argument("--recipes", type=Path, help="with --table: benchmarks/weight_recipes.py's --json rows")
    args = parser.parse_args()
    if args.table:
        recipes = json.loads(args.recipes.read_text()) if args.recipes else None
        print(side_by_side(rows_from_json(json.loads(args.table.read_text())), recipes), end="")
        return 0
    if args.venv_only:
        print(tflite_python(args.venv))
        return 0
    models = list(ALL_MODELS) if args.all else (args.models.split(",") if args.models else [args.model])
    targets = list(ALL_TARGETS) if args.all else (args.targets.split(",") if args.targets else [args.target])
    if args.catalogue:
        models, targets = list(CATALOGUE_MODELS), list(CATALOGUE_TARGETS)
    if args.trained:
        models, targets, args.metrics = list(TRAINED_MODELS), list(CATALOGUE_TARGETS), True
    if None in models or None in targets:
        parser.error("give MODEL TARGET, --models/--targets, or --all")

    started = time.perf_counter()
    from zoo import Zoo
    from zoo.registry.request import reproducible
    reproducible.pin()  # before torch computes anything, as a zoo build needs

    python = tflite_python(args.venv)
    zoo = Zoo()
    print(f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at start", flush=True)
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="zoo-vs-tflite-") as tmp:
        work = (args.keep or Path(tmp)).resolve()
        work.mkdir(parents=True, exist_ok=True)
        if args.jobs > 1:
            rows = run_jobs(models, targets, args, work)
        else:
            for model in models:
                rows += compare_model(zoo, python, model, targets, args.weights, args.top, work,
                                      metrics=args.metrics, defaults_too=not args.no_defaults)
                if args.json:
                    _write(args.json, json.dumps(rows_json(rows), indent=1))
                if args.markdown:  # after each model, as run_jobs does: a run stopped early keeps what it measured
                    _write(args.markdown, markdown(rows) + f"\n{len(rows)} comparisons so far.\n")
    if args.rows:
        args.rows.write_text(json.dumps(rows_json(rows), indent=1))
    if args.json:
        _write(args.json, json.dumps(rows_json(rows), indent=1))
    elapsed = time.perf_counter() - started
    table = markdown(rows)
    print("\n" + table)
    print(f"{len(rows)} comparison(s) in {elapsed:.1f} s ({elapsed / 60:.1f} min); "
          f"load average {os.getloadavg()[0]:.1f} at the end")
    if args.markdown:
        _write(args.markdown, table + f"\n{len(rows)} comparisons in {elapsed / 60:.1f} min on {os.cpu_count()} cores.\n")
    failed = any(s.error and s.error != NOT_BUILT for r in rows for s in (r["best"], r["defaults"], r["tflite"]))
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
