"""What every page shares: escaping, the page shell, the site-wide colour scale, names and figures."""

from __future__ import annotations

import hashlib
import html
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import quote

from zoo._units import duration, human_bytes
from zoo.registry.site.builds import Build

NOTE = ("Times, SRAM and flash are Vela's estimates for each configuration, not measurements on a board; "
        "CPU operators between NPU partitions are not included.")

# Stops of matplotlib's viridis, fast (dark) to slow (light): ordered in lightness,
# so the map still reads in grey and for colour-blind readers.
_VIRIDIS = ((68, 1, 84), (59, 82, 139), (33, 145, 140), (94, 201, 98), (253, 231, 37))
# Single operators (add: nanoseconds) would stretch the scale over seven decades and
# leave every real network one shade: the colours span two decades below the median.
_DECADES_BELOW_MEDIAN = 2


def e(value: object) -> str:
    """Text or an attribute value (quotes included) that a browser shows as text, whatever it holds."""
    return html.escape(str(value), quote=True)


@dataclass(frozen=True)
class Scale:
    """One colour scale for the whole site: log10 of the times it runs between."""

    low: float
    high: float

    @classmethod
    def of(cls, times: Iterable[float | None]) -> Scale:
        known = sorted(t for t in times if t is not None and t > 0 and math.isfinite(t))
        if not known:
            return cls(0.0, 0.0)
        median = known[len(known) // 2]
        return cls(max(math.log10(known[0]), math.log10(median) - _DECADES_BELOW_MEDIAN), math.log10(known[-1]))

    def colour(self, ms: float) -> tuple[str, str]:
        """Background and text colour for a time."""
        fraction = 0.5 if self.high <= self.low else (math.log10(ms) - self.low) / (self.high - self.low)
        return stop(fraction)

    def legend(self) -> str:
        if self.high <= self.low:
            return ""
        stops = ", ".join(stop(i / 4)[0] for i in range(5))
        return (f'<div class="legend"><span>≤ {e(duration(10 ** self.low))}</span>'
                f'<span class="bar" style="background:linear-gradient(to right, {stops})"></span>'
                f"<span>{e(duration(10 ** self.high))}</span> estimated time per inference (log scale, the same "
                'on every page); <span class="key failed">✗</span> failed; <span class="key none">·</span> not built</div>')


def stop(fraction: float) -> tuple[str, str]:
    x = min(max(fraction, 0.0), 1.0) * (len(_VIRIDIS) - 1)
    i = min(int(x), len(_VIRIDIS) - 2)
    t = x - i
    rgb = [round(a + (b - a) * t) for a, b in zip(_VIRIDIS[i], _VIRIDIS[i + 1], strict=True)]
    luminance = 0.2126 * rgb[0] + 0.7152 * rgb[1] + 0.0722 * rgb[2]
    return "#{:02x}{:02x}{:02x}".format(*rgb), "#111" if luminance > 140 else "#fff"


_SAFE_NAME = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,99}\Z")


def page_name(model: str) -> str:
    """The model page's file name: the model's own name where it is a plain one (every
    registered model's is), else a digest of it, so no name can reach outside ``models/``."""
    if _SAFE_NAME.match(model):
        return f"{model}.html"
    return f"m-{hashlib.sha256(model.encode()).hexdigest()[:16]}.html"


def model_href(model: str, *, from_index: bool) -> str:
    return ("models/" if from_index else "") + quote(page_name(model))


def anchor(b: Build) -> str:
    """The id of a build's row on its model page."""
    return "b-" + hashlib.sha256(b.key.encode()).hexdigest()[:16]


def short_op(name: str) -> str:
    """``aten::hardswish.out`` or ``aten.hardswish.default`` → ``hardswish``."""
    tail = name.split("::")[-1]
    parts = [p for p in tail.split(".") if p not in ("aten", "default", "out", "Tensor", "Scalar", "int")]
    return parts[0] if parts else tail


def share(b: Build) -> str:
    if b.accelerator is None:
        return "CPU only"
    s = b.npu_share
    if s is None:
        return "-"
    parts = b.partitions or 0
    return f"{s:.0%} NPU, {parts} part{'s' if parts != 1 else ''}"


def size(n: float | None) -> str:
    return human_bytes(n)


def metrics_text(b: Build) -> str:
    """``top1 97.5 → 97.3 % (declared 97.6)`` per metric: float, then the program."""
    out = []
    for x in b.metrics:
        def fig(key: str, x: dict[str, object] = x) -> str:
            v = x.get(key)
            return f"{v:.4g}" if isinstance(v, (int, float)) and not isinstance(v, bool) else "?"
        text = f"{x.get('name')} {fig('float')} → {fig('program')}{x.get('unit') or ''}"
        if x.get("reference") is not None:
            text += f" (declared {fig('reference')})"
        out.append(text + ("" if x.get("passed", True) is not False else " FAILED"))
    return "; ".join(out) or "-"


def page(title: str, body: list[str], *, root: str, source: str) -> str:
    """A page of the site; ``root`` is the way back to the site's top folder ("" or "../")."""
    from zoo._version import __version__

    return "\n".join([
        "<!doctype html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{e(title)}</title>",
        f'<link rel="stylesheet" href="{root}site.css">',
        "</head>",
        "<body>",
        f'<header class="top"><a href="{root}index.html">zoo catalogue</a><span>from {e(source)}</span></header>',
        "<main>",
        *body,
        "</main>",
        f"<footer>Written by zoo {e(__version__)} from {e(source)}. {e(NOTE)}</footer>",
        f'<script src="{root}site.js"></script>',
        "</body>",
        "</html>",
        "",
    ])
