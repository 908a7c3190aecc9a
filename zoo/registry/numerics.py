"""The numerical check, run at build time while the lowered program still exists.

Ethos-U: no host can run the Vela command stream, so the lowered edge program
runs in torch with every delegate call replaced by a run of the exact TOSA
graph that Vela consumed, on ``tosa_reference_model`` (tosa-tools). The CPU
side (the input quantize, the output dequantize, operators left between
partitions) runs in torch in graph order, as in the .pte. The result is
compared with the fake-quantized torch model (ExecuTorch's Ethos-U tests:
within ``ATOL + RTOL·|x| + QTOL·scale``) and with the float model (cosine
similarity and relative Frobenius error, ExecuTorch's defaults), plus top-1
agreement and, on labelled data, accuracy.

Portable: the final .pte runs on the host with ``executorch.runtime`` and is
compared with the float model.

torch, numpy and the reference model are imported inside functions.
"""

from __future__ import annotations

import contextlib
import functools
import math
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, ParamSpec, TypeVar

from zoo._errors import BuildError, MissingExtraError
from zoo._spec import Dataset, ModelSpec, Sample

Progress = Callable[[str, int | None, int | None], None]
P = ParamSpec("P")
R = TypeVar("R")

# Bump when the check changes what it measures or accepts: recorded results
# from another version are run again by --verify.
CHECK_VERSION = "1"
MAX_SAMPLES = 1000
BUNDLE_CASES = 3
# ExecuTorch's TosaPipelineINT defaults (backends/arm/test/tester/test_pipeline.py).
QTOL = 1
ATOL = 1e-3
RTOL = 1e-3
COSINE_MIN = 0.9
FROBENIUS_MAX = 0.15
ACCURACY_DROP_MAX_PP = 1.0
# The portable .pte runs the same float32 math as torch, in another order.
PORTABLE_ATOL = 1e-5
PORTABLE_RTOL = 1e-4
PORTABLE_COSINE_MIN = 0.999


@dataclass
class EvalSet:
    samples: list[Sample]
    labels: list[int] | None
    name: str
    """``evaluation`` (the model's labelled set) or ``calibration``."""
    identity: str = ""
    """The dataset's identity: the recorded results hold only for this data."""


@dataclass
class NumericsResult:
    record: dict[str, Any]
    """JSON-friendly, stored in the manifest under ``verification.numerics``."""
    cases: list[tuple[Sample, list[Any]]] = field(default_factory=list)
    """The first ``BUNDLE_CASES`` inputs with the outputs the artifact must give."""
    tolerance: dict[str, float] = field(default_factory=dict)
    """atol/rtol that a device run of ``cases`` must meet."""

    @property
    def passed(self) -> bool:
        return bool(self.record.get("passed"))


def data_identity(spec: ModelSpec, calibration: Dataset) -> str:
    """Names the data the check runs on, torch-free: the recorded results hold only for it."""
    dataset = spec.evaluation if spec.evaluation is not None else calibration
    kind = "evaluation" if spec.evaluation is not None else "calibration"
    return f"{kind}:{dataset.identity()};max={MAX_SAMPLES};check={CHECK_VERSION}"


def evaluation_set(spec: ModelSpec, calibration: Dataset, loaded: list[Sample] | None = None) -> EvalSet:
    """The model's labelled evaluation set if it has one, else the calibration samples
    (``loaded``, if the caller has them already)."""
    identity = data_identity(spec, calibration)
    if spec.evaluation is not None:
        items = spec.evaluation.load()[:MAX_SAMPLES]
        samples = [_as_sample(s) for s, _ in items]
        return EvalSet(samples, [int(label) for _, label in items], "evaluation", identity)
    samples = loaded if loaded is not None else [_as_sample(s) for s in calibration.load()]
    return EvalSet(samples[:MAX_SAMPLES], None, "calibration", identity)


def is_classifier(spec: ModelSpec) -> bool:
    return "classif" in spec.task


