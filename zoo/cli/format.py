"""How results read on a terminal: fetch summaries and verification reports."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from zoo._units import duration, human_bytes
from zoo.cli.table import render
from zoo.registry.report import GENERATED, sqnr_text
from zoo.registry.store.failures import Failure

if TYPE_CHECKING:
    from zoo.registry.handout import Artifact
    from zoo.registry.store.manifest import Manifest
    from zoo.registry.verify.verification import Verification


def _summary_table(outcomes: Sequence[Artifact | Failure]) -> str:
    """One row per artifact (or failure) of a multi-artifact fetch."""
    rows = []
    for o in outcomes:
        if isinstance(o, Failure):
            rows.append((o.model, o.target, "FAILED", f"at {o.where}", "-", "-", "-"))
            continue
        m = o.manifest
        t = m.vela_total
        fit = m.memory_fit
        pte = m.file("pte")
        rows.append((
            m.model, m.target, {"cache": "cache", "remote": "remote", "build": "built"}[o.source],
            duration(t.inference_time_ms) if t else "-",
            human_bytes(t.sram_bytes) if t else "-",
            (f"{'fits' if fit['fits'] else 'DOES NOT FIT'} {human_bytes(fit['sram_budget_bytes'])}"
             + (f" ({' '.join(fit['selected_flags'])})" if fit["selected_flags"] else "")) if fit else "-",
            human_bytes(pte.size if pte else None),
        ))
    return render(("model", "target", "from", "Vela time", "SRAM", "SRAM budget", ".pte"), rows)


def _summary(art: Artifact, *, layouts: Sequence[str]) -> str:
    """A few lines on one fetched artifact: size, origin, Vela's estimate, SRAM fit, delegation,
    what other I/O options would save (the model offers ``layouts``), checks."""
    m = art.manifest
    pte = m.file("pte")
    assert pte is not None
    where = {"cache": "from cache", "remote": "downloaded and verified",
             "build": f"built in {m.build.get('seconds', 0):.1f} s"}[art.source]
    lines = [f"{m.model} for {m.target}, {m.precision}: {human_bytes(pte.size)} .pte, sha256 {pte.sha256[:16]}…, {where}"]
    t = m.vela_total
    if t is not None:
        lines.append(
            f"  Vela estimate: {duration(t.inference_time_ms)}/inference ({t.inferences_per_second or 0:,.0f}/s), "
            f"SRAM {human_bytes(t.sram_bytes)}, flash {human_bytes(t.flash_bytes or 0)}, DRAM {human_bytes(t.dram_bytes)}"
        )
    reserve = _reserve_text(m.memory)
    if reserve:
        lines.append(f"  RAM to reserve for ExecuTorch's runtime: {reserve}")
    fit = m.memory_fit
    if fit:
        chosen = " ".join(fit["selected_flags"]) or "Vela's default options"
        lines.append(f"  SRAM budget {human_bytes(fit['sram_budget_bytes'])} ({fit['budget_from']}): the NPU's own SRAM, "
                     f"{human_bytes(fit['sram_bytes'])}, {'fits' if fit['fits'] else 'DOES NOT FIT'} with {chosen} "
                     f"({len(fit['candidates'])} option set(s) tried)")
        if reserve:
            lines.append("    the budget covers the NPU's scratch (the temp allocator); the planned buffers and the method "
                         "allocator may sit in any RAM the CPU reaches (docs/c-header.md, Where each lives)")
    d = m.delegation
    if d:
        lines.append(f"  operators: {d.get('npu_ops')} on the NPU in {d.get('partitions')} partition(s); {_cpu_text(m)}")
    if m.io and m.io.get("mode") != "float":
        from zoo.registry.request.io_boundary import axes_of

        lines.append(f"  I/O ({m.io['mode']}): " + "; ".join(_tensor_io(t, axes_of(m.io))
                                                          for t in (*m.io["inputs"], *m.io["outputs"])))
    saving = _saving_text(art, layouts)
    if saving:
        lines.append(f"  {saving}")
    v = art.verification
    if v is not None:
        lines.append(f"  verification: {_verification_line(v)}")
    if (m.weights_info or {}).get("origin") == GENERATED and any(o["sqnr_db"] is not None for o in m.output_sqnr):
        lines.append(f"  random weights, so judged against float by each output: {sqnr_text(m.output_sqnr)}")
    return "\n".join(lines)


def _saving_text(art: Artifact, layouts: Sequence[str]) -> str | None:
    """What ``--io int8`` and ``--layout nhwc`` would save, where the build does not use them (``io_saving``)."""
    from zoo.registry.io_saving import saving
    from zoo.registry.pte.pte_structure import PteFormatError, read_pte

    if art.manifest.vela is None:
        return None
    # The .pte the hand-out checked: its count, not the manifest's; parsed by that check where it ran.
    program = art.verification._program if art.verification is not None else None
    try:
        info = program.info if program is not None else read_pte(art.pte.read_bytes())
    except (OSError, PteFormatError):
        return None
    s = saving(art.manifest, info, layouts)
    if s is None:
        return None
    parts = []
    if s.layout and s.transposes is not None:
        parts.append(f"{s.transposes} transpose operator(s) on the NPU ({s.cycles:,} cycles, {duration(s.ms)})")
    if s.cpu_operators:
        parts.append(f"{s.cpu_operators} quantize/dequantize operator(s) on the CPU")
    text = f"{s.options} would save " + " and ".join(parts)
    if s.layout and s.transposes is None:
        text += (" and the NPU's transposes of the input" if parts else "the NPU's transposes of the input")
        text += " (their cycles are not in this manifest, which predates that record: 'zoo build' records them)"
    return text


def _reserve_text(memory: dict[str, Any] | None) -> str | None:
    """The header's pool sizes, for the summary (absent from manifests before pipeline 7)."""
    if not memory or memory.get("method_allocator_bytes") is None:
        return None
    temp = max(memory["load_temp_bytes"], memory.get("scratch_bytes") or 0)
    return (f"planned {human_bytes(memory['planned_bytes'])}, method allocator "
            f"{human_bytes(memory['method_allocator_bytes'])}, temp allocator {human_bytes(temp)}")


