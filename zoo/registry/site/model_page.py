"""A model's page: its task and inputs, its weights with their origin and licence, a chart and
a table per target of every build (variants named by what differs), the zoo fetch line and the
files of each build, and what failed."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from zoo._units import duration
from zoo.registry.best_precision import Candidate, judge, summary
from zoo.registry.report import GENERATED
from zoo.registry.site.builds import Build, Model, Site
from zoo.registry.site.chart import chart_svg
from zoo.registry.site.markup import (
    NOTE,
    Scale,
    anchor,
    e,
    metrics_text,
    page,
    share,
    short_op,
    size,
)

_CONVENTIONS = {
    "float": "float tensors as the model takes them; the CPU quantizes the input and dequantizes the output",
    "int8": "the quantized int8 tensors themselves (scale and zero point in the C header); nothing runs on the CPU",
    "uint8": "the quantized uint8 tensors themselves (scale and zero point in the C header); nothing runs on the CPU",
    "pixels": "raw uint8 image bytes, normalised by the program's first layer on the NPU",
}


def _values(value: Any) -> str:
    if isinstance(value, list):
        return "(" + ", ".join(f"{v:g}" if isinstance(v, (int, float)) else str(v) for v in value) + ")"
    return "-" if value is None else str(value)


def _inputs(model: Model) -> str:
    inputs = next((b.inputs for b in model.builds if b.inputs), ())
    if not inputs:
        return "<p>No build records the model's inputs.</p>"
    rows = "".join(
        f"<tr><td>{e(i.get('name'))}</td><td>{e(_values(i.get('shape')))}</td><td>{e(i.get('dtype') or '-')}</td>"
        f"<td>{e(_values(i.get('range')))}</td><td>{e(_values(i.get('mean')))}</td><td>{e(_values(i.get('std')))}</td></tr>"
        for i in inputs)
    modes = sorted({(b.io, b.memory_layout) for b in model.builds})
    items = "".join(f"<li><b>{e(mode)}</b> ({e(layout)}): {e(_CONVENTIONS.get(mode, 'as the manifest records it'))}</li>"
                    for mode, layout in modes)
    return ('<table class="inputs"><thead><tr><th>input</th><th>shape</th><th>dtype</th><th>range</th>'
            f"<th>mean</th><th>std</th></tr></thead><tbody>{rows}</tbody></table>"
            "<p>Range is what the model expects after preprocessing; mean and std are the normalisation "
            f"applied to raw data. What the program itself takes, by I/O mode built here:</p><ul>{items}</ul>")


def _weights(model: Model) -> str:
    seen: dict[str, dict[str, Any]] = {}
    for b in model.builds:
        seen.setdefault(b.weights, b.weights_info)
    for f in model.failures:
        seen.setdefault(f.weights, {})
    items = []
    for name, info in sorted(seen.items()):
        declared = info.get("reference") if isinstance(info.get("reference"), dict) else {}
        ref = "; ".join(f"{k} {v}" for k, v in sorted(declared.items())) if declared else ""
        items.append(
            f"<dt>{e(name)}</dt><dd>{e(info.get('description') or '')}"
            f"<br>Origin: {e(info.get('origin') or 'not recorded')}. Licence: {e(info.get('licence') or 'not recorded')}."
            + (f"<br>Declared by its publisher: {e(ref)}." if ref else "") + "</dd>")
    return f'<dl class="weights">{"".join(items)}</dl>'


def _files(b: Build) -> str:
    items = []
    for f in b.files:
        name = f'<a href="{e(f.href)}" download>{e(f.name)}</a>' if f.href else f"<code>{e(f.name)}</code>"
        items.append(f'<li>{name} <span class="kind">{e(f.kind)}, {e(size(f.size))}</span> '
                     f'<code class="sha">sha256 {e(f.sha256)}</code></li>')
    signed = " Signed by its publisher (zoo fetch checks the signature against your trusted keys)." if b.signed else ""
    return f'<ul class="files">{"".join(items)}</ul>{e(signed)}' if items else ""


_HEAD = ("<thead><tr><th>variant</th><th>I/O</th><th>est. time</th><th>inferences/s</th><th>SRAM</th>"
         "<th>flash</th><th>DRAM</th><th>RAM to reserve</th><th>.pte</th><th>operators</th><th>on the CPU</th>"
         "<th>metrics<br><small>float → program</small></th></tr></thead>")
_COLUMNS = 12


def memory_line(b: Build) -> str:
    """Every memory the build needs, and where each must live (docs/c-header.md, Where each lives)."""
    if b.accelerator is None:
        npu = "runs on the CPU"
    else:
        arena = ("DRAM, with an SRAM cache of " + size(b.arena_cache_bytes) if b.memory_mode
                 and b.memory_mode.startswith("Dedicated_Sram") and b.arena_cache_bytes else "SRAM")
        npu = (f"Vela: SRAM {size(b.sram_bytes)}, flash {size(b.flash_bytes)}, DRAM {size(b.dram_bytes)} "
               f"({b.memory_mode or '?'}: the NPU's arena in {arena})")
    if b.reserve_bytes is None:
        return f"Memory: {npu}; the runtime's RAM is not recorded for this build."
    planned, method, temp = size(b.planned_bytes), size(b.method_allocator_bytes), size(b.temp_allocator_bytes)
    if b.accelerator is None:  # no NPU: the temp allocator holds only what load_method needs for a while
        return (f"Memory: {npu}; RAM to reserve {size(b.reserve_bytes)}: planned buffers {planned}, method allocator "
                f"{method} and temp allocator {temp} (the kernels' metadata while the method loads), all in any RAM "
                "the CPU reaches.")
    return (f"Memory: {npu}; RAM to reserve {size(b.reserve_bytes)}: planned buffers {planned} and method allocator "
            f"{method} in any RAM the CPU reaches, temp allocator {temp} (it holds the NPU's scratch) where the arena "
            "lives.")


def _cpu(b: Build) -> str:
    names = sorted({short_op(n) for n in b.cpu_op_names})
    return ", ".join(names) or ("-" if b.npu_ops is None else "none of the model's operators")


def _best_precision(builds: Sequence[Build]) -> str:
    """Which precision to ship on this target, where it was built at several and verified. Random
    weights are judged by output SQNR, which index records do not carry: those are not judged here."""
    judged = judge([Candidate(b, b.precision, (b.io, b.layout, b.sram_budget, b.extra_flags), b.time_ms,
                              () if b.weights_info.get("origin") == GENERATED else b.metrics, None, False, b.built_at)
                    for b in builds])
    if judged is None:
        return ""
    return f'<p class="best">Best precision: <b>{e(summary(judged))}</b>. The goal: {e(judged.goal)}.</p>'


def _target_table(target: str, builds: Sequence[Build], labels: dict[str, str]) -> str:
    rows = []
    for b in builds:
        per_s = "-" if b.per_second is None else f"{b.per_second:,.0f}"
        rows.append(
            f'<tr id="{anchor(b)}" class="build"><td>{e(labels.get(b.key) or "-")}</td>'
            f"<td class=\"io\">{e(b.io)} {e(b.memory_layout)}</td><td class=\"num\">{e(duration(b.time_ms))}</td>"
            f'<td class="num">{e(per_s)}</td><td class="num">{e(size(b.sram_bytes))}</td>'
            f'<td class="num">{e(size(b.flash_bytes))}</td><td class="num">{e(size(b.dram_bytes))}</td>'
            f'<td class="num">{e(size(b.reserve_bytes))}</td><td class="num">{e(size(b.pte_bytes))}</td>'
            f"<td>{e(share(b))}</td><td>{e(_cpu(b))}</td><td>{e(metrics_text(b))}</td></tr>")
        options = ", ".join(filter(None, [b.system_config, b.memory_mode, " ".join(b.extra_flags)])) or "portable"
        rows.append(
            f'<tr class="how"><td colspan="{_COLUMNS}"><div class="fetch"><span>Vela: {e(options)}; built '
            f"{e(b.built_at[:10] or '?')}{e('; board ' + b.board if b.board else '')}</span><pre><code>"
            f"{e(b.fetch_line())}</code></pre></div><p class=\"memory\">{e(memory_line(b))}</p>{_files(b)}</td></tr>")
    return (f'<section class="target" id="{e("t-" + anchor(builds[0]))}"><h3>{e(target)}</h3>{_best_precision(builds)}'
            f'<div class="scroll"><table class="builds">{_HEAD}<tbody>{"".join(rows)}</tbody></table></div></section>')


def _failures(model: Model) -> str:
    if not model.failures:
        return ""
    rows = "".join(
        f"<tr><td>{e(f.target)}</td><td>{e(f.label)}</td><td>{e(f.where)}</td>"
        f"<td><details><summary>{e((f.message.splitlines() or [''])[0][:160])}</summary><pre>{e(f.message)}</pre>"
        "</details></td></tr>" for f in model.failures)
    return ('<h2 id="failures">What failed</h2><p class="note">Recorded failures: zoo fetch does not compile '
            "these again until a tool changes; zoo build tries again.</p>"
            f'<table class="failures"><thead><tr><th>target</th><th>variant</th><th>where</th><th>error</th></tr>'
            f"</thead><tbody>{rows}</tbody></table>")


def _tools(model: Model) -> str:
    seen = sorted({", ".join(f"{k} {v}" for k, v in sorted(b.tools.items())) for b in model.builds})
    return "<h2>Tools</h2><ul>" + "".join(f"<li>{e(t or 'not recorded')}</li>" for t in seen) + "</ul>" if seen else ""


def render_model(site: Site, model: Model, targets: list[str], scale: Scale) -> str:
    labels = model.labels()
    by_target = {t: [b for b in model.builds if b.column == t] for t in targets}
    tables = [_target_table(t, bs, labels) for t, bs in by_target.items() if bs]
    chart = chart_svg(model.builds, labels, scale, title=f"{model.name}: Vela's estimated time per inference")
    n = sum(1 for bs in by_target.values() if bs)
    counts = f"{len(model.builds)} build{'s' * (len(model.builds) != 1)} on {n} target{'s' * (n != 1)}"
    if model.failures:
        counts += f', <a href="#failures">{len(model.failures)} failed</a>'
    return page(f"{model.name}: zoo catalogue", [
        '<p class="back"><a href="../index.html">← every model</a></p>',
        f"<h1>{e(model.name)}</h1>",
        f'<p class="task">Task: <b>{e(model.task)}</b>. {e(model.description)}</p>',
        f"<p>{counts}.</p>",
        "<h2>Inputs</h2>", _inputs(model),
        "<h2>Weights</h2>", _weights(model),
        "<h2>Builds</h2>", f'<p class="note">{e(NOTE)}</p>',
        f'<figure class="chart">{chart}</figure>' if chart else "",
        *tables,
        _failures(model),
        _tools(model),
    ], root="../", source=site.source)
