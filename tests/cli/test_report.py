"""`zoo report`: Vela's estimates for a model's cached artifacts as a table, JSON and an HTML page.

Reads the shared session builds (tests/conftest.py), so it compiles nothing of its own.
"""

from __future__ import annotations

import base64
import io
import json
import shutil
import subprocess
import sys
import textwrap
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import HEAVY, run_probed, run_zoo
from zoo import Artifact
from zoo.registry.store.cache import Cache

pytestmark = pytest.mark.compile

ADD_TARGETS = ("u55-128", "u85-256", "portable", "imx93")
VELA_FIELDS = ("inference_time_ms", "inferences_per_second", "sram_bytes", "dram_bytes",
               "on_chip_flash_bytes", "off_chip_flash_bytes")


@pytest.fixture
def adds(built: dict[tuple[str, str], Artifact], use_shared_cache: Path) -> dict[str, Artifact]:
    return {t: built[("add", t)] for t in ADD_TARGETS}


def cached_keys(root: Path, model: str) -> set[str]:
    return {key for key, entry, _ in Cache(root).scan() if entry and entry.manifest.model == model}


def report_json(*args: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    proc = run_zoo("report", *args, "--json", env=env)
    assert proc.returncode == 0, proc.stderr
    data: dict[str, Any] = json.loads(proc.stdout)
    return data


class Page(HTMLParser):
    """Collects what a browser would need: tags, attributes, table cells and text."""

    def __init__(self) -> None:
        super().__init__()
        self.decls: list[str] = []
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.stack: list[str] = []
        self.rows: list[list[str]] = []
        self.texts: dict[str, list[str]] = {}

    def handle_decl(self, decl: str) -> None:
        self.decls.append(decl)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag not in ("br", "img", "meta"):
            self.stack.append(tag)
        if tag == "tr" and "tbody" in self.stack:
            self.rows.append([])
        if tag == "td" and self.rows:
            self.rows[-1].append("")

    def handle_endtag(self, tag: str) -> None:
        if self.stack and self.stack[-1] == tag:
            self.stack.pop()

    def handle_data(self, data: str) -> None:
        where = self.stack[-1] if self.stack else ""
        self.texts.setdefault(where, []).append(data)
        if where == "td" and "tbody" in self.stack:
            self.rows[-1][-1] += data

    def text(self) -> str:
        return " ".join(" ".join(parts) for tag, parts in self.texts.items() if tag not in ("style", "title"))


def test_json_rows_are_the_manifests_numbers_fastest_first(adds: dict[str, Artifact], use_shared_cache: Path) -> None:
    data = report_json("add")
    rows = data["rows"]
    assert data["model"] == "add" and "not measurements" in data["note"]
    assert {r["key"] for r in rows} == cached_keys(use_shared_cache, "add")
    by_key = {r["key"]: r for r in rows}
    for art in adds.values():
        m = art.manifest
        row = by_key[m.key]
        assert row["target"] == m.target
        assert row["weights"] == m.key_inputs["weights"]["name"] == "none"
        assert row["pte_bytes"] == art.pte.stat().st_size
        if m.vela is None:
            assert all(row[f] is None for f in VELA_FIELDS)
            continue
        assert {f: row[f] for f in VELA_FIELDS} == {f: m.vela["total"][f] for f in VELA_FIELDS}
        assert row["inference_time_ms"] > 0
        target = m.key_inputs["target"]
        assert (row["accelerator"], row["system_config"], row["memory_mode"], row["extra_flags"]) == (
            target["accelerator"], target["system_config"], target["memory_mode"], target["extra_flags"])
        assert row["npu_ops"] == m.delegation["npu_ops"]
    imx93 = by_key[adds["imx93"].key]
    assert (imx93["target"], imx93["accelerator"], imx93["system_config"]) == ("imx93", "ethos-u65-256", "Ethos_U65_High_End")
    times = [r["inference_time_ms"] for r in rows]
    timed = [t for t in times if t is not None]
    assert timed == sorted(timed) and times[: len(timed)] == timed
    assert rows[-1]["target"] == "portable" and rows[-1]["inference_time_ms"] is None
    assert data["skipped"] == []


def test_text_table_has_one_line_per_artifact_in_json_order(adds: dict[str, Artifact]) -> None:
    proc = run_zoo("report", "add", env={"COLUMNS": ""})  # a pipe: whole lines, every column
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].split()[:2] == ["target", "accelerator"]
    assert "est. time" in lines[0] and "SRAM" in lines[0] and lines[0].rstrip().endswith("key")
    rows = report_json("add")["rows"]
    body = lines[2: 2 + len(rows)]
    # Keys are never cut to fit the terminal.
    assert [line.split()[-1] for line in body] == [r["key"][:12] for r in rows]
    u55 = next(line for line in body if line.startswith("ethos-u55-128 "))
    assert "Ethos_U55_High_End_Embedded" in u55 and "Shared_Sram" in u55 and " ns " in u55
    assert body[-1].startswith("portable ")
    assert "Vela's estimates, not measurements" in proc.stdout
    assert "CPU operators between partitions are not included" in proc.stdout
    # An 80-column terminal: columns leave in the stated order, the key first, and it says so.
    narrow = run_zoo("report", "add", env={"COLUMNS": "80"}).stdout.splitlines()
    assert all(len(line) <= 80 for line in narrow[: 2 + len(rows)])
    assert [line.split()[0] for line in narrow[2: 2 + len(rows)]] == [line.split()[0] for line in body]
    assert "key" not in narrow[0].split() and "est. time" in narrow[0]
    assert narrow[2 + len(rows)].startswith("(key, ")


