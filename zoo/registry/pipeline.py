"""Compile one model for one target into canonical ``.pte`` bytes.

For an Ethos-U target: export, PT2E int8 quantization with Arm's quantizer,
lowering with ``EthosUPartitioner`` (which runs Vela per partition), then a
Vela performance report on the exact TOSA graphs the backend compiled. For
``portable`` the float model is lowered without a partitioner.

torch and ExecuTorch are imported inside functions only, so importing this
module stays cheap. Nothing is written to disk except Vela's scratch files in
temporary directories.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import logging
import re
import sys
import threading
import traceback
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from zoo._errors import BuildError, MissingExtraError
from zoo._spec import Dataset, ModelSpec, Sample
from zoo.registry import vela_report
from zoo.registry.targets import PORTABLE, Target

if TYPE_CHECKING:
    from zoo.registry.numerics import NumericsResult

Progress = Callable[[str, int | None, int | None], None]
STAGES = ("load", "export", "calibrate", "quantize", "lower", "verify", "serialize", "vela", "retarget")
"""In order; with several targets, "vela" and "retarget" name the target, e.g. "vela ethos-u55-64"."""
BACKEND_ID = "EthosUBackend"

# Quantize/dequantize nodes are the int8 boundary, not work the model asked
# for: on the NPU side they fold into the TOSA ops, on the CPU side they
# convert the float inputs/outputs. They are counted apart ("cpu_quantize_ops")
# so cpu_ops/npu_ops count only the model's own operators. getitem only
# unpacks a delegate's outputs.
_BOOKKEEPING = re.compile(r"^(getitem|quantized_decomposed_(de)?quantize_per_\w+)$")

# Patching the backend's Vela hook is process-global; one lowering at a time.
_LOWERING = threading.Lock()


@dataclass
class CompileResult:
    pte: bytes
    """Canonical bytes: the emitter's output after a deserialize/serialize round trip."""
    tosa_graphs: list[bytes]
    """TOSA flatbuffer of each Ethos-U delegate in program order, as handed to Vela."""
    vela: dict[str, Any] | None
    """``vela_report.summarize`` of every partition; None for portable."""
    delegation: dict[str, Any]
    """The true CPU/NPU split, from ``get_delegation_info`` on the lowered graph:
    ``partitions`` (NPU delegates), ``npu_ops`` and ``cpu_ops`` (edge operators,
    not counting quantize/dequantize or getitem), ``cpu_op_names`` (sorted,
    unique, e.g. ``aten.avg_pool2d.default``), ``cpu_quantize_ops`` (the
    quantize/dequantize nodes left on the CPU) and ``npu_fraction``
    (npu_ops / (npu_ops + cpu_ops), 0.0 if both are 0)."""
    cpu_operators: list[str]
    """Kernels the runtime must provide, from the program's operator table,
    e.g. ``quantized_decomposed::quantize_per_tensor.out``."""
    calibration: dict[str, Any]
    """``samples`` used and ``sha256`` over their dtypes, shapes and bytes;
    ``{"samples": 0, "sha256": None}`` for portable (no quantization)."""
    warnings: list[str] = field(default_factory=list)
    numerics: NumericsResult | None = None
    """The numerical check (``compile_model(verify=True)``): Ethos-U on the TOSA
    reference model before serialization, portable on the host runtime after."""
    memory_fit: dict[str, Any] | None = None
    """``memory_fit.fit_record`` for a target with an SRAM budget."""


@dataclass
class _Capture:
    tosa: bytes
    flags: list[str]
    processed: bytes


def compile_model(
    spec: ModelSpec,
    target: Target,
    *,
    weights: str | None = None,
    calibration: Dataset | None = None,
    progress: Progress | None = None,
    verify: bool = False,
) -> CompileResult:
    """Build ``spec`` (with weights variant ``weights``) for ``target``.

    With ``verify`` the numerical check runs too (see ``zoo.registry.numerics``);
    it never changes the .pte bytes. A target with an SRAM budget gets the
    fastest Vela options that fit it (``memory_fit.py``).

    ``progress(stage, done, total)`` is called with ``(stage, None, None)`` as
    each stage of ``STAGES`` starts, and once per calibration sample with
    ``("calibrate", done, total)`` (and per checked sample with ``("verify", done, total)``).
    Raises BuildError naming the model, the target and the stage (for lowering,
    the failing pass or operator).
    """
    return compile_targets(
        spec, [target], weights=weights, calibration=calibration, progress=progress, verify=[verify]
    )[0]


