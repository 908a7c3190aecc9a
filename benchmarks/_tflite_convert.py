"""The TFLite flow's half of ``benchmarks/vs_tflite.py``; runs in the TensorFlow venv, never in zoo's.

ONNX → onnx2tf (a SavedModel, NHWC) → TensorFlow's converter, full-integer int8 with int8
input and output, calibrated on the given samples → ``.tflite``. Prints one JSON object on
its last line of stdout: the input's and output's quantization and the operators, or
``{"error": ...}`` with the converter's message (exit status 1). Before each stage it prints
``zoo-stage: STAGE`` to stderr, so that a process TensorFlow aborts (a signal, no JSON) is named
by the stage it died in.

With ``--evaluate EVAL.npz --outputs OUT.npz`` it also runs the int8 ``.tflite`` (TensorFlow Lite's
interpreter, ai-edge-litert) and the ONNX file (ONNX Runtime, float) on every evaluation sample
and saves their outputs, dequantized, in ONNX's layout: ``tflite_J`` and ``onnx_J`` for output J,
each (samples, *shape). The caller computes the model's metric on them with zoo's evaluators.

    .venv-tflite/bin/python benchmarks/_tflite_convert.py MODEL.onnx CALIBRATION.npz OUT.tflite \
        [--evaluate EVAL.npz --outputs OUTPUTS.npz]
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import io
import json
import os
import re
import sys
import time
import traceback
from pathlib import Path
from typing import Any

import numpy as np

# onnx2tf runs the ONNX and TF graphs on a sample image to check (and sometimes settle) its layout
# choices for 3-channel image inputs. It downloads that sample unless the current folder has this file;
# the download fails offline, so the file is made from zoo's calibration data (onnx2tf resizes it).
ONNX2TF_SAMPLE = "calibration_image_sample_data_20x128x128x3_float32.npy"


def provide_sample(calibration: dict[str, np.ndarray], folder: Path) -> None:
    first = calibration[sorted(calibration)[0]]
    first = first.reshape(-1, *first.shape[2:])  # (samples, batch, ...) → (images, ...)
    if first.ndim == 4 and first.shape[1] == 3:
        np.save(folder / ONNX2TF_SAMPLE, first.transpose(0, 2, 3, 1)[:20].astype(np.float32))


def to_saved_model(onnx_path: Path, folder: Path, signature_defs: bool = False) -> str:
    """onnx2tf's Keras model of ``onnx_path``, saved in ``folder`` as onnx2tf saves it; returns onnx2tf's
    printout. onnx2tf would also convert the model to float32 and float16 ``.tflite`` files, which the
    flow never reads: it is asked for the model alone. Where TensorFlow refuses an ONNX node name as a
    scope (e.g. ``/Conv_13``), it converts once more with ``--output_signaturedefs``, whose names it takes."""
    import onnx2tf

    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            model = onnx2tf.convert(
                input_onnx_file_path=str(onnx_path),
                output_folder_path=str(folder),
                copy_onnx_input_output_names_to_tflite=True,
                output_signaturedefs=signature_defs,
                disable_model_save=True,
                non_verbose=True,
            )
    except SystemExit as exc:  # onnx2tf ends with sys.exit(1) after printing its error to the captured stdout
        said = [_ANSI.sub("", line) for line in out.getvalue().splitlines() if line.strip()]
        raise RuntimeError(f"onnx2tf exited with status {exc.code}: " + " ".join(said[-6:])) from None
    try:
        _save(model, folder, signature_defs)
    except (ValueError, KeyError, AssertionError) as exc:  # what onnx2tf answers with --output_signaturedefs
        if signature_defs or not any(said in str(exc) for said in _ONE_SIGNATURE):
            raise
        _stage("onnx2tf again, with --output_signaturedefs")
        return to_saved_model(onnx_path, folder, signature_defs=True)
    return out.getvalue()


_ONE_SIGNATURE = ("root scope name has to match", "Failed to add concrete function",
                  "references an 'untracked' resource")


def _save(model: Any, folder: Path, signature_defs: bool) -> None:
    """The model in ``folder`` as onnx2tf 1.28.8 saves it: plainly, or with one serving signature."""
    import tensorflow as tf

    if not signature_defs:
        tf.saved_model.save(model, str(folder))
        return
    import tf_keras

    archive = tf_keras.export.ExportArchive()
    archive.add_endpoint(name="serving_default", fn=lambda *inputs: model(inputs),
                         input_signature=[tf.TensorSpec(t.shape, t.dtype, t.name) for t in model.inputs])
    archive.write_out(str(folder))


_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _layout_for(sample: np.ndarray, wanted: list[int | None]) -> np.ndarray:
    """``sample`` (NCHW, as zoo calibrates) in the layout the SavedModel takes (onnx2tf makes 4-D inputs NHWC)."""
    if len(wanted) == sample.ndim and all(w in (None, s) for w, s in zip(wanted, sample.shape, strict=True)):
        return sample
    if sample.ndim == 4:
        nhwc = sample.transpose(0, 2, 3, 1)
        if all(w in (None, s) for w, s in zip(wanted, nhwc.shape, strict=True)):
            return nhwc
    if sample.ndim == 3:
        nwc = sample.transpose(0, 2, 1)
        if all(w in (None, s) for w, s in zip(wanted, nwc.shape, strict=True)):
            return nwc
    raise ValueError(f"calibration sample {list(sample.shape)} does not fit the SavedModel's input {wanted}")


def to_int8_tflite(saved_model: Path, calibration: dict[str, np.ndarray]) -> bytes:
    """Full-integer int8 (int8 input and output), calibrated on every sample of ``calibration``."""
    import tensorflow as tf

    loaded = tf.saved_model.load(str(saved_model))
    signature = loaded.signatures["serving_default"]
    specs = signature.structured_input_signature[1]
    names = sorted(specs)  # onnx2tf keeps the ONNX input names; zoo's models name theirs
    arrays = [calibration[k] for k in sorted(calibration)]
    if len(names) != len(arrays):
        raise ValueError(f"the SavedModel takes {len(names)} inputs, the calibration data has {len(arrays)}")
    count = len(arrays[0])

    def representative() -> Any:
        for i in range(count):
            yield {name: _layout_for(a[i], specs[name].shape.as_list()).astype(np.float32)
                   for name, a in zip(names, arrays, strict=True)}

    converter = tf.lite.TFLiteConverter.from_saved_model(str(saved_model))
    converter.optimizations = [tf.lite.Optimize.DEFAULT]
    converter.representative_dataset = representative
    converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
    converter.inference_input_type = tf.int8
    converter.inference_output_type = tf.int8
    return bytes(converter.convert())


def describe(tflite: bytes) -> dict[str, Any]:
    """Quantization of the inputs and outputs, and the operators by kind."""
    from ai_edge_litert.interpreter import Interpreter

    interpreter = Interpreter(model_content=tflite)

    def tensor(d: dict[str, Any]) -> dict[str, Any]:
        scale, zero_point = d["quantization"]
        return {"name": d["name"], "shape": [int(x) for x in d["shape"]], "dtype": np.dtype(d["dtype"]).name,
                "scale": float(scale), "zero_point": int(zero_point)}

    ops = [op["op_name"] for op in interpreter._get_ops_details()]
    return {
        "inputs": [tensor(d) for d in interpreter.get_input_details()],
        "outputs": [tensor(d) for d in interpreter.get_output_details()],
        "operators": dict(collections.Counter(ops)),
    }


def allocated(tflite: bytes) -> Any:
    """TensorFlow Lite's interpreter for ``tflite``, its tensors allocated."""
    from ai_edge_litert.interpreter import Interpreter

    interpreter = Interpreter(model_content=tflite)
    try:
        interpreter.allocate_tensors()
    except RuntimeError:  # XNNPACK cannot prepare some programs (squeezenet1-0's node 41): TFLite's own kernels can
        from ai_edge_litert.interpreter import OpResolverType

        interpreter = Interpreter(model_content=tflite,
                                  experimental_op_resolver_type=OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES)
        interpreter.allocate_tensors()
    return interpreter


