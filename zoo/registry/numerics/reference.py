"""The Ethos-U numerical check: the lowered program with each delegate run on the TOSA reference model.

The lowered edge program runs in torch with every delegate call replaced by a
run of the exact TOSA graph that Vela consumed, on ``tosa_reference_model``
(tosa-tools). The first samples' calls also run Vela's own program on the
command-stream interpreter, a stand-in for the NPU (``npu_program.py``). The CPU side (the
input quantize, the output dequantize, operators left between partitions) runs
in torch in graph order, as in the .pte. The result is compared with the
fake-quantized torch model and with the float model (``compare.py``).

torch, numpy and the reference model are imported inside functions.
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, ParamSpec, TypeVar

from zoo._errors import BuildError, MissingExtraError
from zoo._spec import Sample
from zoo.registry.numerics import compare
from zoo.registry.numerics import metrics as metrics_
from zoo.registry.numerics.data import flat_outputs
from zoo.registry.numerics.io import IoParams
from zoo.registry.numerics.npu_program import NpuProgram

P = ParamSpec("P")
R = TypeVar("R")


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


def single_threaded(fn: Callable[P, R]) -> Callable[P, R]:
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


def _graph_io(tosa: bytes) -> tuple[list[tuple[int, ...]], list[tuple[int, ...]]]:
    from tosa.TosaGraph import TosaGraph

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

    def __init__(self, graphs: dict[bytes, bytes], npu: NpuProgram | None = None) -> None:
        self.graphs = graphs
        self.npu = npu
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
        if self.npu is not None:
            self.npu.delegate_call(bytes(lowered.processed_bytes), arrays, outputs)
        fakes = [n.meta["val"] for n in output_node.args[0]]
        result = []
        for arr, fake in zip(outputs, fakes, strict=True):
            arr = np.asarray(arr)
            if arr.size != fake.numel():
                raise BuildError(f"the TOSA graph gave {arr.size} elements where the program expects {list(fake.shape)}")
            result.append(_from_physical(arr, fake).to(fake.dtype))
        return tuple(result)


def _dispatch(reference: _Reference) -> Any:
    import torch
    from torch.overrides import TorchFunctionMode

    class ReferenceDispatch(TorchFunctionMode):
        def __torch_function__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
            if func is torch._higher_order_ops.executorch_call_delegate:
                return reference(args[0], args[1:])
            return func(*args, **(kwargs or {}))

    return ReferenceDispatch()


def _dequantized_outputs(edge_program: Any) -> list[Any]:
    """Each output's dequantize_per_tensor node, as the .pte has it; None for an output the CPU does not dequantize."""
    out = []
    for node in edge_program.graph_module.graph.output_node().args[0]:
        name = getattr(node.target, "__name__", str(node.target)) if getattr(node, "op", None) == "call_function" else ""
        out.append(node if "dequantize_per_tensor" in name else None)
    return out


def _output_qparams(edge_program: Any) -> list[tuple[float, int] | None]:
    """(scale, zero point) of each output the CPU dequantizes."""
    return [None if n is None else (float(n.args[1]), int(n.args[2])) for n in _dequantized_outputs(edge_program)]


def _output_bits(edge_program: Any) -> list[int | None]:
    """The width of each output the CPU dequantizes: 16 for an int16 tensor (its qmax), else 8."""
    return [None if n is None else 16 if int(n.args[4]) > 255 else 8 for n in _dequantized_outputs(edge_program)]


def _input_scales(edge_program: Any) -> list[float | None] | None:
    """The quantization step of each user input the program quantizes; None if none is."""
    users = set(edge_program.graph_signature.user_inputs)
    scales: list[float | None] = []
    for node in edge_program.graph_module.graph.nodes:
        if node.op != "placeholder" or node.name not in users:
            continue
        step = None
        for user in node.users:
            if "quantize_per_tensor" in getattr(user.target, "__name__", str(user.target)):
                step = float(user.args[1])
        scales.append(step)
    return scales if any(s is not None for s in scales) else None


