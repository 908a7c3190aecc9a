"""The site in a real browser: Debian's chromium, headless. Pages render, the table sorts and
filters by the fragment site.js honours, a model page fits a 1280-pixel window, and a hostile
model name stays text. Skipped where chromium is missing (`make setup` installs it as root)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.site.conftest import HOSTILE
from tests.site.pages import Parsed
from zoo.cli import main
from zoo.registry.site.markup import page_name
from zoo.registry.store.manifest import Manifest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = [pytest.mark.browser,
              pytest.mark.skipif(CHROMIUM is None, reason="needs Debian's chromium (apt-get install chromium)")]


def chromium(*args: str) -> str:
    assert CHROMIUM is not None
    proc = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
         "--allow-file-access-from-files", "--window-size=1280,900", "--virtual-time-budget=5000", *args],
        capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


def dom(url: str) -> Parsed:
    parsed = Parsed()
    parsed.feed(chromium("--dump-dom", url))
    return parsed


@pytest.fixture
def site(site_cache: dict[str, Manifest], tmp_path: Path) -> Path:
    folder = tmp_path / "site"
    result = CliRunner().invoke(main, ["site", str(folder)])
    assert result.exit_code == 0, result.output
    return folder


def builds_rows(page: Parsed) -> list[list[str]]:
    return [r for r in page.rows if len(r) == 13 and r[0] != "model"]


def test_pages_render_and_draw_something(site: Path, tmp_path: Path) -> None:
    pil = pytest.importorskip("PIL.Image")
    for page in ("index.html", "models/add.html"):
        shot = tmp_path / f"{page.replace('/', '-')}.png"
        chromium(f"--screenshot={shot}", (site / page).as_uri())
        image = pil.open(shot).convert("RGB")
        assert image.size == (1280, 900)
        assert len(image.getcolors(maxcolors=1 << 20) or []) > 50  # text, a heat map, not a blank page


def test_the_fragment_sorts_and_filters_the_table(site: Path) -> None:
    index = (site / "index.html").as_uri()
    plain = builds_rows(dom(index))
    assert len(plain) == 5
    by_model = builds_rows(dom(index + "#sort=-model"))
    assert [r[0] for r in by_model] == sorted((r[0] for r in plain), reverse=True)
    by_time = builds_rows(dom(index + "#sort=time"))
    assert [r[4] for r in by_time][-1] == "failed at lower (aten.add.Tensor)"  # no time: last, either way
    assert [r[4] for r in builds_rows(dom(index + "#sort=-time"))][-1] == "failed at lower (aten.add.Tensor)"
    page = dom(index + "#q=int8")
    assert "1 of 5 builds shown" in page.plain()


def test_the_filter_hides_rows_in_the_browser(site: Path, tmp_path: Path) -> None:
    html = chromium("--dump-dom", (site / "index.html").as_uri() + "#q=portable")
    out = Parsed()
    out.feed(html)
    assert "1 of 5 builds shown" in out.plain()
    rows = re.findall(r'<tr data-status="(\w+)"( hidden="")?', html)
    assert sorted(rows) == [("built", ' hidden=""')] * 4 + [("failed", "")]


def _probe(site: Path, page: str) -> dict[str, object]:
    """Loads ``page`` in a 1280-pixel frame of a page beside it and reads its layout and DOM."""
    probe = site / "probe.html"
    probe.write_text(f"""<!doctype html><meta charset="utf-8">
<iframe id="f" src="{page}" width="1280" height="900" style="border:0"></iframe><pre id="out"></pre>
<script>
document.getElementById("f").addEventListener("load", function () {{
  var d = this.contentDocument;
  document.getElementById("out").textContent = JSON.stringify({{
    scrollWidth: d.documentElement.scrollWidth, clientWidth: d.documentElement.clientWidth,
    scripts: Array.prototype.map.call(d.scripts, function (s) {{ return s.getAttribute("src"); }}),
    h1: d.querySelector("h1").textContent, title: d.title,
    widest: Math.max.apply(null, Array.prototype.map.call(d.querySelectorAll("main table"),
      function (t) {{ return t.getBoundingClientRect().right; }}))
  }});
}});
</script>""")
    out = dom(probe.as_uri())
    text = "".join(out.text)
    return dict(json.loads(text[text.index("{"):text.rindex("}") + 1]))


def test_a_model_page_fits_a_1280_pixel_window(site: Path) -> None:
    layout = _probe(site, "models/add.html")
    assert layout["scrollWidth"] == layout["clientWidth"] <= 1280
    assert isinstance(layout["widest"], (int, float)) and layout["widest"] <= 1280


def test_a_hostile_model_name_stays_text(site: Path) -> None:
    page = _probe(site, f"models/{page_name(HOSTILE)}")
    assert page["h1"] == HOSTILE
    assert page["scripts"] == ["../site.js"]  # the name made no script of its own
    assert page["title"] == f"{HOSTILE}: zoo catalogue"


def _layout(site: Path, page: str, width: int) -> dict[str, object]:
    """``page`` in a ``width``-pixel frame: the page's own overflow, each heat-map column header's
    right edge against the window, and the most lines an I/O cell's text takes."""
    probe = site / f"layout-{width}.html"
    probe.write_text(f"""<!doctype html><meta charset="utf-8">
<iframe id="f" src="{page}" width="{width}" height="900" style="border:0"></iframe><pre id="out"></pre>
<script>
document.getElementById("f").addEventListener("load", function () {{
  var d = this.contentDocument, all = function (q) {{ return Array.prototype.slice.call(d.querySelectorAll(q)); }};
  document.getElementById("out").textContent = JSON.stringify({{
    scrollWidth: d.documentElement.scrollWidth, clientWidth: d.documentElement.clientWidth,
    columns: all("table.heat thead th[scope=col]").map(function (th) {{
      return [th.textContent, th.getBoundingClientRect().right]; }}),
    ioLines: Math.max.apply(null, [0].concat(all("td.io").map(function (td) {{
      var r = d.createRange(); r.selectNodeContents(td); return r.getClientRects().length; }})))
  }});
}});
</script>""")
    out = dom(probe.as_uri())
    text = "".join(out.text)
    return dict(json.loads(text[text.index("{"):text.rindex("}") + 1]))


@pytest.mark.parametrize("width", [390, 1280, 1920])
def test_the_widest_heat_map_fits_a_laptop_and_a_phone_scrolls_it(width: int, tmp_path: Path) -> None:
    """Issue 31: u85-1024 and u85-2048 were cut off at 1400 px, and "float nchw" broke one letter a line at 400."""
    from tests.site.wide import wide_site

    site = wide_site(tmp_path / "site")
    index = _layout(site, "index.html", width)
    assert index["scrollWidth"] == index["clientWidth"]  # the page itself never scrolls sideways
    columns = index["columns"]
    assert isinstance(columns, list) and [c[0] for c in columns][-3:] == ["u85-1024", "u85-2048", "portable"]
    if width >= 1280:  # every target column in view, without scrolling the heat map
        assert all(right <= width for _, right in columns), columns
    model = _layout(site, "models/mv2.html", width)
    assert model["scrollWidth"] == model["clientWidth"]
    assert model["ioLines"] == 1  # "float nchw" on one line