def _cpu_text(m: Manifest) -> str:
    """What the firmware must run and link besides the NPU, the boundary's quantize/dequantize included."""
    from zoo.registry.report import (
        cpu_work,  # the report module pulls in the cache: only when a summary is drawn
    )

    run, kernels = cpu_work(m)
    boundary = int(m.delegation.get("cpu_quantize_ops") or 0)
    text = f"{'?' if run is None else run} on the CPU"
    if boundary:  # what --io int8 saves has a line of its own (io_saving)
        hint = "" if m.precision.split("+")[0] == "int8" else f"; {m.precision} takes --io float only"
        text += f" ({boundary} quantize/dequantize at the boundary{hint})"
    short = [k.split("::")[-1] for k in kernels]
    return text + (f"; kernels to link: {', '.join(short)}" if kernels else "; no kernels to link")


def _tensor_io(t: dict[str, Any], axes: str) -> str:
    from zoo.registry.request.io_boundary import layout_name, physical_shape

    text = f"{t['name']} {t['dtype']} {physical_shape(t)}"
    layout = layout_name(t["dim_order"], axes)
    if layout:
        text += f" {layout.upper()}"
    if t.get("scale") is not None:
        text += f", scale {t['scale']:.6g}, zero point {t['zero_point']}"
    return text


def _verification_line(v: Verification) -> str:
    """The checks of an artifact in one line, for the fetch summary."""
    structure = sum(c.passed for c in v.checks)
    text = f"structure {structure}/{len(v.checks)} checks passed"
    n = v.numerics
    if n is None:
        return text + (f"; numerics not checked: {v.not_checked}" if v.not_checked else "; numerics not recorded (--verify runs them)")
    by = " as recorded by the publisher, not run here," if v.numerics_by == "publisher" else ""
    text += f"; numerics{by} {'passed' if n.get('passed') else 'FAILED'} on {n['samples']} {n['dataset']} samples ({n['method']})"
    acc = n.get("accuracy")  # recorded by zoo before declared metrics (CHECK_VERSION 2)
    if n.get("metrics"):
        text += "; " + "; ".join(metric_text(m) for m in n["metrics"])
    elif acc:
        test = next(k for k in acc if k.endswith("_top1") and k != "float_top1")
        text += f"; top-1 float {acc['float_top1']:.2%}, {test.removesuffix('_top1')} {acc[test]:.2%}"
    elif n.get("top1_agreement"):
        text += f"; top-1 {top1_text(n['top1_agreement'])}"
    if n.get("metrics_note"):
        text += "; no metric measured: judged by the elementwise checks alone"
    level = npu_program_line(n)
    return text + (f"; {level}" if level else "")