def _as_sample(value: Any) -> Sample:
    return tuple(value) if isinstance(value, (tuple, list)) else (value,)


def _outputs(value: Any) -> list[Any]:
    from torch.utils import _pytree

    leaves: list[Any] = _pytree.tree_flatten(value)[0]
    return leaves


# --- the TOSA reference model in place of each delegate ------------------------------------


@contextlib.contextmanager
def captured_native_output() -> Iterator[Any]:
    """The reference model prints from C++ (a TOSA version note on every run): keep it off the terminal."""
    sys.stdout.flush()
    sys.stderr.flush()
    with tempfile.TemporaryFile() as sink:
        saved = os.dup(1), os.dup(2)
        try:
            os.dup2(sink.fileno(), 1)
            os.dup2(sink.fileno(), 2)
            yield sink
        finally:
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            os.close(saved[0])
            os.close(saved[1])


def _graph_io(tosa: bytes) -> tuple[list[tuple[int, ...]], list[tuple[int, ...]]]:
    from tosa.TosaGraph import TosaGraph  # type: ignore[import-untyped]

    block = TosaGraph.GetRootAs(tosa, 0).Regions(0).Blocks(0)
    tensors = {block.Tensors(i).Name(): block.Tensors(i) for i in range(block.TensorsLength())}

    def shape(name: bytes) -> tuple[int, ...]:
        return tuple(int(d) for d in tensors[name].ShapeAsNumpy())

    return ([shape(block.Inputs(i)) for i in range(block.InputsLength())],
            [shape(block.Outputs(i)) for i in range(block.OutputsLength())])


def _physical(t: Any) -> Any:
    """A tensor's data in memory order, as the TOSA graph takes it."""
    order = tuple(t.dim_order())
    return t.permute(order).contiguous() if order != tuple(range(t.dim())) else t.contiguous()


def _from_physical(array: Any, like: Any) -> Any:
    import torch

    order = tuple(like.dim_order())
    t = torch.from_numpy(array.copy())
    if order == tuple(range(like.dim())):
        return t.reshape(like.shape)
    inverse = [order.index(i) for i in range(len(order))]
    return t.reshape([like.shape[i] for i in order]).permute(inverse).contiguous()


class _Reference:
    """Runs delegate calls on the TOSA reference model, by the TOSA graph each delegate was made from."""

    def __init__(self, graphs: dict[bytes, bytes]) -> None:
        self.graphs = graphs
        self.by_module: dict[int, tuple[bytes, Any, list[tuple[int, ...]]]] = {}
        self.runs = 0
        self.seconds = 0.0

    def __call__(self, lowered: Any, args: Sequence[Any]) -> tuple[Any, ...]:
        import numpy as np
        import tosa_reference_model as ref

        key = id(lowered)
        if key not in self.by_module:
            tosa = self.graphs.get(bytes(lowered.processed_bytes))
            if tosa is None:
                raise BuildError("a delegate has no captured TOSA graph; the numerical check cannot run it")
            self.by_module[key] = (tosa, lowered.original_module.graph.output_node(), _graph_io(tosa)[0])
        tosa, output_node, in_shapes = self.by_module[key]
        arrays = [_physical(a).detach().numpy() for a in args]
        for i, (a, want) in enumerate(zip(arrays, in_shapes, strict=False)):
            if tuple(a.shape) != want and all(d > 0 for d in want):
                raise BuildError(f"TOSA graph input {i} has shape {list(want)}, the program passes {list(a.shape)}")
        with captured_native_output() as sink:
            started = time.perf_counter()
            outputs, status = ref.run(tosa, arrays)
            self.seconds += time.perf_counter() - started
            sink.seek(0)
            printed = sink.read().decode("utf-8", "replace").strip()
        self.runs += 1
        if status != ref.GraphStatus.TOSA_VALID:
            raise BuildError(f"tosa_reference_model returned {status} for a delegate's TOSA graph{': ' + printed[-500:] if printed else ''}")
        fakes = [n.meta["val"] for n in output_node.args[0]]
        result = []
        for arr, fake in zip(outputs, fakes, strict=True):
            arr = np.asarray(arr)
            if arr.size != fake.numel():
                raise BuildError(f"the TOSA graph gave {arr.size} elements where the program expects {list(fake.shape)}")
            result.append(_from_physical(arr, fake).to(fake.dtype))
        return tuple(result)


