"""A model's chart: one horizontal bar per build (target and variant), as inline SVG in the
site's colour scale. Drawn here rather than by matplotlib, so a light install can make a site."""

from __future__ import annotations

from collections.abc import Sequence

from zoo._units import duration
from zoo.registry.site.builds import Build, target_order
from zoo.registry.site.markup import Scale, e

_LABEL = 360
_BAR = 340
_VALUE = 90
_ROW = 26


def chart_svg(builds: Sequence[Build], labels: dict[str, str], scale: Scale, *, title: str) -> str:
    """Bars of the estimated time (linear axis), longest first; "" if no build has a time."""
    timed = sorted((b for b in builds if b.time_ms), key=lambda b: (target_order(b.target), labels.get(b.key, "")))
    if not timed:
        return ""
    longest = max(b.time_ms or 0.0 for b in timed)
    width = _LABEL + _BAR + _VALUE
    height = _ROW * len(timed) + 34
    out = [f'<svg class="chart" role="img" viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
           f'xmlns="http://www.w3.org/2000/svg"><title>{e(title)}</title>']
    for i, b in enumerate(timed):
        y = 8 + i * _ROW
        t = b.time_ms or 0.0
        length = max(1.0, _BAR * t / longest)
        fill, _ = scale.colour(t)
        name = b.target + (f" · {labels[b.key]}" if labels.get(b.key) else "")
        shown = name if len(name) <= 52 else name[:51] + "…"
        out.append(f'<text x="{_LABEL - 8}" y="{y + 15}" text-anchor="end"><title>{e(name)}</title>{e(shown)}</text>')
        out.append(f'<rect x="{_LABEL}" y="{y + 2}" width="{length:.1f}" height="{_ROW - 8}" fill="{fill}" rx="2"/>')
        out.append(f'<text x="{_LABEL + length + 6:.1f}" y="{y + 15}">{e(duration(t))}</text>')
    axis = 8 + len(timed) * _ROW + 4
    out.append(f'<line x1="{_LABEL}" y1="{axis}" x2="{_LABEL + _BAR}" y2="{axis}" stroke="#9aa3ab"/>')
    out.append(f'<text x="{_LABEL}" y="{axis + 16}" class="axis">0</text>'
               f'<text x="{_LABEL + _BAR}" y="{axis + 16}" text-anchor="end" class="axis">'
               f"{e(duration(longest))} (Vela's estimate)</text>")
    out.append("</svg>")
    return "".join(out)