def compile_targets(
    spec: ModelSpec,
    targets: Sequence[Target],
    *,
    weights: str | None = None,
    calibration: Dataset | None = None,
    progress: Progress | None = None,
    verify: Sequence[bool] | None = None,
) -> list[CompileResult]:
    """Build ``spec`` for several targets, in their order, for about the cost of one.

    The model is exported, calibrated and lowered once per TOSA specification
    (u55 and u65 share one, u85 has its own); every other target of that
    specification only reruns Vela (``retarget.py``). Each .pte is
    byte-identical to a ``compile_model`` of its target alone. ``verify[i]``
    asks for target i's numerical check, which a TOSA family shares.
    """
    wanted = list(verify) if verify is not None else [False] * len(targets)
    report: Progress = progress or _silent
    variant = spec.weights_variant(weights).name
    results: dict[int, CompileResult] = {}
    families: dict[str, list[int]] = {}
    for i, target in enumerate(targets):
        if not target.is_portable and not spec.quantize:
            raise BuildError(
                f"{_where(spec, variant, target)}: the model is declared float-only (quantize=False), but "
                "Ethos-U runs int8/int16 only; build it for the 'portable' target instead"
            )
        families.setdefault(target.tosa_spec or PORTABLE, []).append(i)
    report("load", None, None)
    torch = _import_stack()
    for family, members in families.items():
        leader = targets[members[0]]
        where = _where(spec, variant, leader)
        # Seeded and isolated so a plugin that draws random weights or inputs
        # without its own seed still builds the same bytes every time; reset
        # per family so each lowering sees what a single-target build sees.
        with torch.random.fork_rng(devices=[]), torch.no_grad():
            torch.manual_seed(0)
            with _stage(where, "load"):
                model = spec.build(variant).eval()
                example = _as_sample(spec.example_inputs())
            if family == PORTABLE:
                result = _compile_portable(model, example, where, report)
                if any(wanted[i] for i in members):
                    report("verify", None, None)
                    with _stage(where, "numerical check"):
                        from zoo.registry import numerics

                        result.numerics = numerics.check_portable(
                            pte=result.pte, float_model=model,
                            data=numerics.evaluation_set(spec, calibration or spec.calibration),
                            classifier=numerics.is_classifier(spec), progress=report,
                        )
                for i in members:
                    results[i] = replace(result, numerics=result.numerics if wanted[i] else None)
                continue
            lowered = _lower_ethosu(
                model, example, spec, _base(leader), calibration, where, report, any(wanted[i] for i in members)
            )
        for i in members:
            result = _finish_ethosu(lowered, targets[i], _where(spec, variant, targets[i]), report, len(members) > 1)
            results[i] = replace(result, numerics=lowered.numerics if wanted[i] else None)
    return [results[i] for i in range(len(targets))]


def _where(spec: ModelSpec, variant: str, target: Target) -> str:
    return f"model {spec.name!r} (weights {variant!r}) for target {target.name!r}"


def _base(target: Target) -> Target:
    """What the lowering is given: the target without its SRAM budget, whose
    Vela options are only chosen afterwards, on the TOSA graphs."""
    return replace(target, sram_budget=None)


def _silent(stage: str, done: int | None, total: int | None) -> None:
    pass


def _import_stack() -> Any:
    # torchao registers enums with torch's pytree on import, and torch logs a
    # deprecation warning for each: noise in the middle of zoo's progress.
    logging.getLogger("torch.utils._pytree").setLevel(logging.ERROR)
    try:
        import executorch.exir  # noqa: F401
        import torch
    except ImportError as e:
        raise MissingExtraError("compiling a model") from e
    return torch


@contextlib.contextmanager
def _stage(where: str, stage: str) -> Iterator[None]:
    try:
        yield
    except BuildError as e:
        if str(e).startswith(where):
            raise
        raise BuildError(f"{where}: {e}") from e
    except Exception as e:
        raise BuildError(f"{where}: {stage} failed: {type(e).__name__}: {_first_lines(e)}") from e


