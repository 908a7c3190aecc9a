"""The catalogue for people: a plain-text table of every model × target, or a
self-contained HTML page whose heat map shows at a glance what runs where and how fast."""

from __future__ import annotations

import html
import math
from pathlib import Path

from zoo._fs import write_atomic
from zoo._units import duration, human_bytes
from zoo.cli.report_render import page
from zoo.cli.table import render
from zoo.registry.best_precision import judge, of_row, summary
from zoo.registry.report import NOTE, Catalogue, Cell, ReportRow
from zoo.registry.site.builds import Failed
from zoo.registry.site.markup import short_op, stop
from zoo.registry.site.variants import options_text
from zoo.registry.store.failures import Failure

# The heat map's colours are the site's (site.markup.stop): one scale for the HTML report and the site.


def operators(row: ReportRow) -> str:
    """NPU share and partitions, e.g. ``100 % (1 part.)`` or ``93 % (3 parts)``."""
    share = row.npu_share
    if share is None:
        return "-"
    parts = row.partitions or 0
    return f"{share:.0%} NPU, {parts} part{'s' if parts != 1 else ''}"


def cpu_ops(row: ReportRow) -> str:
    """What the firmware's CPU runs around the NPU: the model's operators that fell back,
    by name, and a float program's quantize/dequantize at its inputs and outputs
    ("none" for an integer-I/O program fully on the NPU; "-" where the manifest does not say)."""
    names = sorted({short_op(n) for n in row.cpu_fallback})
    boundary = row.cpu_run - (row.cpu_ops or 0) if row.cpu_run is not None else 0
    parts = [*names, *([f"{boundary} I/O (de)quantize"] if boundary > 0 else [])]
    if parts:
        return ", ".join(parts)
    return "none" if row.cpu_run == 0 else "-"


def row_variant(row: ReportRow) -> str:
    """What the row's key names besides model, weights and target, as the site labels it ("-" for none)."""
    return options_text(row.io, row.sram_budget_bytes, row.extra_flags, row.precision) or "-"


def failure_variant(failure: Failure) -> str:
    return Failed.from_failure(failure).options or "-"


def best_precision(cell: Cell) -> str:
    """The precision to ship for the cell, beside int8's result; "-" where it has one precision only."""
    return summary(judge([of_row(r) for r in cell.variants]))


def counts(catalogue: Catalogue) -> str:
    """The counts; the failed builds are counted as ``zoo site`` counts them, one per recorded failure."""
    failed = len(catalogue.failed)
    return (f"{len(catalogue.cells)} model × target cells, {catalogue.built} with a build; "
            f"{failed} failed build{'s' if failed != 1 else ''}")


def render_catalogue_text(catalogue: Catalogue) -> str:
    """One line per cell and per failed build; a ``best precision`` column where a cell was built at several,
    and the NPU-program level's where a build recorded it (``--verify`` on an Ethos-U55/U65)."""
    best = {id(c): best_precision(c) for c in catalogue.ordered()}
    judged = any(text != "-" for text in best.values())
    interpreted = any(c.row is not None and c.row.npu_program for c in catalogue.ordered())
    headers = ["task", "model", "weights", "target", "variant", "result", "est. time", "operators", "SRAM", "flash",
               "CPU operators", "metric", *(["NPU program"] if interpreted else []),
               *(["best precision"] if judged else [])]
    body = []
    for cell in catalogue.ordered():  # grouped by task
        where = [catalogue.task(cell.model), cell.model, cell.weights, cell.target]
        if cell.row is not None:
            r = cell.row
            body.append([*where, row_variant(r), "built", duration(r.inference_time_ms), operators(r),
                         human_bytes(r.sram_bytes), human_bytes(r.flash_bytes), cpu_ops(r), r.metrics_text,
                         *([r.npu_program_text] if interpreted else []), *([best[id(cell)]] if judged else [])])
        for f in catalogue.failed_in(cell.model, cell.weights, cell.target):
            body.append([*where, failure_variant(f), f"FAILED at {f.where}", "-", "-", "-", "-", "-", "-",
                         *(["-"] if interpreted else []), *(["-"] if judged else [])])
    return render(headers, body, width=10**6) + f"\n\n{counts(catalogue)}. {NOTE}"


def _e(value: object) -> str:
    return html.escape(str(value))


# Single operators (add: nanoseconds) would stretch the scale over seven decades and
# leave every real network one shade: the colours span two decades below the median.
_DECADES_BELOW_MEDIAN = 2


