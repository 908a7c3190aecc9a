"""A model's report for people: a plain-text table, or a self-contained HTML page with a chart."""

from __future__ import annotations

import base64
import html
import io
from collections.abc import Callable, Sequence
from pathlib import Path

from zoo._errors import MissingExtraError
from zoo._fs import write_atomic
from zoo._units import duration, human_bytes
from zoo.cli.table import render, terminal_width, wrap
from zoo.registry.report import INTERPRETER_NOTE, NOTE, Report, ReportRow


def per_second(n: float | None) -> str:
    return "-" if n is None else f"{n:,.0f}"


def _labels(rows: Sequence[ReportRow]) -> list[str]:
    """Target names, plus whatever tells apart several artifacts of one target."""
    facets: list[Callable[[ReportRow], str]] = [
        lambda r: r.weights or "",
        lambda r: r.system_config or "",
        lambda r: r.memory_mode or "",
        lambda r: " ".join(r.extra_flags),
    ]
    out = []
    for row in rows:
        group = [r for r in rows if r.target == row.target]
        if len(group) == 1:
            out.append(row.target)
            continue
        parts = [f(row) for f in facets if len({f(r) for r in group}) > 1 and f(row)]
        if len({tuple(f(r) for f in facets) for r in group}) < len(group):
            parts.append(row.key[:8])
        out.append(f"{row.target} ({', '.join(parts)})" if parts else f"{row.target} ({row.key[:8]})")
    return out


_DROP = ("key", "vela flags", "DRAM", "flash", "inf/s", "system config", "memory mode", "accelerator", ".pte",
         "SRAM budget", "CPU ops")


def render_text(report: Report, *, width: int | None = None) -> str:
    """The rows as a plain-text table, with the note that these are estimates."""
    rows = report.rows
    show_accel = any(r.accelerator and r.accelerator != r.target for r in rows)
    show_flags = any(r.extra_flags for r in rows)
    show_precision = any(r.precision not in ("int8", "float") for r in rows)
    headers = ["target", *(["accelerator"] if show_accel else []), "weights", "system config", "memory mode",
               "SRAM budget", *(["vela flags"] if show_flags else []), *(["precision"] if show_precision else []), "I/O", "CPU ops", "est. time", "inf/s", "SRAM", "DRAM", "flash",
               ".pte", "key"]
    body = []
    for r in rows:
        body.append([
            r.target, *([r.accelerator or "-"] if show_accel else []), r.weights or "-",
            r.system_config or "-", r.memory_mode or "-", human_bytes(r.sram_budget_bytes) if r.sram_budget_bytes else "-", *([" ".join(r.extra_flags) or "-"] if show_flags else []),
            *([r.precision] if show_precision else []), r.io, "-" if r.cpu_run is None else str(r.cpu_run), duration(r.inference_time_ms), per_second(r.inferences_per_second), human_bytes(r.sram_bytes),
            human_bytes(r.dram_bytes), human_bytes(r.flash_bytes), human_bytes(r.pte_bytes), r.key[:12],
        ])
    if any(r.metrics for r in rows):
        headers.insert(-1, "metrics (float → program)")
        for r, line in zip(rows, body, strict=True):
            line.insert(-1, r.metrics_text)
    interpreted = any(r.npu_program for r in rows)
    if interpreted:
        headers.insert(-1, "NPU program")
        for r, line in zip(rows, body, strict=True):
            line.insert(-1, r.npu_program_text)
    # Too wide for the terminal, columns are left out in this order, the key first: a key cut
    # short would still look whole.
    total = width if width is not None else terminal_width()
    text = render(headers, body, width=total, drop=_DROP) if rows else "nothing built"
    # The prose under the table fits the same width (a pipe: whole lines).
    for f in report.failures:
        text += "\n" + wrap(f"FAILED on {f.target} (weights {f.weights}) at {f.where}: {f.message}", total)
    weights = {(r.weights, r.licence, r.origin) for r in rows if r.licence or r.origin}
    for name, licence, origin in sorted(weights, key=lambda w: tuple(str(x) for x in w)):
        text += "\n" + wrap(f"weights {name or '-'}: licence {licence or 'not recorded'}; origin "
                            f"{origin or 'not recorded'}", total)
    if interpreted:
        text += "\n" + wrap(INTERPRETER_NOTE, total)
    return text + f"\n\n{wrap(NOTE, total)}"