def _compile_portable(model: Any, example: Sample, where: str, report: Progress) -> CompileResult:
    from executorch.exir import to_edge_transform_and_lower

    report("export", None, None)
    with _stage(where, "export"):
        exported = _export(model, example)
    report("lower", None, None)
    with _lowering_errors(where):
        edge = to_edge_transform_and_lower(exported)
        delegation = _delegation(edge)  # to_executorch rewrites the graph in place
        program = edge.to_executorch()
    report("serialize", None, None)
    with _stage(where, "serialize"):
        pte = _canonical(_program_bytes(program))
        cpu_operators = _operator_table(pte)
    return CompileResult(
        pte=pte,
        tosa_graphs=[],
        vela=None,
        delegation=delegation,
        cpu_operators=cpu_operators,
        calibration={"samples": 0, "sha256": None},
        warnings=[],
    )


@dataclass
class _Lowered:
    """One lowering, shared by every target of its TOSA specification."""

    target: Target
    pte: bytes
    ordered: list[_Capture]
    delegation: dict[str, Any]
    calibration: dict[str, Any]
    warnings: list[str]
    """About the lowering itself; each target adds its own."""
    numerics: NumericsResult | None


def _lower_ethosu(
    model: Any,
    example: Sample,
    spec: ModelSpec,
    target: Target,
    calibration: Dataset | None,
    where: str,
    report: Progress,
    verify: bool,
) -> _Lowered:
    from executorch.backends.arm.ethosu import EthosUPartitioner
    from executorch.exir import to_edge_transform_and_lower

    from zoo.registry.retarget import ethosu_compile_spec

    compile_spec = ethosu_compile_spec(target)
    report("export", None, None)
    with _stage(where, "export"):
        graph = _export(model, example).module(check_guards=False)
    dataset = calibration or spec.calibration
    with _stage(where, "calibration data loading"):
        samples = [_as_sample(s) for s in dataset.load()]
    if not samples:
        raise BuildError(f"{where}: the calibration set is empty")
    quantized = _quantize(graph, samples, compile_spec, where, report)
    with _stage(where, "quantize"):
        exported = _export(quantized, example)

    report("lower", None, None)
    with _LOWERING, _record_backend() as recorder, _lowering_errors(where, recorder):
        edge = to_edge_transform_and_lower(
            exported, partitioner=[EthosUPartitioner(compile_spec)]
        )
        ordered = _in_program_order(edge, recorder.captures, where)
        delegation = _delegation(edge)  # to_executorch rewrites the graph in place
    checked = None
    if verify:
        # Before to_executorch, which rewrites the edge graph in place.
        report("verify", None, None)
        with _stage(where, "numerical check"):
            from zoo.registry import numerics

            checked = numerics.check_ethosu(
                float_model=model, fake_quant=quantized, edge_program=edge.exported_program(),
                graphs={c.processed: c.tosa for c in ordered},
                data=numerics.evaluation_set(spec, dataset, samples), classifier=numerics.is_classifier(spec),
                progress=report,
            )
    with _LOWERING, _lowering_errors(where):
        program = edge.to_executorch()
    warnings = []
    if len(samples) != dataset.size:
        warnings.append(
            f"calibrated on {len(samples)} sample(s); the calibration set declares {dataset.size}"
        )
    report("serialize", None, None)
    with _stage(where, "serialize"):
        pte = _canonical(_program_bytes(program))
    return _Lowered(
        target=target,
        pte=pte,
        ordered=ordered,
        delegation=delegation,
        calibration={"samples": len(samples), "sha256": _digest(samples)},
        warnings=warnings,
        numerics=checked,
    )


