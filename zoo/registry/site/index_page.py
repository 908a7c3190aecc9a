"""The site's front page: counts, a heat map per task (models and their variants × targets),
and every build in one table that site.js sorts and filters."""

from __future__ import annotations

import re

from zoo._units import duration
from zoo.registry.site.builds import Build, Failed, Model, Site
from zoo.registry.site.markup import (
    NOTE,
    Scale,
    anchor,
    e,
    metrics_text,
    model_href,
    page,
    share,
    size,
)


def _task_id(task: str) -> str:
    return "task-" + (re.sub(r"[^a-z0-9]+", "-", task.lower()).strip("-") or "none")


def _heat_cell(model: Model, builds: list[Build], failed: list[Failed], scale: Scale) -> str:
    if not builds:
        if failed:
            f = failed[0]
            tip = f"failed at {f.where}: {f.message.splitlines()[0] if f.message else ''}"
            return f'<td class="failed" title="{e(tip)}">✗ {e(f.where.split(" ")[0])}</td>'
        return '<td class="none" title="not built">·</td>'
    # Several builds of one variant on one target (other Vela options, tools): the fastest, and a count.
    builds = sorted(builds, key=lambda b: (b.time_ms is None, b.time_ms or 0.0, b.built_at))
    b = builds[0]
    more = f" (+{len(builds) - 1} more on its page)" if len(builds) > 1 else ""
    href = f'{model_href(model.name, from_index=True)}#{anchor(b)}'
    if not b.time_ms:
        return f'<td class="cpu"><a href="{e(href)}" title="{e("runs on the CPU" + more)}">CPU only</a></td>'
    background, ink = scale.colour(b.time_ms)
    s = b.npu_share
    note = f"<small>{s:.0%} NPU</small>" if s is not None and s < 1 else ""
    if b.board:
        note += f"<small>{e(b.board)}</small>"
    tip = (f"{duration(b.time_ms)}; {share(b)}; SRAM {size(b.sram_bytes)}, DRAM {size(b.dram_bytes)}, "
           f"RAM to reserve {size(b.reserve_bytes)}{more}")
    return (f'<td class="t" style="background:{background}"><a href="{e(href)}" style="color:{ink}" '
            f'title="{e(tip)}">{e(duration(b.time_ms))}{"+" if more else ""}{note}</a></td>')


def _rows(model: Model) -> list[tuple[str, list[Build], list[Failed]]]:
    """The model's heat-map rows: one per variant, its label, builds and the failures of that
    variant (a row of their own where nothing of it built)."""
    labels = model.labels()
    variants: dict[tuple[str, ...], list[Build]] = {}
    for b in model.builds:
        variants.setdefault(b.variant, []).append(b)
    rows: list[tuple[str, list[Build], list[Failed]]] = [
        (_variant_name(group, labels), group, [f for f in model.failures if f.variant == v])
        for v, group in variants.items()
    ]
    for v in dict.fromkeys(f.variant for f in model.failures if f.variant not in variants):
        failed = [f for f in model.failures if f.variant == v]
        rows.append((failed[0].label, [], failed))
    return rows


def _heat_map(site: Site, models: list[Model], targets: list[str], scale: Scale) -> tuple[str, int]:
    """The task's heat map, and how many of its rows are a variant of a model with several."""
    # Short names ("u85-2048") keep all twelve columns inside a 1280-pixel window.
    head = "".join(f'<th scope="col" title="{e(t)}">{e(t.removeprefix("ethos-"))}</th>' for t in targets)
    lines, variant_rows = [], 0
    for model in models:
        rows = _rows(model)
        if len(rows) > 1:
            variant_rows += len(rows)
        for label, group, failures in rows:
            name = (f'<a href="{e(model_href(model.name, from_index=True))}">{e(model.name)}</a>'
                    + (f'<small class="variant">{e(label)}</small>' if len(rows) > 1 else ""))
            cells = "".join(_heat_cell(model, [b for b in group if b.column == t],
                                       [f for f in failures if site.column_of(f.target) == t], scale)
                            for t in targets)
            lines.append(f'<tr><th scope="row" class="model">{name}</th>{cells}</tr>')
    table = (f'<div class="scroll"><table class="heat"><thead><tr><th></th>{head}</tr></thead>\n<tbody>\n'
             + "\n".join(lines) + "\n</tbody></table></div>")
    return table, variant_rows


def _variant_name(group: list[Build], labels: dict[str, str]) -> str:
    """What the group's builds share of their labels (the parts that name the variant across targets)."""
    if not group:
        return ""
    common = set(labels.get(group[0].key, "").split(", "))
    for b in group[1:]:
        common &= set(labels.get(b.key, "").split(", "))
    parts = [p for p in labels.get(group[0].key, "").split(", ") if p in common and p]
    return ", ".join(parts) or "default"