def chart_png(rows: Sequence[ReportRow], title: str) -> bytes | None:
    """A horizontal bar chart of the estimated inference time per row; None if no row has one."""
    timed = [r for r in rows if r.inference_time_ms is not None]
    if not timed:
        return None
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        raise MissingExtraError("The chart of 'zoo report --html' (matplotlib)") from None
    times = [r.inference_time_ms or 0.0 for r in timed]
    longest = max(times)
    # One unit for the whole axis, chosen so the longest bar reads naturally (add is nanoseconds, mv2 milliseconds).
    unit, scale = ("ms", 1.0) if longest >= 1 else ("µs", 1e3) if longest >= 1e-3 else ("ns", 1e6)
    values = [t * scale for t in times]
    labels = _labels(timed)

    fig = Figure(figsize=(8, 1.2 + 0.45 * len(timed)), dpi=150, layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    bars = ax.barh(range(len(timed)), values, color="#2f6f9f", height=0.6)
    ax.set_yticks(range(len(timed)), labels)
    ax.invert_yaxis()
    ax.bar_label(bars, [duration(t) for t in times], padding=3, fontsize=9)
    ax.set_xlim(0, max(values) * 1.2 or 1)
    ax.set_xlabel(f"estimated inference time ({unit})")
    ax.set_title(title, fontsize=11)
    ax.spines[["top", "right"]].set_visible(False)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", metadata={"Software": None})
    return buf.getvalue()


_STYLE = """
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2em auto; max-width: 75em; padding: 0 1em; color: #1d2329; }
h1 { font-size: 1.5em; margin-bottom: .2em; }
p.note { color: #5a6570; margin-top: 0; }
table { border-collapse: collapse; margin: 1em 0; }
th, td { padding: .35em .7em; border-bottom: 1px solid #d9dee3; white-space: nowrap; }
th { text-align: left; background: #f2f4f6; font-weight: 600; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
code { font-size: .95em; }
img { max-width: 100%; height: auto; }
footer { color: #7a848d; font-size: .85em; margin-top: 2em; }
""".strip()


def _unit(value: float | None, unit: str) -> str | None:
    return None if value is None else f"{value!r} {unit}"


# (header, subheading, cell text, exact value for the cell's title, numeric?)
_Column = tuple[str, str, Callable[[ReportRow], str], Callable[[ReportRow], object], bool]
_COLUMNS: list[_Column] = [
    ("target", "", lambda r: r.target, lambda r: None, False),
    ("accelerator", "", lambda r: r.accelerator or "-", lambda r: None, False),
    ("system config", "", lambda r: r.system_config or "-", lambda r: None, False),
    ("memory mode", "", lambda r: r.memory_mode or "-", lambda r: None, False),
    ("extra Vela flags", "", lambda r: " ".join(r.extra_flags) or "-", lambda r: None, False),
    ("weights", "", lambda r: r.weights or "-", lambda r: None, False),
    ("inference time", "estimated", lambda r: duration(r.inference_time_ms),
     lambda r: _unit(r.inference_time_ms, "ms"), True),
    ("inferences/s", "estimated", lambda r: per_second(r.inferences_per_second),
     lambda r: _unit(r.inferences_per_second, "per second"), True),
    ("SRAM", "", lambda r: human_bytes(r.sram_bytes), lambda r: _unit(r.sram_bytes, "bytes"), True),
    ("DRAM", "", lambda r: human_bytes(r.dram_bytes), lambda r: _unit(r.dram_bytes, "bytes"), True),
    ("flash", "on + off chip", lambda r: human_bytes(r.flash_bytes), lambda r: _unit(r.flash_bytes, "bytes"), True),
    (".pte", "", lambda r: human_bytes(r.pte_bytes), lambda r: _unit(r.pte_bytes, "bytes"), True),
    ("operators", "NPU / CPU (partitions)",
     lambda r: "-" if r.npu_ops is None else f"{r.npu_ops} / {r.cpu_ops} ({r.partitions})", lambda r: None, True),
    ("precision", "--precision", lambda r: r.precision, lambda r: None, False),
    ("I/O", "--io", lambda r: r.io, lambda r: None, False),
    ("CPU ops", "run / kernels to link", lambda r: "-" if r.cpu_run is None else f"{r.cpu_run} / {len(r.cpu_kernels)}",
     lambda r: ", ".join(r.cpu_kernels) or None, True),
    ("metrics", "float → program", lambda r: r.metrics_text, lambda r: None, False),
    ("NPU program", "on the interpreter, a stand-in for the NPU", lambda r: r.npu_program_text,
     lambda r: (r.npu_program or {}).get("skipped") or (r.npu_program or {}).get("error"), False),
    ("licence", "of the weights", lambda r: r.licence or "-", lambda r: r.origin, False),
    ("key", "", lambda r: r.key[:12], lambda r: r.key, False),
]


def _e(value: object) -> str:
    return html.escape(str(value))


def _tools_html(rows: Sequence[ReportRow]) -> str:
    groups: dict[tuple[tuple[str, str | None], ...], list[str]] = {}
    for r in rows:
        groups.setdefault(tuple(sorted(r.tools.items())), []).append(r.key[:12])
    items = []
    for tools, keys in groups.items():
        text = ", ".join(f"{name} {version}" for name, version in tools) or "not recorded"
        whose = "" if len(groups) == 1 else f" ({_e(', '.join(keys))})"
        items.append(f"<li>{_e(text)}{whose}</li>")
    return "<ul>" + "".join(items) + "</ul>"


def render_html(report: Report, *, png: bytes | None = None) -> str:
    """A self-contained page: the table, the chart (if any) inlined, and the tools used."""

    name = report.model
    hidden = set()
    if all(r.accelerator in (None, r.target) for r in report.rows):
        hidden.add("accelerator")
    if not any(r.extra_flags for r in report.rows):
        hidden.add("extra Vela flags")
    if not any(r.metrics for r in report.rows):
        hidden.add("metrics")
    if not any(r.npu_program for r in report.rows):
        hidden.add("NPU program")
    columns = [c for c in _COLUMNS if c[0] not in hidden]
    head = "".join(
        f"<th>{_e(h)}" + (f"<br><small>{_e(u)}</small>" if u else "") + "</th>" for h, u, *_ in columns
    )
    body = []
    for r in report.rows:
        cells = []
        for _h, _u, text, exact, numeric in columns:
            value = exact(r)
            title = "" if value is None else f' title="{_e(value)}"'
            cls = ' class="num"' if numeric else ""
            cells.append(f"<td{cls}{title}>{_e(text(r))}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    if png is not None:
        alt = f"Horizontal bar chart of Vela's estimated inference time per target for {name}"
        # Drawn at 150 dpi, shown at 100 css px per inch: sharp on high-density screens.
        width, height = _png_size(png)
        chart = (f'<figure><img src="data:image/png;base64,{base64.b64encode(png).decode("ascii")}" '
                 f'width="{width * 2 // 3}" height="{height * 2 // 3}" alt="{_e(alt)}"></figure>')
    else:
        chart = "<p>No chart: none of these artifacts has a Vela estimate (the portable target runs on the CPU).</p>"
    failed = ""
    if report.failures:
        failed = "<h2>Failed</h2><ul>" + "".join(
            f"<li><strong>{_e(f.target)}</strong> (weights {_e(f.weights)}) at {_e(f.where)}: {_e(f.message)}</li>"
            for f in report.failures) + "</ul>"
    skipped = ""
    if report.skipped:
        skipped = ("<p>Skipped corrupt cache entries: "
                   + ", ".join(f"<code>{_e(s.key[:12])}</code> ({_e(s.problem)})" for s in report.skipped) + "</p>")
    return page(f"zoo report: {name}", _STYLE, [
        f"<h1>{_e(name)}: estimated performance per target</h1>",
        f'<p class="note">{_e(NOTE)}</p>',
        f"<table>\n<thead><tr>{head}</tr></thead>\n<tbody>\n" + "\n".join(body) + "\n</tbody>\n</table>",
        chart,
        failed,
        skipped,
        "<h2>Tools</h2>",
        _tools_html(report.rows),
    ])


def page(title: str, style: str, body: list[str]) -> str:
    """A self-contained HTML page: no script, no request leaves it."""
    from zoo import __version__

    return "\n".join([
        "<!doctype html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_e(title)}</title>",
        f"<style>\n{style}\n</style>",
        "</head>",
        "<body>",
        *body,
        f"<footer>Written by zoo {_e(__version__)} from the local artifact cache.</footer>",
        "</body>",
        "</html>",
        "",
    ])


def _png_size(png: bytes) -> tuple[int, int]:
    return int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")


def write_html(report: Report, path: Path) -> Path:
    """Draw the chart and write the page in one rename, so no reader sees half a file."""
    png = chart_png(report.rows, f"{report.model}: Vela's estimated inference time")
    write_atomic(Path(path), render_html(report, png=png).encode("utf-8"))
    return Path(path)