def _finish_ethosu(lowered: _Lowered, target: Target, where: str, report: Progress, several: bool) -> CompileResult:
    """``target``'s artifact from a shared lowering: choose Vela options for its
    SRAM budget, rerun Vela where its options differ from the lowering's, and
    take Vela's performance report."""
    from zoo.registry import memory_fit

    label = f" {target.name}" if several else ""
    graphs = [c.tosa for c in lowered.ordered]
    fit: dict[str, Any] | None = None
    final = _base(target)
    report(f"vela{label}", None, None)
    with _stage(where, "Vela report"):
        if target.sram_budget is None:
            vela = vela_report.summarize([vela_report.run_vela(g, final) for g in graphs])
        else:
            budget = target.sram_budget
            tried: list[tuple[memory_fit.Candidate, dict[str, Any]]] = []
            for flags in memory_fit.candidate_flags(final, budget):
                summary = vela_report.summarize([vela_report.run_vela(g, final, extra_flags=flags) for g in graphs])
                total = summary["total"]
                tried.append((memory_fit.Candidate(flags, int(total["sram_bytes"]), float(total["inference_time_ms"])), summary))
            candidates = [c for c, _ in tried]
            with _stage(where, "memory fit"):
                chosen = memory_fit.choose(final, budget, candidates)
            vela = next(summary for c, summary in tried if c is chosen)
            fit = memory_fit.fit_record(target, budget, chosen, candidates)
            final = replace(final, extra_flags=(*final.extra_flags, *chosen.flags))
    if vela_report.vela_flags(final) == vela_report.vela_flags(lowered.target):
        pte = lowered.pte
    else:
        report(f"retarget{label}", None, None)
        from zoo.registry.retarget import retarget

        with _LOWERING, _lowering_errors(where):
            pte = retarget(lowered.pte, graphs, [c.processed for c in lowered.ordered], final)
    with _stage(where, "serialize"):
        cpu_operators = _operator_table(pte)
    return CompileResult(
        pte=pte,
        tosa_graphs=graphs,
        vela=vela,
        delegation=lowered.delegation,
        cpu_operators=cpu_operators,
        calibration=lowered.calibration,
        warnings=[*_warnings(lowered.delegation, target), *lowered.warnings, *_flag_drift(lowered)],
        memory_fit=fit,
    )


def _export(model: Any, example: Sample) -> Any:
    import torch

    return torch.export.export(model, example)


def _quantize(
    graph: Any, samples: list[Sample], compile_spec: Any, where: str, report: Progress
) -> Any:
    from executorch.backends.arm.quantizer import (
        EthosUQuantizer,
        get_symmetric_quantization_config,
    )
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

    with _stage(where, "quantizer preparation"):
        quantizer = EthosUQuantizer(compile_spec)
        quantizer.set_global(get_symmetric_quantization_config())
        prepared = prepare_pt2e(graph, quantizer)
    for i, sample in enumerate(samples):
        with _stage(where, f"calibration sample {i}"):
            prepared(*sample)
        report("calibrate", i + 1, len(samples))
    report("quantize", None, None)
    with _stage(where, "quantize"):
        return convert_pt2e(prepared)


def _as_sample(value: Any) -> Sample:
    return tuple(value) if isinstance(value, (tuple, list)) else (value,)


def _digest(samples: list[Sample]) -> str:
    """sha256 over every calibration tensor's dtype, shape and bytes, in order."""
    import torch

    h = hashlib.sha256()
    for i, sample in enumerate(samples):
        for j, t in enumerate(sample):
            if isinstance(t, torch.Tensor):
                flat = t.detach().cpu().contiguous().reshape(-1)
                h.update(f"{i}/{j} {t.dtype} {list(t.shape)}\n".encode())
                h.update(flat.view(torch.uint8).numpy().tobytes())
            else:
                h.update(f"{i}/{j} {type(t).__name__} {t!r}\n".encode())
    return h.hexdigest()


@dataclass
class _Recorder:
    captures: list[_Capture] = field(default_factory=list)
    partition: list[str] | None = None
    """Operators of the partition being compiled, taken before the backend rewrites it."""


@contextlib.contextmanager
def _record_backend() -> Iterator[_Recorder]:
    """Record what the Ethos-U backend compiles and hands to Vela, for the duration."""
    from executorch.backends.arm.ethosu import backend

    cls = backend.EthosUBackend
    original_preprocess = cls.__dict__["preprocess"]
    original_compile = cls.__dict__["_compile_tosa_flatbuffer"]
    preprocess = original_preprocess.__func__
    compile_tosa = original_compile.__func__
    recorder = _Recorder()

    def recording_preprocess(edge_program: Any, compile_specs: Any) -> Any:
        recorder.partition = _graph_ops(edge_program.graph_module)
        result = preprocess(edge_program, compile_specs)
        recorder.partition = None  # left set if preprocess raised
        return result

    def recording_compile(tosa_flatbuffer: bytes, compile_spec: Any) -> Any:
        flags = list(compile_spec.compiler_flags)  # Vela's caller appends to the list
        result = compile_tosa(tosa_flatbuffer, compile_spec)
        recorder.captures.append(
            _Capture(bytes(tosa_flatbuffer), flags, bytes(result.processed_bytes))
        )
        return result

    cls.preprocess = staticmethod(recording_preprocess)
    cls._compile_tosa_flatbuffer = staticmethod(recording_compile)
    try:
        yield recorder
    finally:
        cls.preprocess = original_preprocess
        cls._compile_tosa_flatbuffer = original_compile