def _single_threaded(fn: Callable[P, R]) -> Callable[P, R]:
    """Each sample is little work: with torch's intra-op threads on a busy machine,
    thread hand-offs cost more than the math (ten times slower, measured on mnist)."""

    @functools.wraps(fn)
    def run(*args: P.args, **kwargs: P.kwargs) -> R:
        import torch

        before = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            return fn(*args, **kwargs)
        finally:
            torch.set_num_threads(before)

    return run


def _dispatch(reference: _Reference) -> Any:
    import torch
    from torch.overrides import TorchFunctionMode

    class ReferenceDispatch(TorchFunctionMode):
        def __torch_function__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
            if func is torch._higher_order_ops.executorch_call_delegate:
                return reference(args[0], args[1:])
            return func(*args, **(kwargs or {}))

    return ReferenceDispatch()


def _output_qparams(edge_program: Any) -> list[tuple[float, int] | None]:
    """(scale, zero point) of each output the CPU dequantizes, as the .pte does."""
    out: list[tuple[float, int] | None] = []
    for node in edge_program.graph_module.graph.output_node().args[0]:
        name = getattr(node.target, "__name__", str(node.target)) if getattr(node, "op", None) == "call_function" else ""
        if "dequantize_per_tensor" in name:
            out.append((float(node.args[1]), int(node.args[2])))
        else:
            out.append(None)
    return out


def _scale(qparams: tuple[float, int] | None) -> float | None:
    return qparams[0] if qparams else None


# --- comparisons ------------------------------------------------------------------------------


@dataclass
class _Versus:
    """Running statistics of one output against a reference, over all samples."""

    max_abs: float = 0.0
    max_steps: float = 0.0
    mismatched: int = 0
    elements: int = 0
    cosines: list[float] = field(default_factory=list)
    frobenius: list[float] = field(default_factory=list)
    failing: int = 0
    skipped: int = 0


def _within(got: Any, want: Any, atol: float, rtol: float, stats: _Versus, scale: float | None) -> None:
    diff = (got.double() - want.double()).abs()
    stats.max_abs = max(stats.max_abs, float(diff.max()) if diff.numel() else 0.0)
    if scale:
        stats.max_steps = max(stats.max_steps, stats.max_abs / scale)
    stats.mismatched += int((diff > atol + rtol * want.double().abs()).sum())
    stats.elements += diff.numel()


def _similar(got: Any, reference: Any, scale: float | None, stats: _Versus, cos_min: float, frob_max: float | None) -> None:
    """ExecuTorch's float comparison (analyze_output_utils.compare_rel_frobenius_and_cosine_similarity),
    per sample: values below one quantization step are zeroed in the reference; an all-zero
    reference is skipped; the Frobenius bound is waived at quantization-noise scale."""
    import torch

    got = got.double().flatten()
    ref = reference.double().flatten().nan_to_num(0.0)
    stats.max_abs = max(stats.max_abs, float((got - ref).abs().max()) if ref.numel() else 0.0)
    if scale:
        ref = torch.where(ref.abs() >= scale, ref, torch.zeros_like(ref))
    if int(torch.count_nonzero(ref)) == 0:
        stats.skipped += 1
        return
    norm = float(torch.linalg.norm(ref))
    frob = float(torch.linalg.norm(got - ref)) / (norm + 1e-8)
    cos = float(torch.nn.functional.cosine_similarity(got, ref, dim=0))
    stats.cosines.append(cos)
    floor = max(1e-8, (scale or 0.0) * math.sqrt(ref.numel()))
    failed = cos < cos_min
    if frob_max is not None and norm > floor:
        stats.frobenius.append(frob)
        effective = max(0.0, frob - 0.02) if cos >= max(0.98, cos_min) else frob
        failed = failed or effective > frob_max
    stats.failing += int(failed)


