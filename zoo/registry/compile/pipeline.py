"""Compile one model for several targets, lowering once per TOSA specification.

For an Ethos-U target: export, PT2E int8 quantization with Arm's quantizer,
lowering with ``EthosUPartitioner`` (``lower.py``), then a Vela performance
report on the exact TOSA graphs the backend compiled. Every other target of
the same TOSA specification only reruns Vela (``retarget.py``). For
``portable`` the float model is lowered without a partitioner
(``portable.py``).

torch and ExecuTorch are imported inside functions only, so importing this
module stays cheap. Nothing is written to disk except Vela's scratch files in
temporary directories.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from zoo._errors import BuildError, MissingExtraError
from zoo._spec import Dataset, ModelSpec
from zoo.registry.compile import lower
from zoo.registry.compile.blame import _lowering_errors, _stage
from zoo.registry.compile.delegation import _warnings
from zoo.registry.compile.export import _as_sample, check_samples
from zoo.registry.compile.portable import _compile_portable
from zoo.registry.compile.result import CompileResult
from zoo.registry.compile.retarget import retarget
from zoo.registry.compile.serialize import operator_table
from zoo.registry.events import Progress, silent_progress
from zoo.registry.npu import vela_report
from zoo.registry.npu.targets import PORTABLE, Target
from zoo.registry.npu.vela_options import vela_flags
from zoo.registry.pte.pte_structure import read_pte
from zoo.registry.request import io_boundary, reproducible
from zoo.registry.request.io_boundary import DEFAULT, Boundary
from zoo.registry.request.precision import DEFAULT as DEFAULT_PRECISION
from zoo.registry.request.precision import Precision

if TYPE_CHECKING:
    from zoo.registry.numerics import NumericsResult

STAGES = ("load", "export", "calibrate", "quantize", "lower", "verify", "serialize", "vela", "retarget")
"""In order; with several targets, "vela" and "retarget" name the target, e.g. "vela ethos-u55-64"."""


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
    evaluation: Dataset | None = None,
    boundary: Boundary = DEFAULT,
    precision: Precision = DEFAULT_PRECISION,
) -> list[CompileResult]:
    """Build ``spec`` for several targets, in their order, for about the cost of one.

    The model is exported, calibrated and lowered once per TOSA specification
    (u55 and u65 share one, u85 has its own); every other target of that
    specification only reruns Vela (``retarget.py``). Each .pte is
    byte-identical to a ``compile_model`` of its target alone. ``verify[i]``
    asks for target i's numerical check, which a TOSA family shares; it runs on
    ``evaluation`` (labelled, e.g. ``--eval-dir``) if given, else on the model's own data.
    ``boundary`` is the program's I/O mode and layout (``compile/boundary.py``), ``precision``
    what it is quantized at (``precision.py``).
    """
    wanted = list(verify) if verify is not None else [False] * len(targets)
    report: Progress = progress or silent_progress
    variant = spec.weights_variant(weights).name
    families: dict[str, list[int]] = {}
    for i, target in enumerate(targets):
        if not target.is_portable and not spec.quantize:
            raise BuildError(
                f"{_where(spec, variant, target)}: the model is declared float-only (quantize=False), but "
                "Ethos-U runs int8/int16 only; build it for the 'portable' target instead"
            )
        families.setdefault(target.tosa_spec or PORTABLE, []).append(i)
    report("load", None, None)
    reproducible.pin()  # before torch computes anything in this process
    torch = _import_stack()
    with reproducible.numerics(torch, f"model {spec.name!r} (weights {variant!r})"):
        return _compile_families(spec, targets, families, variant, calibration, wanted, evaluation, boundary, precision,
                                  report, torch)


def _compile_families(
    spec: ModelSpec, targets: Sequence[Target], families: dict[str, list[int]], variant: str,
    calibration: Dataset | None, wanted: list[bool], evaluation: Dataset | None, boundary: Boundary, precision: Precision,
    report: Progress, torch: Any,
) -> list[CompileResult]:
    results: dict[int, CompileResult] = {}
    labelled = None
    if any(wanted):
        from zoo.registry import numerics

        # Before anything is lowered: a label in the wrong format fails here, in a second.
        where = f"model {spec.name!r} (weights {variant!r})"
        with _stage(where, "evaluation data loading"):
            labelled = numerics.load_labelled(spec, evaluation, where)
        if labelled is not None:
            check_samples([_as_sample(s) for s, _ in labelled.items], spec, where, kind=labelled.name)
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
                with _stage(where, "serialize"):
                    result.io = io_boundary.record(DEFAULT, read_pte(result.pte), spec)
                if any(wanted[i] for i in members):
                    report("verify", None, None)
                    with _stage(where, "numerical check"):
                        from zoo.registry import numerics

                        result.numerics = numerics.check_portable(
                            pte=result.pte, float_model=model,
                            judging=numerics.Judging.of(spec, calibration or spec.calibration, evaluation=evaluation,
                                                        labelled=labelled, where=where, progress=report),
                        )
                for i in members:
                    results[i] = replace(result, numerics=result.numerics if wanted[i] else None)
                continue
            # Looked up on the module, so a test can count the lowerings.
            lowered = lower._lower_ethosu(
                model, example, spec, _base(leader), calibration, where, report, any(wanted[i] for i in members),
                evaluation=evaluation, boundary=boundary, labelled=labelled, precision=precision,
            )
        for i in members:
            results[i] = _finish_ethosu(lowered, targets[i], _where(spec, variant, targets[i]), report, len(members) > 1,
                                        checked=wanted[i])
    return [results[i] for i in range(len(targets))]


def _where(spec: ModelSpec, variant: str, target: Target) -> str:
    return f"model {spec.name!r} (weights {variant!r}) for target {target.name!r}"


def _base(target: Target) -> Target:
    """What the lowering is given: the target without its SRAM budget, whose
    Vela options are only chosen afterwards, on the TOSA graphs."""
    return replace(target, sram_budget=None)


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


def _finish_ethosu(lowered: lower._Lowered, target: Target, where: str, report: Progress, several: bool,
                   checked: bool = False) -> CompileResult:
    """``target``'s artifact from a shared lowering: choose Vela options for its
    SRAM budget, rerun Vela where its options differ from the lowering's, and
    take Vela's performance report. With ``checked``, the lowering's numerical check,
    its NPU-program level run again on a retargeted program."""
    from zoo.registry.npu import memory_fit
    label = f" {target.name}" if several else ""
    graphs = [c.tosa for c in lowered.ordered]
    fit: dict[str, Any] | None = None
    final = _base(target)
    report(f"vela{label}", None, None)
    with _stage(where, "Vela report"):
        if target.sram_budget is None:
            vela = vela_report.summarize([vela_report.run_vela(g, final) for g in graphs])
            # What a budget would choose among, so --sram-budget can later be answered
            # from this cached build when its options win (build_units/derive.py).
            size = vela_report.summarize([vela_report.run_vela(g, final, extra_flags=(memory_fit.SIZE,)) for g in graphs])
            vela["alternatives"] = [{"flags": [memory_fit.SIZE], "sram_bytes": int(size["total"]["sram_bytes"]),
                                     "inference_time_ms": float(size["total"]["inference_time_ms"])}]
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
    numerics = lowered.numerics if checked else None
    if vela_flags(final) == vela_flags(lowered.target):
        pte = lowered.pte
    else:
        report(f"retarget{label}", None, None)
        with lower._LOWERING, _lowering_errors(where):
            pte, payloads = retarget(lowered.pte, graphs, [c.processed for c in lowered.ordered], final)
        if numerics is not None:
            with _stage(where, "numerical check of the retargeted program"):
                numerics = retargeted_check(numerics, payloads, final)
    with _stage(where, "serialize"):
        cpu_operators = operator_table(pte)
    return CompileResult(
        pte=pte,
        tosa_graphs=graphs,
        vela=vela,
        delegation=lowered.delegation,
        cpu_operators=cpu_operators,
        calibration=lowered.calibration,
        warnings=[*_warnings(lowered.delegation, target), *lowered.warnings, *_flag_drift(lowered)],
        memory_fit=fit,
        io=lowered.io,
        numerics=numerics,
    )


def retargeted_check(numerics: NumericsResult, payloads: dict[bytes, bytes], target: Target) -> NumericsResult:
    """The lowering's check with its NPU-program level run on ``target``'s programs: the same
    delegate calls, each old payload replaced by the one Vela made for ``target``."""
    from zoo.registry.npu import memory_fit
    from zoo.registry.numerics.npu_program import with_level

    if numerics.npu is None:
        return numerics
    size = memory_fit.fast_scratch(target, vela_flags(target))
    level = numerics.npu.rerun(payloads, dict.fromkeys(payloads.values(), size))
    return replace(numerics, record=with_level(numerics.record, level), npu=level)


def _flag_drift(lowered: lower._Lowered) -> list[str]:
    """The Vela report must use the flags the backend used (checked on the lowering's own run)."""
    expected = vela_flags(lowered.target)
    for c in lowered.ordered:
        if c.flags != expected:
            return [
                "the Vela report used flags that differ from the backend's: "
                f"{' '.join(expected)} vs {' '.join(c.flags)}"
            ]
    return []