@contextlib.contextmanager
def _lowering_errors(where: str, recorder: _Recorder | None = None) -> Iterator[None]:
    """Turn a lowering failure into a BuildError naming the pass or operator.

    Vela prints its summary to stdout from inside the backend; that is kept
    out of the caller's output. stderr is held back and passed on afterwards
    so a failure can quote it (Vela's argparse reports a bad flag there).
    """
    out, err = io.StringIO(), io.StringIO()
    limit = sys.getrecursionlimit()  # Vela's main() resets it
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            yield
    except BuildError:
        raise
    except (Exception, SystemExit) as e:  # Vela's argparse exits on a bad flag
        root = _chain(e)[-1]
        printed = "\n".join(t for t in (out.getvalue().strip(), err.getvalue().strip()) if t)
        detail = f"\n{_last_lines(printed)}" if printed else ""
        blame = _blame(e, recorder.partition if recorder else None)
        raise BuildError(
            f"{where}: lowering failed {blame}: {type(root).__name__}: {_first_lines(root)}{detail}"
        ) from e
    finally:
        sys.setrecursionlimit(limit)
    sys.stderr.write(err.getvalue())


def _blame(exc: BaseException, partition: list[str] | None) -> str:
    """Best guess at where lowering failed: the innermost pass or operator,
    or Vela, and the NPU partition being compiled."""
    import torch

    pass_name: str | None = None
    op: str | None = None
    in_vela = False
    for e in _chain(exc):
        for frame, _ in reversed(list(traceback.walk_tb(e.__traceback__))):
            filename = frame.f_code.co_filename.replace("\\", "/")
            in_vela = in_vela or "/ethosu/vela/" in filename or filename.endswith("/arm_vela.py")
            local = frame.f_locals
            node = local.get("node")
            if op is None and isinstance(node, torch.fx.Node) and node.op == "call_function":
                op = f"{_op_name(node.target)} (node {node.name!r})"
            owner = local.get("self")
            if pass_name is None and owner is not None and _is_pass(owner):
                pass_name = type(owner).__name__
    if op is None:
        op = next(filter(None, (_op_in_message(str(e)) for e in _chain(exc))), None)
    where = []
    if pass_name:
        where.append(f"in pass {pass_name}")
    elif in_vela:
        where.append("in Vela")
    if op:
        where.append(f"at operator {op}")
    if partition:
        where.append(f"while compiling the NPU partition of {', '.join(partition)}")
    return " ".join(where) or "(no pass or operator could be identified)"


def _op_in_message(message: str) -> str | None:
    m = re.search(r"\b(?:aten|quantized_decomposed|dim_order_ops)[.:_]+\w+(?:\.\w+)?", message)
    if m:
        return m.group(0)
    m = re.search(r"\boperation \((\w+)\)", message)  # Vela names the TOSA operator
    return f"TOSA {m.group(1)}" if m else None


def _graph_ops(gm: Any) -> list[str]:
    names = {_op_name(n.target) for n in gm.graph.nodes if n.op == "call_function"}
    return sorted(n for n in names if not _BOOKKEEPING.match(n.replace(".", "_")))


def _chain(exc: BaseException) -> list[BaseException]:
    seen: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and all(current is not s for s in seen):
        seen.append(current)
        current = current.__cause__ or current.__context__
    return seen


def _is_pass(obj: Any) -> bool:
    names = [c.__name__ for c in type(obj).__mro__]
    return any(n in ("PassBase", "ExportPass", "ArmPass") for n in names) or (
        type(obj).__name__.endswith("Pass")
    )


def _op_name(target: Any) -> str:
    name = getattr(target, "__name__", None)
    return str(name) if name else str(target)


def _first_lines(exc: BaseException, lines: int = 6) -> str:
    return "\n".join(str(exc).strip().splitlines()[:lines])


def _last_lines(text: str, lines: int = 4) -> str:
    all_lines = text.splitlines()
    errors = [line for line in all_lines if "error:" in line.lower()]  # skips argparse's usage
    return "\n".join(errors[-lines:] or all_lines[-lines:])


def _lowered_modules(edge: Any) -> list[Any]:
    gm = edge.exported_program().graph_module
    return [
        getattr(gm, node.target)
        for node in gm.graph.nodes
        if node.op == "get_attr" and str(node.target).startswith("lowered_module")
    ]


