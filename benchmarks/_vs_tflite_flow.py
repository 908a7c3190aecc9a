"""The TFLite flow of ``benchmarks/vs_tflite.py``, from zoo's venv: the float model and calibration samples
zoo quantizes, exported to ONNX; the TensorFlow venv (made on first use); the conversion (and, with an
evaluation set, the interpreter's outputs) in a process of that venv (``_tflite_convert.py``), whose
abort is named; and Vela on the ``.tflite`` with zoo's flags."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchmarks._vs_tflite_metrics import Evaluation, tflite_metrics
from benchmarks._vs_tflite_sides import Side
from benchmarks._vs_tflite_vela import run_vela, tail

if TYPE_CHECKING:
    from zoo import Zoo

__all__ = ["HELPER", "SAME_NETWORK", "TFLITE_PACKAGES", "TFLITE_VENV", "build_tflite", "convert_tflite",
           "export_float", "helper_result", "outputs_path", "tflite_python", "vela_tflite"]

ROOT = Path(__file__).resolve().parents[1]
HELPER = Path(__file__).with_name("_tflite_convert.py")
TFLITE_VENV = ROOT / ".venv-tflite"
TFLITE_PACKAGES = (
    "tensorflow-cpu==2.21.0", "tf-keras", "onnx2tf==1.28.8", "onnx", "onnxruntime", "onnx-graphsurgeon",
    "sng4onnx", "sne4onnx", "psutil", "ai-edge-litert",
)
SAME_NETWORK = 0.5
"""The lowest cosine similarity of the int8 .tflite's output to ONNX Runtime's float output at which the
two count as one network: the converted catalogue models measured 0.92 (mobilenet-v3-large at random
weights) to 1.00; squeezenet1-0's, broken by onnx2tf's ceil-mode pooling, 0.0."""


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
    return {"error": f"{said}:\n{tail(_STAGE.sub('', stdout + stderr))}", "stage": stages[-1] if stages else None}


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
    if info.get("stage_seconds"):
        side.notes.append("seconds by stage in the TensorFlow venv: "
                          + ", ".join(f"{k} {v:.0f} s" for k, v in info["stage_seconds"].items()))
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