_COLUMNS = (  # key, header, numeric?
    ("model", "model", False), ("task", "task", False), ("variant", "variant", False), ("target", "target", False),
    ("result", "result", False), ("time", "est. time", True), ("npu", "on the NPU", True),
    ("sram", "SRAM", True), ("flash", "flash", True), ("dram", "DRAM", True), ("reserve", "RAM to reserve", True),
    ("pte", ".pte", True), ("metrics", "metrics", False),
)


def _num(value: float | None) -> str:
    return "" if value is None else repr(float(value))


def _build_rows(site: Site) -> list[str]:
    out = []
    for model in sorted(site.models.values(), key=lambda m: m.name):
        labels = model.labels()
        href = model_href(model.name, from_index=True)
        for b in model.builds:
            cells = [
                f'<td><a href="{e(href)}#{anchor(b)}">{e(model.name)}</a></td>', f"<td>{e(model.task)}</td>",
                f"<td>{e(labels.get(b.key) or '-')}</td>", f"<td>{e(b.target)}</td>", "<td>built</td>",
                f'<td class="num" data-v="{_num(b.time_ms)}">{e(duration(b.time_ms))}</td>',
                f'<td class="num" data-v="{_num(b.npu_share)}">{e(share(b))}</td>',
                f'<td class="num" data-v="{_num(b.sram_bytes)}">{e(size(b.sram_bytes))}</td>',
                f'<td class="num" data-v="{_num(b.flash_bytes)}">{e(size(b.flash_bytes))}</td>',
                f'<td class="num" data-v="{_num(b.dram_bytes)}">{e(size(b.dram_bytes))}</td>',
                f'<td class="num" data-v="{_num(b.reserve_bytes)}">{e(size(b.reserve_bytes))}</td>',
                f'<td class="num" data-v="{_num(b.pte_bytes)}">{e(size(b.pte_bytes))}</td>',
                f"<td>{e(metrics_text(b))}</td>",
            ]
            out.append(f'<tr data-status="built">{"".join(cells)}</tr>')
        for f in model.failures:
            cells = [f'<td><a href="{e(href)}#failures">{e(model.name)}</a></td>', f"<td>{e(model.task)}</td>",
                     f"<td>{e(f.label)}</td>", f"<td>{e(f.target)}</td>",
                     f'<td class="failed" title="{e(f.message)}">failed at {e(f.where)}</td>',
                     *(['<td class="num" data-v="">-</td>'] * 7), "<td>-</td>"]
            out.append(f'<tr data-status="failed">{"".join(cells)}</tr>')
    return out


def render_index(site: Site, targets: list[str], scale: Scale) -> str:
    built, failed = len(site.builds), len(site.failures)
    tasks = site.tasks()
    sections, variant_rows = [], 0
    for task, models in tasks.items():
        table, variants = _heat_map(site, models, targets, scale)
        variant_rows += variants
        note = ('<p class="note">Rows with a second line are variants: builds of one model that differ in what '
                "the line names (weights, I/O, SRAM budget or Vela options). Each has its own row.</p>"
                if variants else "")
        sections.append(f'<section id="{e(_task_id(task))}"><h2>{e(task)} <small>{len(models)} '
                        f'model{"s" if len(models) != 1 else ""}</small></h2>{table}{note}</section>')
    nav = " · ".join(f'<a href="#{e(_task_id(t))}">{e(t)}</a>' for t in tasks)
    counts = (f"{len(site.models)} models, {built} builds, {failed} failed build{'s' if failed != 1 else ''}"
              + (f"; {variant_rows} heat-map rows are variants of a model" if variant_rows else ""))
    head = "".join(f'<th scope="col" data-key="{k}" data-type="{"num" if num else "text"}">'
                   f'<button type="button">{e(h)}</button></th>' for k, h, num in _COLUMNS)
    where = ("Each model page lists every file with its sha256 and a download link."
             if site.from_remote else "Each model page gives the zoo fetch line for every build.")
    return page("zoo catalogue: what runs on each Ethos-U NPU", [
        "<h1>What runs on each Ethos-U NPU, and how fast</h1>",
        f'<p class="counts" id="counts">{e(counts)}.</p>',
        f'<p class="note">{e(NOTE)} {e(where)}</p>',
        f'<nav class="tasks">Tasks: {nav}</nav>' if nav else "",
        scale.legend(),
        *sections,
        '<h2 id="builds-heading">Every build</h2>',
        '<div class="controls"><label>Filter <input type="search" id="filter" placeholder="model, target, task, '
        'variant…"></label> <span id="shown" aria-live="polite"></span> <span class="hint">Click a column to sort.'
        "</span></div>",
        f'<div class="scroll"><table id="builds" class="sortable"><thead><tr>{head}</tr></thead>\n<tbody>\n'
        + "\n".join(_build_rows(site)) + "\n</tbody></table></div>",
    ], root="", source=site.source)