def _in_program_order(edge: Any, captures: list[_Capture], where: str) -> list[_Capture]:
    """Match each Ethos-U delegate, in graph order, with the Vela call that made it."""
    ordered: list[_Capture] = []
    for module in _lowered_modules(edge):
        if module.backend_id != BACKEND_ID:
            continue
        processed = bytes(module.processed_bytes)
        match = next((c for c in captures if c.processed == processed), None)
        if match is None:
            raise BuildError(f"{where}: an Ethos-U delegate was not compiled through Vela")
        ordered.append(match)
    return ordered


def _delegation(edge: Any) -> dict[str, Any]:
    from executorch.devtools.backend_debug import get_delegation_info

    gm = edge.exported_program().graph_module
    info = get_delegation_info(gm)
    npu_ops = sum(
        b.delegated for t, b in info.delegation_by_operator.items() if not _BOOKKEEPING.match(t)
    )
    # Same rule as get_delegation_info (every call_function but the delegate
    # call), with the operators' real names rather than node names.
    cpu: list[str] = []
    quantize = 0
    for node in gm.graph.nodes:
        if node.op != "call_function" or node.name.startswith("executorch_call_delegate"):
            continue
        name = _op_name(node.target)
        if not _BOOKKEEPING.match(name.replace(".", "_")):
            cpu.append(name)
        elif name != "getitem":
            quantize += 1
    total = npu_ops + len(cpu)
    return {
        "partitions": int(info.num_delegated_subgraphs),
        "npu_ops": int(npu_ops),
        "cpu_ops": len(cpu),
        "cpu_op_names": sorted(set(cpu)),
        "cpu_quantize_ops": quantize,
        "npu_fraction": npu_ops / total if total else 0.0,
    }


def _warnings(delegation: dict[str, Any], target: Target) -> list[str]:
    out: list[str] = []
    if delegation["partitions"] == 0:
        out.append(f"nothing was delegated to {target.name}: the whole model runs on the CPU")
    elif delegation["cpu_ops"]:
        out.append(
            f"partial CPU fallback: {delegation['cpu_ops']} operator(s) run on the CPU "
            f"({', '.join(delegation['cpu_op_names'])}), splitting the model into "
            f"{delegation['partitions']} NPU partition(s)"
        )
    return out


def _flag_drift(lowered: _Lowered) -> list[str]:
    """The Vela report must use the flags the backend used (checked on the lowering's own run)."""
    expected = vela_report.vela_flags(lowered.target)
    for c in lowered.ordered:
        if c.flags != expected:
            return [
                "the Vela report used flags that differ from the backend's: "
                f"{' '.join(expected)} vs {' '.join(c.flags)}"
            ]
    return []


def _program_bytes(program: Any) -> bytes:
    if program._tensor_data:  # a .ptd beside the .pte; zoo ships one file
        raise BuildError(f"the program keeps data outside the .pte ({sorted(program._tensor_data)})")
    return bytes(program.buffer)


def serialize(pte_file: Any) -> bytes:
    """Serialize with the ``ExecutorchBackendConfig()`` defaults: the canonical form."""
    from executorch.exir._serialize._program import serialize_pte_binary
    from executorch.exir.capture._config import ExecutorchBackendConfig

    config = ExecutorchBackendConfig()
    return bytes(
        serialize_pte_binary(
            pte_file,
            extract_delegate_segments=config.extract_delegate_segments,
            segment_alignment=config.segment_alignment,
            constant_tensor_alignment=config.constant_tensor_alignment,
            delegate_alignment=config.delegate_alignment,
        )
    )


def canonical(pte: bytes) -> bytes:
    """The canonical form of a .pte: ``serialize(deserialize(pte))`` with the
    ``ExecutorchBackendConfig()`` defaults. The emitter's own layout differs."""
    from executorch.exir._serialize._program import deserialize_pte_binary

    return serialize(deserialize_pte_binary(pte))


def _canonical(pte: bytes) -> bytes:
    once = canonical(pte)
    if canonical(once) != once:
        raise BuildError("the .pte round trip is not idempotent; its bytes are not canonical")
    return once


def _operator_table(pte: bytes) -> list[str]:
    from executorch.exir._serialize._program import deserialize_pte_binary

    program = deserialize_pte_binary(pte).program
    names = {
        f"{op.name}.{op.overload}" if op.overload else op.name
        for plan in program.execution_plan
        for op in plan.operators
    }
    return sorted(names)