@single_threaded
def check_ethosu(
    *,
    float_model: Any,
    fake_quant: Any,
    edge_program: Any,
    graphs: dict[bytes, bytes],
    judging: metrics_.Judging,
    program_input: Callable[[Sample], Sample] | None = None,
    io: IoParams | None = None,
    kind: str = "int8",
    fast_scratch: Mapping[bytes, int] | None = None,
) -> compare.NumericsResult:
    """Run the judged data through the lowered program with each delegate on the TOSA reference model.

    ``graphs`` maps each delegate's processed bytes to the TOSA flatbuffer Vela compiled it from.
    ``program_input`` turns a sample of that data into what ``fake_quant`` takes (for
    ``--io pixels``, the [0, 1] image; for ``nhwc``, channels-last). With integer I/O,
    ``io`` holds the boundary's parameters: each input is quantized by torch's rule
    before the program gets it, and each output dequantized before it is compared.
    The bundle's test cases keep the program's own (integer) inputs and outputs.
    ``kind`` names the program in the record and the messages: its precision.
    The first samples' delegate calls also run on the command-stream interpreter (``npu_program``),
    with ``fast_scratch``: each payload's region 2 size (by processed bytes; 0 where not given).
    """
    try:
        import tosa_reference_model  # noqa: F401
    except ImportError as e:
        raise MissingExtraError("the numerical check (tosa_reference_model from tosa-tools)") from e
    started = time.perf_counter()
    module = edge_program.module()
    qparams: list[tuple[float, int] | None] = (
        _output_qparams(edge_program) if io is None else [(p.scale, p.zero_point) for p in io.outputs]
    )
    bits: list[int | None] = _output_bits(edge_program) if io is None else [8 for _ in io.outputs]
    input_scales: list[float | None] | None = (
        _input_scales(edge_program) if io is None else [p.scale for p in io.inputs] or None
    )
    to_program = program_input or (lambda s: s)
    npu = NpuProgram(fast_scratch or {}, graphs=graphs)
    reference = _Reference(graphs, npu)
    vs_fq: list[compare.Versus] = []
    vs_float: list[compare.Versus] = []
    noise: list[compare.Versus] = []
    fq_vs_float: list[compare.Versus] = []

    def step(i: int, sample: Sample) -> metrics_.Ran:
        npu.start_sample(i)
        given = to_program(sample)
        fed = given if io is None else tuple(p.quantize(x) for p, x in zip(io.inputs, given, strict=True))
        with _dispatch(reference):
            raw = flat_outputs(module(*fed))
        got = raw if io is None else [p.dequantize(r) for p, r in zip(io.outputs, raw, strict=True)]
        fq = flat_outputs(fake_quant(*given))
        fl = flat_outputs(float_model(*sample))
        noisy = flat_outputs(fake_quant(*compare.perturbed(given, input_scales, i))) if input_scales else None
        wrong = (compare.mismatched_outputs(got, fl, f"the lowered {kind} program")
                 or compare.mismatched_outputs(fq, fl, f"the fake-quantized {kind} model"))
        if wrong:
            raise BuildError(f"{wrong} (a fault of the lowering, not of the model: please report it with the model)")
        if not vs_fq:
            for each in (vs_fq, vs_float, noise, fq_vs_float):
                each.extend(compare.Versus() for _ in got)
            qparams.extend([None] * (len(got) - len(qparams)))
            bits.extend([None] * (len(got) - len(bits)))
        for k, (g, q, f) in enumerate(zip(got, fq, fl, strict=True)):
            scale = compare.scale_of(qparams[k])
            atol = compare.ATOL + compare.QTOL * (scale or 0.0)
            compare.within(g, q, atol, compare.RTOL, vs_fq[k], scale)
            compare.similar(g, f, scale, vs_float[k], compare.COSINE_MIN, compare.FROBENIUS_MAX)
            compare.similar(q, f, scale, fq_vs_float[k], compare.COSINE_MIN, compare.FROBENIUS_MAX)
            if noisy is not None:
                compare.within(noisy[k], q, atol, compare.RTOL, noise[k], scale)
        return metrics_.Ran(got, fl, fed, raw)

    kept = metrics_.run_samples(judging, step)
    n = kept.samples
    for k, (q, f) in enumerate(zip(vs_fq, vs_float, strict=True)):
        scale = compare.scale_of(qparams[k])
        tol = f"{compare.ATOL:g} + {compare.RTOL:g}·|x| + {compare.QTOL}·scale" + (f" ({scale:.4g})" if scale else "")
        floor = noise[k] if input_scales and scale else None
        wide = bits[k] == 16
        no_noisier = compare.as_quiet_as_fake_quant(f, fq_vs_float[k])
        beyond = compare.beyond_noise(q, floor)
        fq_ok = compare.agrees_with_fake_quant(q, floor, f, fq_vs_float[k])
        steps = f", {q.max_steps:.2f} quantization steps" if scale else ""
        detail = (f"TOSA reference run vs fake-quantized torch model on {n} {judging.data.name} samples: max abs error "
                  f"{q.max_abs:.4g}{steps}; {q.mismatched} of {q.elements} elements outside {tol}")
        if floor is not None and q.mismatched:
            detail += (f"; the model's own noise floor (fake-quant with {compare.NOISE_FRACTION:.1%} of its input "
                       f"moved by one step): {floor.max_steps:.2f} steps, {floor.mismatched} elements outside"
                       + (", so this is rounding compounding through the layers" if compare.within_noise(q, floor) else ""))
        if beyond and not wide:
            detail += (f"; beyond that, judged by the noise it adds: SQNR against float "
                       f"{_db(f.sqnr_db)}, fake-quant's {_db(fq_vs_float[k].sqnr_db)} (at most "
                       f"{compare.SQNR_MARGIN_DB:g} dB lower passes)")
        if wide and q.mismatched:
            detail += (f"; at 16 bits judged by the noise it adds instead: SQNR against float "
                       f"{_db(f.sqnr_db)}, fake-quant's {_db(fq_vs_float[k].sqnr_db)} (at most "
                       f"{compare.SQNR_MARGIN_DB:g} dB lower passes)")
        kept.checks.append(compare.check(f"vs_fake_quant[{k}]" if len(vs_fq) > 1 else "vs_fake_quant", fq_ok, detail))
        limited = f.failing > 0 and compare.quantization_limited(f, fq_vs_float[k])
        # With labelled data and declared metrics, those metrics judge int8 itself; the float
        # comparison still refuses a lowering that does worse than fake-quant.
        by_metrics = (f.failing > 0 and not limited and kept.seen is not None
                      and compare.left_to_metrics(f, fq_vs_float[k]))
        fl_ok = f.failing == 0 or limited or by_metrics
        detail = compare.float_detail(kind, f, n, scale is not None)
        if fq_vs_float[k].failing:
            own = fq_vs_float[k]
            detail += (f"; fake-quant itself: min cosine {min(own.cosines):.4f}, max relative Frobenius error "
                       f"{max(own.frobenius, default=0.0):.4f}"
                       + (f": {kind} is this model's limit, and the lowering adds at most "
                          f"{compare.QUANTIZATION_LIMITED_MARGIN:g} to it" if limited else "")
                       + (f": {kind} itself fails this comparison and the lowering is no worse"
                          + (f" (no noisier: SQNR within {compare.SQNR_MARGIN_DB:g} dB)" if no_noisier else "") + ", so the model's "
                          f"declared metrics ({', '.join(m.name for m in judging.metrics)}) judge it" if by_metrics else ""))
        kept.checks.append(compare.check(f"vs_float[{k}]" if len(vs_float) > 1 else "vs_float", fl_ok, detail))
        kept.outputs.append({
            "index": k,
            "bits": bits[k],
            "scale": scale,
            "zero_point": (qparams[k] or (None, None))[1],
            "vs_fake_quant": {"max_abs_error": q.max_abs, "max_error_steps": q.max_steps if scale else None,
                              "mismatched_elements": q.mismatched, "elements": q.elements, "passed": fq_ok,
                              "judged_by_sqnr": no_noisier and beyond,
                              "noise_floor": ({"max_error_steps": floor.max_steps, "mismatched_elements": floor.mismatched}
                                              if floor is not None else None)},
            "vs_float": {**compare.versus_record(f), "passed": fl_ok, "quantization_limited": limited,
                         "judged_by_metrics": by_metrics},
            "fake_quant_vs_float": compare.versus_record(fq_vs_float[k]),
        })
    record: dict[str, Any] = {
        **kept.opening("tosa_reference_model", judging.data),
        "reference_runs": reference.runs,
        "reference_seconds": round(reference.seconds, 3),
        "partitions": len(graphs),
        "outputs": kept.outputs,
        "tolerances": {"atol": compare.ATOL, "rtol": compare.RTOL, "qtol": compare.QTOL,
                       "noise_fraction": compare.NOISE_FRACTION,
                       "quantization_limited_margin": compare.QUANTIZATION_LIMITED_MARGIN,
                       "sqnr_margin_db": compare.SQNR_MARGIN_DB,
                       "cosine_min": compare.COSINE_MIN, "frobenius_max": compare.FROBENIUS_MAX},
    }
    kept.checks.append(npu.check())
    record["npu_program"] = npu.record()
    metrics_.conclude(record, kept, judging, kind, started)
    scales = [q[0] for q in qparams if q]
    tolerance = {"atol": compare.ATOL + compare.QTOL * max(scales, default=0.0), "rtol": compare.RTOL}
    if io is not None:  # the bundle's outputs are the integers themselves
        tolerance = {"atol": float(compare.QTOL), "rtol": 0.0}
    return compare.NumericsResult(record, kept.cases, tolerance, npu)


def _db(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f} dB"
