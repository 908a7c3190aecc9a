"""Turn an ExecuTorch ``aot_arm_compiler``-style model file into a ModelSpec
(an ``.onnx`` file goes to ``onnx_file``, a ``.tflite`` one to ``tflite_file``, both ``read_file.ReadFile``s).

The file defines ``ModelUnderTest`` (an ``nn.Module`` instance) and
``ModelInputs`` (a tuple of example tensors), and may define
``CalibrationData`` (a list of input tuples). Loading it runs the file, so it
imports torch: this only happens when the user passes ``--model-file``.
"""

from __future__ import annotations

import hashlib
import importlib.util
import re
import traceback
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from zoo import _interrupt
from zoo._errors import MissingExtraError, SpecError, UsageError
from zoo._spec import Dataset, InputSpec, ModelSpec, WeightsVariant
from zoo.registry.model_files.read_file import RANDOM_SAMPLES, ReadFile

CALIBRATION_MAX_SAMPLES = 1000  # the same cap aot_arm_compiler applies


def _as_tuple(value: Any, what: str) -> tuple[Any, ...]:
    import torch

    if isinstance(value, torch.Tensor):
        return (value,)
    if isinstance(value, (tuple, list)) and value and all(isinstance(v, torch.Tensor) for v in value):
        return tuple(value)
    raise SpecError(f"{what} must be a tensor or a tuple of tensors, got {type(value).__name__}")


def _where(exc: BaseException, path: Path) -> str:
    """`` at line N: Type: message`` of an error raised while running the file at ``path``."""
    if isinstance(exc, SyntaxError) and exc.filename == str(path):
        return f" at line {exc.lineno}: {type(exc).__name__}: {exc.msg}"
    lines = [f.lineno for f in traceback.extract_tb(exc.__traceback__) if f.filename == str(path)]
    text = str(exc).strip().splitlines()
    error = f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__
    return f" at line {lines[-1]}: {error}" if lines else f": {error}"


def model_name_for(path: Path) -> str:
    """The catalog name a model file registers under: its file stem, cleaned."""
    return re.sub(r"[^a-z0-9_.-]+", "_", Path(path).stem.lower()).strip("_.-") or "model"


def spec_from_model_file(path: Path) -> ModelSpec:
    path = Path(path).expanduser().resolve()
    if path.is_file() and path.suffix.lower() == ".onnx":
        from zoo.registry.model_files.onnx_file import load_onnx_file

        return _spec_from_read_file(path, load_onnx_file(path))
    if path.is_file() and path.suffix.lower() == ".tflite":
        from zoo.registry.model_files.tflite_file import load_tflite_file

        return _spec_from_read_file(path, load_tflite_file(path))
    if not path.is_file() or path.suffix != ".py":
        raise UsageError(f"--model-file {path}: expected an existing .py file defining ModelUnderTest and "
                         "ModelInputs, an .onnx file or a .tflite file")
    from zoo.registry.request import reproducible
    reproducible.pin()  # the file's own module-level torch code runs in the build's numerics mode
    try:
        import torch
    except ImportError:

        raise MissingExtraError("--model-file") from None

    from zoo.registry.compile import digest_samples

    # A Ctrl-C while torch loaded may have been swallowed by it: the file does not run then.
    _interrupt.check()
    source = path.read_bytes()
    file_digest = hashlib.sha256(source).hexdigest()
    # aot_arm_compiler files usually build their model with random init; seed
    # it so the same file always gives the same weights (and bytes).
    torch.manual_seed(0)
    module_spec = importlib.util.spec_from_file_location(f"zoo_model_file_{file_digest[:12]}", path)
    if module_spec is None or module_spec.loader is None:
        raise UsageError(f"--model-file {path}: cannot be loaded as a Python module")
    module = importlib.util.module_from_spec(module_spec)
    try:
        module_spec.loader.exec_module(module)
    except (Exception, SystemExit) as exc:  # the file's own error, as the file's failure
        _interrupt.check(exc)  # unless it is what a Ctrl-C became
        raise SpecError(f"model file {path} failed to load{_where(exc, path)}") from exc

    for required in ("ModelUnderTest", "ModelInputs"):
        if not hasattr(module, required):
            raise SpecError(f"model file {path} does not define {required}")
    model = module.ModelUnderTest
    if not isinstance(model, torch.nn.Module):
        raise SpecError(f"model file {path}: ModelUnderTest must be an nn.Module instance, got {type(model).__name__}")
    model.eval()
    inputs = _as_tuple(module.ModelInputs, f"model file {path}: ModelInputs")

    raw_cal = getattr(module, "CalibrationData", None)
    if raw_cal is None:
        cal_samples = [inputs]
        cal_description = "the file's ModelInputs only (define CalibrationData for a better quantization)"
    else:
        try:
            items = list(raw_cal)
        except TypeError:
            raise SpecError(f"model file {path}: CalibrationData must be a list (or any iterable) of input tuples, "
                            f"like ModelInputs; got {type(raw_cal).__name__}") from None
        cal_samples = [_as_tuple(s, f"model file {path}: CalibrationData item") for s in items][:CALIBRATION_MAX_SAMPLES]
        cal_description = f"CalibrationData from {path.name}"
    cal_digest = digest_samples(cal_samples)

    name = model_name_for(path)
    dtype_names = {torch.float32: "float32", torch.float16: "float16", torch.int8: "int8", torch.uint8: "uint8", torch.int16: "int16", torch.int32: "int32", torch.int64: "int64", torch.bool: "bool"}
    return ModelSpec(
        name=name,
        version=file_digest[:16],
        description=(module.__doc__ or f"Model file {path}").strip().splitlines()[0],
        task="custom",
        inputs=tuple(
            InputSpec(f"input_{i}", tuple(int(d) for d in t.shape), dtype_names.get(t.dtype, str(t.dtype)))
            for i, t in enumerate(inputs)
        ),
        build=lambda _weights: model,
        example_inputs=lambda: inputs,
        calibration=Dataset(len(cal_samples), cal_description, lambda: list(cal_samples), lambda: cal_digest),
        weights=(WeightsVariant("file", f"as built by {path.name} (torch seed 0)", str(path), "unknown", lambda: file_digest),),
        calibration_from_dir=lambda d: calibration_from_pt_dir(d, [tuple(t.shape) for t in inputs]),
    )