def test_html_page_is_self_contained_with_table_and_chart(adds: dict[str, Artifact], tmp_path: Path) -> None:
    image = pytest.importorskip("PIL.Image")
    out = tmp_path / "pages" / "add.html"
    proc = run_zoo("report", "add", "--html", str(out))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == str(out)
    assert [p.name for p in out.parent.iterdir()] == ["add.html"]  # no temporary file left beside it

    page = Page()
    page.feed(out.read_text(encoding="utf-8"))
    page.close()
    assert [d.lower() for d in page.decls] == ["doctype html"]
    tags = [t for t, _ in page.tags]
    assert tags.count("table") == 1 and tags.count("img") == 1 and "style" in tags
    assert "".join(page.texts["title"]) == "zoo report: add"

    rows = report_json("add")["rows"]
    assert len(page.rows) == len(rows)
    for cells, row in zip(page.rows, rows, strict=True):
        assert cells[0] == row["target"] and cells[-1] == row["key"][:12]
    assert page.rows[-1][0] == "portable"
    text = page.text()
    assert "not measurements" in text and "CPU operators between partitions are not included" in text
    tools = adds["u55-128"].manifest.key_inputs["tools"]
    assert f"executorch {tools['executorch']}" in text and f"ethos-u-vela {tools['ethos-u-vela']}" in text

    # Nothing to fetch: the only resource is the chart, inlined.
    links = [v for _, attrs in page.tags for k, v in attrs.items() if k in ("src", "href")]
    assert len(links) == 1 and links[0] is not None and links[0].startswith("data:image/png;base64,")
    img = next(attrs for t, attrs in page.tags if t == "img")
    assert "inference time" in (img.get("alt") or "")
    png = base64.b64decode(links[0].removeprefix("data:image/png;base64,"), validate=True)
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    with image.open(io.BytesIO(png)) as im:
        im.load()
        assert im.format == "PNG"
        width, height = im.size
    # One bar per artifact with an estimate: taller with more rows, never a thumbnail.
    assert 600 <= width <= 2000 and 200 <= height <= 2000
    assert (int(img["width"] or 0), int(img["height"] or 0)) == (width * 2 // 3, height * 2 // 3)


def test_html_is_reproducible(adds: dict[str, Artifact], tmp_path: Path) -> None:
    first, second = tmp_path / "a.html", tmp_path / "b.html"
    for path in (first, second):
        assert run_zoo("report", "add", "--html", str(path)).returncode == 0
    assert first.read_bytes() == second.read_bytes()


@pytest.mark.parametrize(("args", "allowed"), [(["report", "add"], ()), (["report", "add", "--json"], ()),
                                               (["report", "add", "--html", "page.html"], ("matplotlib",))])
def test_report_never_imports_the_heavy_stack(adds: dict[str, Artifact], tmp_path: Path,
                                              args: list[str], allowed: tuple[str, ...]) -> None:
    proc = run_probed(*args, watch=(*HEAVY, "matplotlib"), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.loaded == list(allowed)


def test_unknown_model_is_a_usage_error() -> None:
    proc = run_zoo("report", "mnsit")
    assert proc.returncode == 2
    assert "unknown model 'mnsit'" in proc.stderr and "Did you mean: mnist" in proc.stderr


def test_known_model_with_nothing_cached_says_how_to_build() -> None:
    proc = run_zoo("report", "mobilenet_v2")  # an alias resolves to its model
    assert proc.returncode == 2
    assert "nothing cached for mv2" in proc.stderr
    assert "zoo build mv2 --target all" in proc.stderr and "zoo fetch mv2 -t TARGET" in proc.stderr
    assert proc.stdout == ""


def test_json_and_html_together_are_refused(tmp_path: Path) -> None:
    proc = run_zoo("report", "add", "--json", "--html", str(tmp_path / "x.html"))
    assert proc.returncode == 2 and "not both" in proc.stderr


def copy_cache(shared: Path, tmp_path: Path) -> tuple[Path, dict[str, str]]:
    root = tmp_path / "cache-copy"
    shutil.copytree(shared, root)
    return root, {"ZOO_CACHE_DIR": str(root)}


def test_corrupt_entry_is_skipped_with_a_note(adds: dict[str, Artifact], use_shared_cache: Path, tmp_path: Path) -> None:
    root, env = copy_cache(use_shared_cache, tmp_path)
    bad = adds["u85-256"]
    pte = Cache(root).entry_path(bad.key) / bad.pte.name
    pte.write_bytes(pte.read_bytes()[:100])
    proc = run_zoo("report", "add", "--json", env=env)
    assert proc.returncode == 0, proc.stderr
    assert f"skipping cache entry {bad.key[:12]}: {bad.pte.name} is 100 bytes" in proc.stderr
    data = json.loads(proc.stdout)
    assert {r["key"] for r in data["rows"]} == cached_keys(root, "add") - {bad.key}
    assert data["skipped"] == [{"key": bad.key, "problem": f"{bad.pte.name} is 100 bytes, the manifest says {bad.pte.stat().st_size}"}]


def test_weights_filter_and_two_artifacts_for_one_target(adds: dict[str, Artifact], use_shared_cache: Path, tmp_path: Path) -> None:
    """A second ethos-u55-128 artifact (other weights) gets its own row; --weights picks one variant."""
    root, env = copy_cache(use_shared_cache, tmp_path)
    cache = Cache(root)
    original = adds["u55-128"]
    twin = "ee" + original.key[2:]
    cache.entry_path(twin).parent.mkdir(parents=True, exist_ok=True)
    shutil.copytree(cache.entry_path(original.key), cache.entry_path(twin))
    manifest = json.loads((cache.entry_path(twin) / "manifest.json").read_text())
    manifest["key"] = twin
    manifest["key_inputs"]["weights"] = {"name": "finetuned", "identity": "sha256:" + "0" * 64}
    (cache.entry_path(twin) / "manifest.json").write_text(json.dumps(manifest))

    rows = report_json("add", env=env)["rows"]
    u55 = [r for r in rows if r["target"] == "ethos-u55-128" and r["memory_mode"] == "Shared_Sram"]
    assert sorted((r["weights"], r["key"]) for r in u55) == sorted([("none", original.key), ("finetuned", twin)])

    only = report_json("add", "--weights", "finetuned", env=env)["rows"]
    assert [(r["key"], r["weights"]) for r in only] == [(twin, "finetuned")]
    assert twin not in {r["key"] for r in report_json("add", "--weights", "none", env=env)["rows"]}

    unknown = run_zoo("report", "add", "--weights", "bogus", env=env)
    assert unknown.returncode == 2 and "no weights variant 'bogus'" in unknown.stderr

    page = Page()
    out = tmp_path / "twins.html"
    assert run_zoo("report", "add", "--html", str(out), env=env).returncode == 0
    page.feed(out.read_text(encoding="utf-8"))
    assert len(page.rows) == len(rows)
    assert sum(cells[0] == "ethos-u55-128" for cells in page.rows) == sum(r["target"] == "ethos-u55-128" for r in rows)


def test_html_without_matplotlib_asks_for_the_extra(adds: dict[str, Artifact], tmp_path: Path) -> None:
    out = tmp_path / "page.html"
    code = textwrap.dedent(f"""
        import sys
        sys.modules["matplotlib"] = None  # as if it were not installed
        from zoo.cli import main
        main(["report", "add", "--html", {str(out)!r}])
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1, proc.stderr
    assert "matplotlib" in proc.stderr and "pip install 'ethosu-zoo[compile]'" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not out.exists()
