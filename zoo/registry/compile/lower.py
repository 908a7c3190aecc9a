"""Lower a model for Ethos-U: export, quantize, partition with
``EthosUPartitioner`` (which runs Vela per partition), and capture the TOSA
graph and Vela output of every delegate the backend compiles."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from zoo._errors import BuildError
from zoo._spec import Dataset, ModelSpec, Sample
from zoo.registry.compile import qat
from zoo.registry.compile.activations import keep_activations
from zoo.registry.compile.bilinear_x2 import exact_bilinear_x2, rewrites_bilinear
from zoo.registry.compile.blame import _graph_ops, _lowering_errors, _stage
from zoo.registry.compile.boundary import (
    after_lowering,
    before_lowering,
    io_params,
    prepare,
    program_input,
)
from zoo.registry.compile.conv_fold import fold_into_convolutions
from zoo.registry.compile.delegation import _delegation
from zoo.registry.compile.export import (
    _as_sample,
    _export,
    _quantize,
    check_samples,
    digest_samples,
)
from zoo.registry.compile.hard_activations import fuse_hard_activations
from zoo.registry.compile.negation import negations_as_products, refuse_unscaled_negations
from zoo.registry.compile.retarget import ethosu_compile_spec
from zoo.registry.compile.serialize import _canonical, _program_bytes
from zoo.registry.compile.spatial_mean import pool_spatial_means
from zoo.registry.compile.widen_linear import widen_narrow_linears, widens_linears
from zoo.registry.events import Progress
from zoo.registry.npu.targets import Target
from zoo.registry.numerics.compare import mismatched_outputs
from zoo.registry.pte.pte_structure import ETHOSU_BACKEND_ID, read_pte
from zoo.registry.request import io_boundary
from zoo.registry.request.io_boundary import DEFAULT, Boundary
from zoo.registry.request.precision import DEFAULT as DEFAULT_PRECISION
from zoo.registry.request.precision import Precision

if TYPE_CHECKING:
    from zoo.registry.numerics import Labelled, NumericsResult

# Patching the backend's Vela hook is process-global; one lowering at a time.
_LOWERING = threading.Lock()


@dataclass
class _Capture:
    tosa: bytes
    flags: list[str]
    processed: bytes


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
    io: dict[str, Any]
    """``io_boundary.record``: retargeting changes the payloads, never the boundary."""


def _outputs(program: Any) -> list[Any]:
    """The example value of each user output of an ``ExportedProgram``, in order."""
    from torch.export.graph_signature import OutputKind

    nodes = program.graph_module.graph.output_node().args[0]
    return [getattr(node, "meta", {}).get("val") for node, spec in zip(nodes, program.graph_signature.output_specs, strict=True)
            if spec.kind == OutputKind.USER_OUTPUT]


def _same_outputs(exported: Any, lowered: Any, where: str) -> None:
    """Refuse a lowering whose outputs differ in count, shape or dtype from the exported model's:
    a pass changed the model's function, at every build, with or without ``--verify`` (issue 55)."""
    wrong = mismatched_outputs(_outputs(lowered), _outputs(exported), "the lowered program", "the exported model")
    if wrong is not None:
        raise BuildError(
            f"{where}: {wrong}, so nothing is handed out. ExecuTorch 1.5.1's FoldScalarMulIntoConvPass does "
            "this to a convolution's output multiplied by a one-element constant with more dimensions "
            "(docs/upstream.md): multiply by a number and unsqueeze the product instead"
        )


def _training_samples(spec: ModelSpec, where: str) -> list[Sample]:
    if spec.training is None:
        raise BuildError(f"{where}: --qat needs training data, and the model declares none (ModelSpec.training)")
    with _stage(where, "training data loading"):
        samples = [_as_sample(s) for s in spec.training.load()]
    if not samples:
        raise BuildError(f"{where}: the training set is empty, so --qat has nothing to fine-tune on")
    check_samples(samples, spec, where, kind="training")
    return samples