def _spec_from_read_file(path: Path, read: ReadFile) -> ModelSpec:
    # Listing reads only what the loader read; the module and the samples are made when a build asks.
    return ModelSpec(
        name=model_name_for(path),
        version=read.version,
        description=read.description,
        task="custom",
        inputs=read.inputs,
        axes=read.axes,
        build=lambda _weights: read.module(),
        example_inputs=lambda: read.samples()[0],
        calibration=Dataset(RANDOM_SAMPLES, f"{RANDOM_SAMPLES} random standard-normal inputs (torch seed 0); "
                            "give --calibration-dir for a real quantization",
                            lambda: list(read.samples()), read.samples_digest),
        weights=(WeightsVariant("file", f"the weights in {path.name}", str(path), "unknown", lambda: read.identity),),
        calibration_from_dir=lambda d: calibration_from_pt_dir(d, [i.shape for i in read.inputs]),
    )


def calibration_from_pt_dir(directory: Path, shapes: Sequence[tuple[int, ...]]) -> Dataset:
    """A folder of ``.pt`` tensors (or tuples of tensors), as aot_arm_compiler's ``--calibration_data``,
    each sample of the model's input ``shapes``."""
    import torch

    directory = Path(directory)
    files = sorted(p for p in directory.rglob("*") if p.is_file() and p.suffix.lower() in (".pt", ".pth"))
    if not files:
        raise UsageError(f"--calibration-dir {directory}: no .pt or .pth files found")
    files = files[:CALIBRATION_MAX_SAMPLES]
    h = hashlib.sha256()
    for f in files:
        h.update(str(f.relative_to(directory)).encode() + b"\0" + hashlib.sha256(f.read_bytes()).digest())
    identity = h.hexdigest()

    def load() -> list[tuple[Any, ...]]:
        out = []
        for f in files:
            try:
                value = torch.load(f, weights_only=True)
            except Exception as exc:
                raise UsageError(f"--calibration-dir: cannot load {f}: {exc}") from None
            sample = _as_tuple(value, f"calibration file {f}")
            if [tuple(t.shape) for t in sample] != [tuple(s) for s in shapes]:
                raise UsageError(f"--calibration-dir: {f} has shapes {[tuple(t.shape) for t in sample]}, the model takes {[tuple(s) for s in shapes]}")
            out.append(sample)
        return out

    return Dataset(len(files), f"{len(files)} tensors from {directory}", load, lambda: identity)