def _top1(outputs: list[Any]) -> int | None:
    """The predicted class, -1 for a constant output (no prediction), None if not a class vector."""
    first = outputs[0] if outputs else None
    if first is None or first.numel() < 2:
        return None
    flat = first.reshape(-1)
    return -1 if bool((flat == flat[0]).all()) else int(flat.argmax())


@dataclass
class _Tally:
    agree: int = 0
    compared: int = 0
    constant: int = 0
    correct_test: int = 0
    correct_float: int = 0
    labelled: int = 0

    def add(self, test: list[Any], float_out: list[Any], label: int | None) -> None:
        a, b = _top1(test), _top1(float_out)
        if a is None or b is None:
            return
        if label is not None:
            self.labelled += 1
            self.correct_test += int(a == label)
            self.correct_float += int(b == label)
        if a == -1 or b == -1:  # argmax of a constant vector says nothing
            self.constant += 1
            return
        self.compared += 1
        self.agree += int(a == b)


def _check(name: str, passed: bool, detail: str) -> dict[str, Any]:
    return {"name": name, "passed": passed, "detail": detail}


def _top1_record(tally: _Tally, data: EvalSet, test_name: str, checks: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if tally.compared or tally.constant:
        out["top1_agreement"] = {
            "with": "float", "samples": tally.compared, "rate": tally.agree / tally.compared if tally.compared else None,
            "constant_output_samples": tally.constant,
        }
    if tally.labelled:
        float_acc = tally.correct_float / tally.labelled
        test_acc = tally.correct_test / tally.labelled
        drop = (float_acc - test_acc) * 100
        passed = drop <= ACCURACY_DROP_MAX_PP
        out["accuracy"] = {
            "dataset": data.name, "samples": tally.labelled, "float_top1": float_acc,
            f"{test_name}_top1": test_acc, "drop_pp": drop, "limit_pp": ACCURACY_DROP_MAX_PP, "passed": passed,
        }
        checks.append(_check(
            "accuracy", passed,
            f"top-1 on {tally.labelled} {data.name} samples: float {float_acc:.2%}, {test_name} {test_acc:.2%} "
            f"({drop:+.2f} pp drop; limit {ACCURACY_DROP_MAX_PP:g} pp)",
        ))
    return out


def _versus_record(v: _Versus) -> dict[str, Any]:
    return {
        "max_abs_error": v.max_abs,
        "min_cosine": min(v.cosines) if v.cosines else None,
        "mean_cosine": sum(v.cosines) / len(v.cosines) if v.cosines else None,
        "max_rel_frobenius": max(v.frobenius) if v.frobenius else None,
        "failing_samples": v.failing,
        "skipped_samples": v.skipped,
    }


def _float_detail(name: str, v: _Versus, n: int, scale_note: bool) -> str:
    if not v.cosines:
        why = "below one output quantization step" if scale_note else "all zero"
        return f"not compared: the float output is {why} on all {n} samples, so there is nothing to compare (as ExecuTorch's tests skip it)"
    text = (f"{name} vs float on {len(v.cosines)} samples: min cosine {min(v.cosines):.4f} (≥ {COSINE_MIN:g})"
            if name != "portable" else f"portable vs float on {len(v.cosines)} samples: min cosine {min(v.cosines):.6f} (≥ {PORTABLE_COSINE_MIN:g})")
    if v.frobenius:
        text += f", max relative Frobenius error {max(v.frobenius):.4f}" + (f" (≤ {FROBENIUS_MAX:g})" if name != "portable" else "")
    text += f", max abs error {v.max_abs:.4g}"
    if v.skipped:
        text += f"; {v.skipped} sample(s) skipped (float output below one quantization step)"
    if v.failing:
        text += f"; {v.failing} sample(s) fail"
    return text


# --- Ethos-U: the lowered program on the reference model ---------------------------------------


@_single_threaded
def check_ethosu(
    *,
    float_model: Any,
    fake_quant: Any,
    edge_program: Any,
    graphs: dict[bytes, bytes],
    data: EvalSet,
    classifier: bool,
    progress: Progress | None = None,
) -> NumericsResult:
    """Run ``data`` through the lowered program with each delegate on the TOSA reference model.

    ``graphs`` maps each delegate's processed bytes to the TOSA flatbuffer Vela compiled it from.
    """
    try:
        import tosa_reference_model  # noqa: F401
    except ImportError as e:
        raise MissingExtraError("the numerical check (tosa_reference_model from tosa-tools)") from e
    started = time.perf_counter()
    module = edge_program.module()
    qparams = _output_qparams(edge_program)
    reference = _Reference(graphs)
    vs_fq: list[_Versus] = []
    vs_float: list[_Versus] = []
    tally = _Tally()
    cases: list[tuple[Sample, list[Any]]] = []
    for i, sample in enumerate(data.samples):
        with _dispatch(reference):
            got = _outputs(module(*sample))
        fq = _outputs(fake_quant(*sample))
        fl = _outputs(float_model(*sample))
        if not vs_fq:
            if not len(got) == len(fq) == len(fl):
                raise BuildError(f"the lowered program gives {len(got)} output(s), the fake-quantized model {len(fq)}, the float model {len(fl)}")
            vs_fq = [_Versus() for _ in got]
            vs_float = [_Versus() for _ in got]
            qparams += [None] * (len(got) - len(qparams))
        for k, (g, q, f) in enumerate(zip(got, fq, fl, strict=True)):
            scale = _scale(qparams[k])
            _within(g, q, ATOL + QTOL * (scale or 0.0), RTOL, vs_fq[k], scale)
            _similar(g, f, scale, vs_float[k], COSINE_MIN, FROBENIUS_MAX)
        tally.add(got, fl, data.labels[i] if data.labels else None)
        if len(cases) < BUNDLE_CASES:
            cases.append((tuple(t.clone() for t in sample), [g.clone() for g in got]))
        if progress:
            progress("verify", i + 1, len(data.samples))
    n = len(data.samples)
    checks: list[dict[str, Any]] = []
    outputs = []
    for k, (q, f) in enumerate(zip(vs_fq, vs_float, strict=True)):
        scale = _scale(qparams[k])
        tol = f"{ATOL:g} + {RTOL:g}·|x| + {QTOL}·scale" + (f" ({scale:.4g})" if scale else "")
        fq_ok = q.mismatched == 0
        steps = f", {q.max_steps:.2f} quantization steps" if scale else ""
        checks.append(_check(
            f"vs_fake_quant[{k}]" if len(vs_fq) > 1 else "vs_fake_quant", fq_ok,
            f"TOSA reference run vs fake-quantized torch model on {n} {data.name} samples: max abs error "
            f"{q.max_abs:.4g}{steps}; {q.mismatched} of {q.elements} elements outside {tol}",
        ))
        fl_ok = f.failing == 0
        checks.append(_check(f"vs_float[{k}]" if len(vs_float) > 1 else "vs_float", fl_ok,
                             _float_detail("int8", f, n, scale is not None)))
        outputs.append({
            "index": k,
            "scale": scale,
            "zero_point": (qparams[k] or (None, None))[1],
            "vs_fake_quant": {"max_abs_error": q.max_abs, "max_error_steps": q.max_steps if scale else None,
                              "mismatched_elements": q.mismatched, "elements": q.elements, "passed": fq_ok},
            "vs_float": {**_versus_record(f), "passed": fl_ok},
        })
    record: dict[str, Any] = {
        "method": "tosa_reference_model",
        "dataset": data.name,
        "data_identity": data.identity,
        "samples": n,
        "reference_runs": reference.runs,
        "reference_seconds": round(reference.seconds, 3),
        "partitions": len(graphs),
        "outputs": outputs,
        "tolerances": {"atol": ATOL, "rtol": RTOL, "qtol": QTOL, "cosine_min": COSINE_MIN,
                       "frobenius_max": FROBENIUS_MAX, "accuracy_drop_max_pp": ACCURACY_DROP_MAX_PP},
    }
    if classifier:
        record.update(_top1_record(tally, data, "int8", checks))
    record["checks"] = checks
    record["passed"] = all(c["passed"] for c in checks)
    record["seconds"] = round(time.perf_counter() - started, 2)
    scales = [q[0] for q in qparams if q]
    tolerance = {"atol": ATOL + QTOL * max(scales, default=0.0), "rtol": RTOL}
    return NumericsResult(record, cases, tolerance)


# --- portable: the .pte itself on the host runtime -----------------------------------------------


@_single_threaded
def check_portable(
    *,
    pte: bytes,
    float_model: Any,
    data: EvalSet,
    classifier: bool,
    progress: Progress | None = None,
) -> NumericsResult:
    """Run the portable .pte on the host with ``executorch.runtime`` and compare with float."""
    started = time.perf_counter()
    with captured_native_output():  # the runtime reports its CPU probing on import
        from executorch.runtime import Runtime

        method = Runtime.get().load_program(pte).load_method("forward")
    vs_float: list[_Versus] = []
    close: list[_Versus] = []
    tally = _Tally()
    cases: list[tuple[Sample, list[Any]]] = []
    for i, sample in enumerate(data.samples):
        got = _outputs(method.execute([t.contiguous() for t in sample]))
        fl = _outputs(float_model(*sample))
        if not vs_float:
            if len(got) != len(fl):
                raise BuildError(f"the .pte gives {len(got)} output(s), the float model {len(fl)}")
            vs_float = [_Versus() for _ in got]
            close = [_Versus() for _ in got]
        for k, (g, f) in enumerate(zip(got, fl, strict=True)):
            _within(g, f, PORTABLE_ATOL, PORTABLE_RTOL, close[k], None)
            _similar(g, f, None, vs_float[k], PORTABLE_COSINE_MIN, None)
        tally.add(got, fl, data.labels[i] if data.labels else None)
        if len(cases) < BUNDLE_CASES:
            cases.append((tuple(t.clone() for t in sample), [g.clone() for g in got]))
        if progress:
            progress("verify", i + 1, len(data.samples))
    n = len(data.samples)
    checks: list[dict[str, Any]] = []
    outputs = []
    for k, (c, f) in enumerate(zip(close, vs_float, strict=True)):
        ok = c.mismatched == 0 and f.failing == 0
        checks.append(_check(
            f"vs_float[{k}]" if len(close) > 1 else "vs_float", ok,
            f"{_float_detail('portable', f, n, False)}; {c.mismatched} of {c.elements} elements outside "
            f"{PORTABLE_ATOL:g} + {PORTABLE_RTOL:g}·|x|",
        ))
        outputs.append({"index": k, "vs_float": {**_versus_record(f), "mismatched_elements": c.mismatched,
                                                   "elements": c.elements, "passed": ok}})
    record: dict[str, Any] = {
        "method": "executorch.runtime",
        "dataset": data.name,
        "data_identity": data.identity,
        "samples": n,
        "outputs": outputs,
        "tolerances": {"atol": PORTABLE_ATOL, "rtol": PORTABLE_RTOL, "cosine_min": PORTABLE_COSINE_MIN,
                       "accuracy_drop_max_pp": ACCURACY_DROP_MAX_PP},
    }
    if classifier:
        record.update(_top1_record(tally, data, "portable", checks))
    record["checks"] = checks
    record["passed"] = all(c["passed"] for c in checks)
    record["seconds"] = round(time.perf_counter() - started, 2)
    return NumericsResult(record, cases, {"atol": PORTABLE_ATOL, "rtol": PORTABLE_RTOL})