def _lower_ethosu(
    model: Any,
    example: Sample,
    spec: ModelSpec,
    target: Target,
    calibration: Dataset | None,
    where: str,
    report: Progress,
    verify: bool,
    evaluation: Dataset | None = None,
    boundary: Boundary = DEFAULT,
    labelled: Labelled | None = None,
    precision: Precision = DEFAULT_PRECISION,
) -> _Lowered:
    from executorch.backends.arm.ethosu import EthosUPartitioner
    from executorch.exir import to_edge_transform_and_lower

    compile_spec = ethosu_compile_spec(target)
    dataset = calibration or spec.calibration
    with _stage(where, "calibration data loading"):
        samples = [_as_sample(s) for s in dataset.load()]
    if not samples:
        raise BuildError(f"{where}: the calibration set is empty")
    check_samples(samples, spec, where)
    training = _training_samples(spec, where) if precision.qat else []
    with _stage(where, f"--io {boundary.mode} --layout {boundary.layout}"):
        program_model, program_example, prepared = prepare(model, example, samples + training, spec, boundary)
        program_samples, program_training = prepared[:len(samples)], prepared[len(samples):]
    training_run = qat.Training(program_model, program_training) if precision.qat else None
    report("export", None, None)
    with _stage(where, "export"):
        float_program = _export(program_model, program_example)
        graph = float_program.module(check_guards=False)
        pool_spatial_means(graph)  # before quantizing, so a global mean is annotated as MobileNetV2's pool
        if rewrites_bilinear(target.tosa_spec):
            exact_bilinear_x2(graph)  # the U55 and U65 upsample ×2 by nearest and average pools, not bilinearly
        negations_as_products(graph)  # an int8 neg lowers without rescaling to its own output grid
        fuse_hard_activations(graph)  # before folding: a hard-sigmoid's scale and shift then fold into its conv
        fold_into_convolutions(graph)
    transformed: list[dict[str, Any]] = []
    quantized = _quantize(graph, program_samples, compile_spec, where, report, boundary, precision,
                          modules=[name for name, _ in program_model.named_modules() if name],
                          training=training_run, transformed=transformed)
    with _stage(where, "quantize"):
        if widens_linears(target.family, target.macs):
            widen_narrow_linears(quantized, target.macs or 0)  # the U85 runs a linear layer of a narrow input faster padded
        exported = _export(quantized, program_example)
        constants = before_lowering(exported, boundary)

    report("lower", None, None)
    with (_LOWERING, _record_backend() as recorder, keep_activations(), refuse_unscaled_negations(),
          _lowering_errors(where, recorder)):
        edge = to_edge_transform_and_lower(
            exported, partitioner=[EthosUPartitioner(compile_spec)], constant_methods=constants or None,
        )
        ordered = _in_program_order(edge, recorder.captures, where)
        _same_outputs(float_program, edge.exported_program(), where)
        after_lowering(edge, boundary, where)
        delegation = _delegation(edge)  # to_executorch rewrites the graph in place
    checked = None
    if verify:
        # Before to_executorch, which rewrites the edge graph in place.
        report("verify", None, None)
        with _stage(where, "numerical check"):
            from zoo.registry import numerics
            from zoo.registry.npu import memory_fit

            checked = numerics.check_ethosu(
                float_model=model, fake_quant=quantized, edge_program=edge.exported_program(),
                graphs={c.processed: c.tosa for c in ordered},
                fast_scratch={c.processed: memory_fit.fast_scratch(target, c.flags) for c in ordered},
                judging=numerics.Judging.of(spec, dataset, loaded=samples, evaluation=evaluation, labelled=labelled,
                                            where=where, progress=report),
                program_input=lambda sample: program_input(sample, spec, boundary),
                io=io_params(edge, boundary),
                kind=precision.name,
            )
    with _LOWERING, _lowering_errors(where):
        program = edge.to_executorch()
    warnings = []
    if precision.transform and not precision.qat:
        warnings.append(f"weights transformed ({precision.transform}) after training, without fine-tuning"
                        + ("" if spec.training else ": the model declares no training data"))
    if len(samples) != dataset.size:
        warnings.append(
            f"calibrated on {len(samples)} sample(s); the calibration set declares {dataset.size}"
        )
    report("serialize", None, None)
    with _stage(where, "serialize"):
        pte = _canonical(_program_bytes(program))
        info = read_pte(pte)
        io = io_boundary.record(boundary, info, spec)
        left = info.operators
    if boundary.integer and left:
        raise BuildError(
            f"{where}: --io {boundary.mode} must leave no operator on the CPU, but the program still needs "
            f"{', '.join(left)}; build it with --io float, which runs them on the CPU",
            stage="integer I/O",
        )
    return _Lowered(
        target=target,
        pte=pte,
        ordered=ordered,
        delegation=delegation,
        calibration={"samples": len(samples), "sha256": digest_samples(samples),
                     **({"qat": training_run.record} if training_run else {}),
                     **({"weights_transform": {"name": precision.transform, "layers": transformed}}
                        if precision.transform else {})},
        warnings=warnings,
        numerics=checked,
        io=io,
    )


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
        if module.backend_id != ETHOSU_BACKEND_ID:
            continue
        processed = bytes(module.processed_bytes)
        match = next((c for c in captures if c.processed == processed), None)
        if match is None:
            raise BuildError(f"{where}: an Ethos-U delegate was not compiled through Vela")
        ordered.append(match)
    return ordered