def npu_program_line(numerics: dict[str, Any]) -> str | None:
    """The "NPU program" level (``numerics/npu_program.py``) in a few words; None where the record has none."""
    level = numerics.get("npu_program")
    if not isinstance(level, dict):
        return None
    by = level.get("method", "command-stream interpreter, a stand-in for the NPU")
    if level.get("outcome") == "passed" and not level.get("delegate_calls"):  # a record from before zoo said so
        return f"NPU program compared nothing: no delegate call ran ({by})"
    if level.get("outcome") == "passed":
        return f"NPU program bit-exact on {level['samples']} samples, {level['delegate_calls']} delegate calls ({by})"
    if level.get("outcome") == "skipped":
        return f"NPU program skipped, {level['skipped']} ({by})"
    return f"NPU program FAILED ({by})"


def verification_lines(v: Verification) -> list[str]:
    """The report of ``zoo verify``, one check per line; the first line says which checks ran."""
    out = [f"{v.subject}: {verdict(v)}"]
    width = max((len(c.name) for c in v.checks), default=8)
    out += [f"  {'ok  ' if c.passed else 'FAIL'}  {c.name:<{width}}  {c.detail}" for c in v.checks]
    if v.numerics is None:
        if v.not_checked:
            out.append(f"  {'-':<4}  {'numerics':<{width}}  not checked: {v.not_checked}")
        elif v.artifact:
            out.append(f"  {'-':<4}  {'numerics':<{width}}  not recorded (build with --verify, or run 'zoo verify MODEL -t TARGET')")
    else:
        if v.numerics_by == "publisher":
            from zoo.registry.verify.verification import PUBLISHER

            out.append(f"  {'':<4}  {'numerics':<{width}}  {PUBLISHER}")
        for c in v.numerics.get("checks", []):
            mark = "skip" if c.get("skipped") else "ok  " if c["passed"] else "FAIL"
            out.append(f"  {mark}  {c['name']:<{width}}  {c['detail']}")
        agreement = v.numerics.get("top1_agreement")
        if agreement:
            out.append(f"  {'':<4}  {'top-1':<{width}}  {top1_text(agreement)}")
        if v.numerics.get("metrics_note"):
            out.append(f"  {'':<4}  {'metrics':<{width}}  {v.numerics['metrics_note']}")
    if v.bundle:
        out.append(f"  {'':<4}  {'bundle':<{width}}  {v.bundle['file']}: {v.bundle['test_cases']} test case(s), "
                   f"atol {v.bundle['atol']:.4g}, rtol {v.bundle['rtol']:g}")
    out += [f"  note: {n}" for n in v.notes]
    return out


def verdict(v: Verification) -> str:
    """Which checks passed, and only those: ``verified`` only where the numerics ran too, by zoo."""
    if not v.passed:
        return "FAILED"
    structure = f"structure ok ({len(v.checks)} checks)"
    if v.numerics is None:
        return f"{structure}; numerics not checked"
    if v.numerics_by == "publisher":
        return f"{structure}; numerics passed as the publisher recorded them, not run here"
    return "verified (structure, and numerics as zoo recorded them when it built this .pte)"


def metric_text(m: dict[str, Any]) -> str:
    """One measured metric: ``top1 float 97.5%, int8 97.3%``."""
    unit = m.get("unit") or ""
    return f"{m['name']} float {m['float']:.4g}{unit}, {m.get('program_kind', 'program')} {m['program']:.4g}{unit}"


def top1_text(agreement: dict[str, Any]) -> str:
    """How often the lowered model's top-1 class agrees with the float model's."""
    constant = agreement.get("constant_output_samples") or 0
    text = (f"agrees with float on {agreement['rate']:.2%} of {agreement['samples']} samples"
            if agreement.get("rate") is not None else "agreement with float not measurable")
    if constant:
        text += f"; {constant} sample(s) left out: an output was constant, so its argmax says nothing"
    return text