def _scale(catalogue: Catalogue) -> tuple[float, float]:
    """log10 of the times the colour scale runs between; faster cells take the darkest colour."""
    times = sorted(c.row.inference_time_ms for c in catalogue.cells.values()
                   if c.row is not None and c.row.inference_time_ms)
    if not times:
        return 0.0, 0.0
    median = times[len(times) // 2]
    return max(math.log10(times[0]), math.log10(median) - _DECADES_BELOW_MEDIAN), math.log10(times[-1])


def _heat_cell(cell: Cell | None, low: float, high: float) -> str:
    if cell is None:
        return '<td class="none" title="not built">·</td>'
    if cell.row is None:
        assert cell.failure is not None
        f = cell.failure
        tip = f"{f.model} for {f.target} failed at {f.where}: {f.message}"
        return f'<td class="failed" title="{_e(tip)}">✗ {_e(f.stage or "failed")}</td>'
    r = cell.row
    t = r.inference_time_ms
    if not t:
        return f'<td class="cpu" title="{_e(r.key)}">CPU only</td>'
    background, ink = stop(0.5 if high == low else (math.log10(t) - low) / (high - low))
    share = r.npu_share
    note = f"<small>{share:.0%} NPU</small>" if share is not None and share < 1 else ""
    best = best_precision(cell)
    if best != "-":
        note += f"<small>{_e(best.split(' (')[0])}</small>"
    tip = f"{duration(t)}; {operators(r)}; CPU: {cpu_ops(r)}; SRAM {human_bytes(r.sram_bytes)}; best precision: {best}"
    return (f'<td class="t" style="background:{background};color:{ink}" title="{_e(tip)}">'
            f"{_e(duration(t))}{note}</td>")


def _legend(low: float, high: float) -> str:
    if high <= low:
        return ""
    stops = ", ".join(stop(i / 4)[0] for i in range(5))
    return (f'<div class="legend"><span>≤ {_e(duration(10 ** low))}</span>'
            f'<span class="bar" style="background:linear-gradient(to right, {stops})"></span>'
            f"<span>{_e(duration(10 ** high))}</span> estimated time per inference (log scale); "
            '<span class="key failed">✗</span> failed (hover for where); '
            '<span class="key none">·</span> not built</div>')


_STYLE = """
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2em auto; max-width: 90em; padding: 0 1em; color: #1d2329; }
h1 { font-size: 1.5em; margin-bottom: .2em; }
p.note { color: #5a6570; margin-top: 0; }
table { border-collapse: collapse; margin: 1em 0; }
th, td { padding: .3em .6em; white-space: nowrap; }
table.detail td { border-bottom: 1px solid #d9dee3; }
th { text-align: left; background: #f2f4f6; font-weight: 600; }
table.heat td { text-align: center; min-width: 5.5em; border: 2px solid #fff; font-variant-numeric: tabular-nums; }
table.heat td small { display: block; font-size: .75em; opacity: .9; }
table.heat th.model { text-align: right; }
td.failed, span.failed { background: repeating-linear-gradient(45deg, #f6d5d3, #f6d5d3 6px, #fbe9e8 6px, #fbe9e8 12px); color: #8c1d18; font-weight: 600; }
td.none, span.none { background: #f5f6f7; color: #9aa3ab; }
td.cpu { background: #e8e8e8; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.legend { display: flex; align-items: center; gap: .5em; color: #3c4650; flex-wrap: wrap; }
.legend .bar { display: inline-block; width: 12em; height: .9em; border-radius: 2px; }
.legend .key { display: inline-block; padding: 0 .4em; }
footer { color: #7a848d; font-size: .85em; margin-top: 2em; }
""".strip()


def render_catalogue_html(catalogue: Catalogue) -> str:
    low, high = _scale(catalogue)
    head = "".join(f"<th>{_e(t)}</th>" for t in catalogue.targets)
    heat_rows = []
    for model, weights in catalogue.models:
        label = model if len({w for m, w in catalogue.models if m == model}) == 1 else f"{model} ({weights})"
        cells = "".join(_heat_cell(catalogue.cell(model, weights, t), low, high) for t in catalogue.targets)
        heat_rows.append(f'<tr><th class="model" title="weights: {_e(weights)}">{_e(label)}</th>{cells}</tr>')
    detail = []
    for cell in catalogue.ordered():
        where = f"<tr><td>{_e(cell.model)}</td><td>{_e(cell.weights)}</td><td>{_e(cell.target)}</td>"
        if cell.row is not None:
            r = cell.row
            detail.append(
                f"{where}<td>{_e(row_variant(r))}</td><td>built</td>"
                f'<td class="num">{_e(duration(r.inference_time_ms))}</td><td>{_e(operators(r))}</td>'
                f'<td class="num">{_e(human_bytes(r.sram_bytes))}</td>'
                f'<td class="num">{_e(human_bytes(r.flash_bytes))}</td><td>{_e(cpu_ops(r))}</td></tr>'
            )
        for f in catalogue.failed_in(cell.model, cell.weights, cell.target):
            detail.append(f'{where}<td>{_e(failure_variant(f))}</td><td class="failed">failed at {_e(f.where)}</td>'
                          f'<td colspan="5" title="{_e(f.message)}">{_e((f.message.splitlines() or [""])[0][:160])}</td></tr>')
    return page("zoo catalogue: what runs on each Ethos-U NPU", _STYLE, [
        "<h1>What runs on each Ethos-U NPU, and how fast</h1>",
        f'<p class="note">{_e(counts(catalogue))}. {_e(NOTE)}</p>',
        _legend(low, high),
        f'<table class="heat">\n<thead><tr><th></th>{head}</tr></thead>\n<tbody>\n' + "\n".join(heat_rows)
        + "\n</tbody>\n</table>",
        "<h2>Every cell, and every failed build</h2>",
        '<table class="detail">\n<thead><tr><th>model</th><th>weights</th><th>target</th><th>variant</th>'
        "<th>result</th><th>est. time</th><th>operators</th><th>SRAM</th><th>flash</th><th>CPU operators</th></tr></thead>\n<tbody>\n"
        + "\n".join(detail) + "\n</tbody>\n</table>",
    ])


def write_catalogue_html(catalogue: Catalogue, path: Path) -> Path:
    write_atomic(Path(path), render_catalogue_html(catalogue).encode("utf-8"))
    return Path(path)