def _quantize(x: np.ndarray, detail: dict[str, Any]) -> np.ndarray:
    scale, zero_point = detail["quantization"]
    info = np.iinfo(detail["dtype"])
    return np.clip(np.round(x / scale) + zero_point, info.min, info.max).astype(detail["dtype"])


def _dequantize(q: np.ndarray, detail: dict[str, Any]) -> np.ndarray:
    scale, zero_point = detail["quantization"]
    return ((q.astype(np.float32) - zero_point) * scale).astype(np.float32)


def _onnx_layout(got: np.ndarray, expected: tuple[int, ...]) -> np.ndarray:
    """A .tflite output in the ONNX output's layout (onnx2tf writes 4-D and 3-D outputs channels-last)."""
    if got.shape == expected:
        return got
    for axes in ((0, 3, 1, 2), (0, 2, 1)):
        if got.ndim == len(axes) and got.transpose(axes).shape == expected:
            return got.transpose(axes)
    if got.size == int(np.prod(expected)):
        return got.reshape(expected)
    raise ValueError(f"the .tflite's output {list(got.shape)} does not fit ONNX's {list(expected)}")


def evaluate(tflite: bytes, onnx_path: Path, evaluation: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Every output of the int8 program (dequantized) and of ONNX Runtime's float run, for every
    sample of ``evaluation`` (one array per input, NCHW as zoo's samples); outputs paired by name,
    else in order."""
    import onnxruntime

    session = onnxruntime.InferenceSession(str(onnx_path), providers=["CPUExecutionProvider"])
    interpreter = allocated(tflite)
    inputs, outputs = interpreter.get_input_details(), interpreter.get_output_details()
    onnx_inputs, onnx_outputs = session.get_inputs(), session.get_outputs()
    by_name = {d["name"]: d for d in outputs}
    if all(o.name in by_name for o in onnx_outputs):
        outputs = [by_name[o.name] for o in onnx_outputs]
    tflite_inputs = {d["name"]: d for d in inputs}
    arrays = [evaluation.get(o.name, evaluation[k]) for o, k in zip(onnx_inputs, sorted(evaluation), strict=True)]
    ordered = [tflite_inputs[o.name] for o in onnx_inputs] if all(o.name in tflite_inputs for o in onnx_inputs) else inputs
    got: dict[str, list[np.ndarray]] = {}
    for i in range(len(arrays[0])):
        feed = {o.name: a[i] for o, a in zip(onnx_inputs, arrays, strict=True)}
        expected = session.run(None, feed)
        for detail, a in zip(ordered, arrays, strict=True):
            interpreter.set_tensor(detail["index"], _quantize(_layout_for(a[i], [int(d) for d in detail["shape"]]), detail))
        interpreter.invoke()
        for j, (detail, want) in enumerate(zip(outputs, expected, strict=True)):
            out = _dequantize(interpreter.get_tensor(detail["index"]), detail)
            got.setdefault(f"tflite_{j}", []).append(_onnx_layout(out, tuple(want.shape)))
            got.setdefault(f"onnx_{j}", []).append(np.asarray(want, dtype=np.float32))
    return {k: np.stack(v) for k, v in got.items()}


def agreement(tflite: bytes, onnx_path: Path, calibration: dict[str, np.ndarray], samples: int = 8) -> float:
    """The lowest cosine similarity, over the first ``samples`` calibration samples, between the int8
    program's first output (dequantized) and ONNX Runtime's float output: the same network or not."""
    import onnxruntime

    session = onnxruntime.InferenceSession(str(onnx_path), providers=["CPUExecutionProvider"])
    interpreter = allocated(tflite)
    inputs, output = interpreter.get_input_details(), interpreter.get_output_details()[0]
    arrays = [calibration[k] for k in sorted(calibration)]
    worst = 1.0
    for i in range(min(samples, len(arrays[0]))):
        feed = {o.name: calibration.get(o.name, a)[i] for o, a in zip(session.get_inputs(), arrays, strict=True)}
        expected = session.run(None, feed)[0]
        for detail, a in zip(inputs, arrays, strict=True):
            x = _layout_for(a[i], [int(d) for d in detail["shape"]])
            scale, zero_point = detail["quantization"]
            q = np.clip(np.round(x / scale) + zero_point, -128, 127).astype(np.int8)
            interpreter.set_tensor(detail["index"], q)
        interpreter.invoke()
        scale, zero_point = output["quantization"]
        got = (interpreter.get_tensor(output["index"]).astype(np.float32) - zero_point) * scale
        if got.size != expected.size:
            raise ValueError(f"the .tflite's first output {list(got.shape)} is not ONNX's {list(expected.shape)}")
        if got.ndim == 4 and got.shape != expected.shape:
            expected = expected.transpose(0, 2, 3, 1)
        a, b = got.reshape(-1).astype(np.float64), expected.reshape(-1).astype(np.float64)
        worst = min(worst, float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b) + 1e-12)))
    return worst


class _Clock:
    """The seconds spent in each stage, the current one up to now (the JSON's ``stage_seconds``)."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self.stage: str | None = None
        self.since = time.perf_counter()

    def start(self, stage: str) -> None:
        self.lap()
        self.stage = stage

    def lap(self) -> dict[str, float]:
        now = time.perf_counter()
        if self.stage is not None:
            self.seconds[self.stage] = round(self.seconds.get(self.stage, 0.0) + now - self.since, 1)
        self.since = now
        return dict(self.seconds)


_CLOCK = _Clock()


def _stage(name: str) -> None:
    _CLOCK.start(name)
    print(f"zoo-stage: {name}", file=sys.stderr, flush=True)


def versions() -> dict[str, str]:
    from importlib.metadata import version

    return {name: version(name) for name in ("tensorflow-cpu", "onnx2tf", "onnx", "ai-edge-litert")}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("onnx", type=Path)
    parser.add_argument("calibration", type=Path, help=".npz: one array (samples, *input shape) per input, by input name")
    parser.add_argument("out", type=Path)
    parser.add_argument("--evaluate", type=Path, help=".npz of evaluation samples, as the calibration's")
    parser.add_argument("--outputs", type=Path, help="with --evaluate: where the outputs go (.npz)")
    args = parser.parse_args()
    onnx_path, calibration_path, out = args.onnx.resolve(), args.calibration.resolve(), args.out.resolve()
    stage = "onnx2tf"
    _stage(stage)
    try:
        with np.load(calibration_path) as data:
            calibration = {k: data[k] for k in data.files}
        saved = out.with_suffix(".saved_model")
        os.chdir(out.parent)  # where onnx2tf looks for its sample image
        provide_sample(calibration, out.parent)
        printed = to_saved_model(onnx_path, saved)
        stage = "TFLiteConverter"
        _stage(stage)
        tflite = to_int8_tflite(saved, calibration)
        out.write_bytes(tflite)
        stage = "reading the .tflite"
        _stage(stage)
        info = describe(tflite)
        stage = "running the .tflite"
        _stage(stage)
        info["cosine_vs_onnx"] = agreement(tflite, onnx_path, calibration)
        if args.evaluate and args.outputs:
            stage = "evaluating the .tflite"
            _stage(stage)
            with np.load(args.evaluate.resolve()) as data:
                evaluation = {k: data[k] for k in data.files}
            outputs = evaluate(tflite, onnx_path, evaluation)
            np.savez(args.outputs.resolve(), **outputs)
            info["evaluated"] = len(next(iter(evaluation.values())))
    except Exception as exc:  # the caller prints the converter's own message and goes on
        tail = traceback.format_exc().strip().splitlines()[-12:]
        printed = locals().get("printed", "")
        print(json.dumps({"error": f"{stage}: {type(exc).__name__}: {exc}", "traceback": tail,
                          "log": printed[-2000:] if isinstance(printed, str) else ""}))
        return 1
    print(json.dumps({**info, "bytes": len(tflite), "versions": versions(), "stage_seconds": _CLOCK.lap()}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
