"""``zoo site DIR`` and ``zoo publish --site``, read as HTML: what the pages say, that every
link resolves inside the site, that what a plugin or remote supplied stays text, and that a
site is replaced whole. Fast tier: the cache is the fake compile's (tests/site/conftest.py)."""

from __future__ import annotations

import re
import uuid
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from tests.conftest import run_probed
from tests.fake_compile import FakeCompile
from tests.site.conftest import HOSTILE
from tests.site.pages import broken_links, parse
from zoo import Zoo
from zoo.cli import main
from zoo.registry.site.markup import page_name
from zoo.registry.store.manifest import Manifest


def zoo(*args: str) -> Result:
    result = CliRunner().invoke(main, list(args))
    assert result.exit_code == 0, result.output
    return result


def test_the_index_counts_groups_by_task_and_shows_every_variant(site_cache: dict[str, Manifest], tmp_path: Path) -> None:
    zoo("site", str(tmp_path / "site"))
    index = parse(tmp_path / "site" / "index.html")
    text = index.plain()
    assert "2 models, 4 builds, 1 failed build; 3 heat-map rows are variants of a model." in text
    assert "operator" in text and "task not recorded" in text  # add's task from its plugin; the hostile one has none
    heat_rows = [r for r in index.rows if r and r[0].startswith("add")]
    labels = sorted(r[0].removeprefix("add") for r in heat_rows[:3])
    assert labels == ["float", "float, SRAM budget 256.0 KiB, --optimise=Size", "int8"]
    assert not any(m.key[:8] in text for m in site_cache.values())  # variants are never named by hash
    failed = [r for r in index.rows if "failed at lower (aten.add.Tensor)" in r]
    assert len(failed) == 1 and failed[0][3] == "portable"


def test_the_model_page_has_the_inputs_weights_fetch_lines_and_failures(site_cache: dict[str, Manifest],
                                                                          tmp_path: Path) -> None:
    zoo("site", str(tmp_path / "site"))
    page = parse(tmp_path / "site" / "models" / "add.html")
    text = page.plain()
    assert "Task: operator" in text and "(1, 1, 1, 1)" in text and "float32" in text
    assert "Origin: n/a. Licence: n/a." in text
    assert "zoo fetch add --target ethos-u55-128 --weights none" in text
    assert "zoo fetch add --target ethos-u55-128 --weights none --io int8 --layout nchw" in text
    assert "zoo fetch add --target ethos-u55-128 --weights none --sram-budget 262144" in text
    assert "3 builds on 1 target" in text and "What failed" in text and "lower (aten.add.Tensor)" in text
    pte = site_cache["float"].file("pte")
    assert pte is not None and f"sha256 {pte.sha256}" in text
    assert "<svg" in (tmp_path / "site" / "models" / "add.html").read_text()  # the chart


def test_every_link_resolves_inside_the_site(site_cache: dict[str, Manifest], tmp_path: Path) -> None:
    zoo("site", str(tmp_path / "site"))
    assert broken_links(tmp_path / "site") == []
    index = parse(tmp_path / "site" / "index.html")
    assert "models/add.html" in index.links and any(link.startswith("models/add.html#b-") for link in index.links)


def test_what_a_plugin_or_cache_supplies_stays_text(site_cache: dict[str, Manifest], tmp_path: Path) -> None:
    zoo("site", str(tmp_path / "site"))
    pages = list((tmp_path / "site").rglob("*.html"))
    assert len(pages) == 3
    for path in pages:
        raw = path.read_text(encoding="utf-8")
        assert "<script>alert" not in raw and "\"'&<" not in raw
        parsed = parse(path)
        assert [s.get("src") for s in parsed.scripts] in (["site.js"], ["../site.js"])
    hostile = parse(tmp_path / "site" / "models" / page_name(HOSTILE))
    assert page_name(HOSTILE).startswith("m-")  # no name reaches outside models/
    text = hostile.plain()
    assert f"Licence: {HOSTILE}" in text and HOSTILE in "".join(hostile.text)


def test_a_name_with_a_trailing_newline_gets_a_digest_page() -> None:
    """``$`` matched before the final newline, so the page was ``add\\n.html``."""
    assert page_name("add") == "add.html" and page_name("add\n").startswith("m-")


def test_a_portable_builds_memory_line_gives_it_no_npu(fake_compile: FakeCompile, tmp_path: Path) -> None:
    """A portable build's temp allocator holds the kernels' metadata while the method loads: it has no NPU,
    no scratch and no arena (issue 43 found the site saying it held the NPU's scratch)."""
    Zoo().fetch_many(["add"], ["u55-128", "portable"])
    zoo("site", str(tmp_path / "site"))
    text = parse(tmp_path / "site" / "models" / "add.html").plain()
    npu, portable = sorted((line for line in text.split("Memory: ")[1:]), key=lambda line: "runs on the CPU" in line)
    assert "temp allocator" in npu and "(it holds the NPU's scratch) where the arena lives." in npu
    line = re.match(r".*?(reaches|lives)\.", portable)
    assert line is not None and line.group().startswith("runs on the CPU; RAM to reserve "), portable
    assert "NPU" not in line.group() and "arena" not in line.group(), line.group()
    assert line.group().endswith("(the kernels' metadata while the method loads), all in any RAM the CPU reaches.")


def test_a_site_is_replaced_whole_and_never_a_foreign_folder(site_cache: dict[str, Manifest], tmp_path: Path) -> None:
    site = tmp_path / "site"
    zoo("site", str(site))
    first = {p.relative_to(site): p.read_bytes() for p in site.rglob("*") if p.is_file()}
    zoo("site", str(site))
    again = {p.relative_to(site): p.read_bytes() for p in site.rglob("*") if p.is_file()}
    assert again == first  # the same cache gives the same bytes
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []  # nothing staged is left
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("keep me")
    result = CliRunner().invoke(main, ["site", str(foreign)])
    assert result.exit_code != 0 and "not empty and holds no site zoo wrote" in result.output
    assert (foreign / "notes.txt").read_text() == "keep me"


def test_a_site_in_the_working_folder_says_to_run_from_outside(site_cache: dict[str, Manifest], tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    site = tmp_path / "site"
    zoo("site", str(site))
    before = {p.relative_to(site): p.read_bytes() for p in site.rglob("*") if p.is_file()}
    monkeypatch.chdir(site)
    result = CliRunner().invoke(main, ["site", "."])
    assert result.exit_code != 0 and "is the folder this command runs in" in result.output, result.output
    assert f"cd {tmp_path} && zoo site site" in result.output.replace("\n", "")
    assert {p.relative_to(site): p.read_bytes() for p in site.rglob("*") if p.is_file()} == before
    monkeypatch.chdir(tmp_path)
    zoo("site", "site")  # from outside, the same folder regenerates


def test_nothing_cached_says_what_to_do(isolated: Path) -> None:
    result = CliRunner().invoke(main, ["site", str(isolated / "site")])
    assert result.exit_code != 0 and "nothing cached" in result.output and "--remote" in result.output
    assert not (isolated / "site").exists()


@pytest.mark.slow
def test_a_site_from_a_directory_remote_links_every_file_with_its_sha256(site_cache: dict[str, Manifest],
                                                                          tmp_path: Path) -> None:
    share = tmp_path / "share"
    Zoo().publish(str(share), model="add", target="u55-128", notice=lambda m: None)
    zoo("site", str(tmp_path / "site"), "--remote", str(share))
    page = tmp_path / "site" / "models" / "add.html"
    parsed = parse(page)
    downloads = [link for link in parsed.links if link.startswith("file://")]
    m = site_cache["float"]
    assert len(downloads) == len(m.files)
    for f in m.files:
        link = next(link for link in downloads if link.endswith("/" + f.name))
        assert Path(link.removeprefix("file://")).is_file()
        assert f"sha256 {f.sha256}" in parsed.plain()
    assert f"--remote {share}" in parsed.plain()
    assert "Each model page lists every file with its sha256 and a download link." in parse(page.parent.parent / "index.html").plain()


def test_publish_site_puts_a_browsable_site_beside_the_index(site_cache: dict[str, Manifest], tmp_path: Path) -> None:
    share = tmp_path / "share"
    out = zoo("publish", "add", "-t", "u55-128", "--to", str(share), "--site")
    assert f"site       {(share / '_site' / 'index.html').as_uri()}" in out.stdout
    index_json = (share / "index.json").read_bytes()
    site = share / "_site"
    assert broken_links(site, within=share) == []
    page = parse(site / "models" / "add.html")
    relative = [link for link in page.links if link.startswith("../../add/")]
    assert len(relative) == len(site_cache["float"].files)
    assert all((site / "models" / link).resolve().is_file() for link in relative)  # the remote's own files
    # --site alone rewrites the site and touches nothing else.
    zoo("publish", "--to", str(share), "--site")
    assert (share / "index.json").read_bytes() == index_json


def test_publish_site_to_an_object_store(site_cache: dict[str, Manifest]) -> None:
    from zoo.registry.remotes import parse_remote

    url = f"memory://site-{uuid.uuid4().hex[:12]}/team"
    zoo("publish", "add", "-t", "u55-128", "--to", url, "--site")
    remote = parse_remote(url)
    fs = remote._fs()  # type: ignore[attr-defined]
    bucket = url.removeprefix("memory://")
    names = sorted(p.split("/_site/", 1)[1] for p in fs.find(f"/{bucket}/_site"))
    assert names == [".zoo-site", "index.html", "models/add.html", "site.css", "site.js"]
    assert b"../../add/" in fs.cat_file(f"/{bucket}/_site/models/add.html")


def test_a_remote_kind_without_pages_says_so(site_cache: dict[str, Manifest]) -> None:
    from zoo.registry.remotes.base import Remote
    from zoo.registry.remotes.http import HttpRemote

    assert HttpRemote("https://example.com/zoo").public_url("add/u55-128/k/add.pte") == \
        "https://example.com/zoo/add/u55-128/k/add.pte"
    with pytest.raises(Exception, match="cannot put a site on a http remote"):
        Remote.put_site(HttpRemote("https://example.com/zoo"), "_site", {}, say=print)


@pytest.mark.slow
def test_zoo_site_never_imports_torch(site_cache: dict[str, Manifest], tmp_path: Path) -> None:
    probed = run_probed("site", str(tmp_path / "site"))
    assert probed.returncode == 0, probed.stderr
    assert probed.loaded == []


@pytest.mark.parametrize("change", ["inputs not a list", "metrics not a list", "negative time", "nan time",
                                    "lone surrogate"])
def test_a_record_no_page_can_show_is_skipped_with_a_note(change: str, site_cache: dict[str, Manifest],
                                                         tmp_path: Path) -> None:
    """The index reader accepts these records; the site skips each with a note, and publishing
    never removes a record, so a crash here would fail every later --site to that remote."""
    import json

    from zoo.registry.request.keys import key_of

    share = tmp_path / "share"
    Zoo().publish(str(share), model="add", target="u55-128", notice=lambda m: None)
    data = json.loads((share / "index.json").read_text())
    records = data["models"]["add"]["u55-128"]
    (_, record), = records.items()
    records.clear()
    good = json.loads(json.dumps(record))  # a second, sound record beside the one made bad
    good["key_inputs"]["note"] = "another build"
    records[key_of(good["key_inputs"])] = {**good, "key": key_of(good["key_inputs"])}
    if change == "inputs not a list":
        record["key_inputs"]["inputs"] = 7
    elif change == "metrics not a list":
        record["accuracy"] = {"metrics": 3}
    elif change == "negative time":
        record["vela"]["inference_time_ms"] = -1.0
    elif change == "nan time":
        record["vela"]["inference_time_ms"] = float("nan")
    else:
        record["weights_info"] = {"description": "\udcff"}
    key = key_of(record["key_inputs"])  # a record the index reader accepts: its key is its inputs' hash
    records[key] = {**record, "key": key}
    (share / "index.json").write_text(json.dumps(data), encoding="utf-8", errors="surrogatepass")
    result = zoo("site", str(tmp_path / "site"), "--remote", str(share))
    assert f"skipping 'add' for 'ethos-u55-128' (key '{key[:12]}')" in result.output, result.output
    assert (tmp_path / "site" / "models" / "add.html").is_file()  # the sound record is still shown


def test_variant_labels_are_linear_in_one_models_builds() -> None:
    """6,000 builds of one model on one target (issue 29: 19 s for 6,000): each build's target is
    read a bounded number of times, not once per other build."""
    from zoo.registry.site.builds import Build
    from zoo.registry.site.variants import variant_labels

    reads = [0]

    class Counting(Build):
        def __getattribute__(self, name: str) -> object:
            if name == "target":
                reads[0] += 1
            return object.__getattribute__(self, name)

    base = dict(model="m", weights="w", target="t", accelerator="ethos-u55-128", system_config="s", memory_mode="m",
                extra_flags=(), sram_budget=None, io="float", layout="nchw", io_in_key=False, precision="int8", inputs=(), time_ms=1.0,
                per_second=1.0, sram_bytes=1.0, flash_bytes=1.0, pte_bytes=1, npu_ops=1, cpu_ops=0, partitions=1,
                cpu_op_names=(), metrics=(), weights_info={}, tools={})
    n = 6000
    builds = [Counting(key=f"{i:064x}", built_at=f"2026-11-{1 + i % 28:02d}T{i // 60 % 24:02d}:{i % 60:02d}",
                       **base) for i in range(n)]  # type: ignore[arg-type]
    labels = variant_labels(builds)
    assert len(labels) == n and len(set(labels.values())) > 1  # the build dates tell them apart
    assert reads[0] <= 4 * n, reads[0]


def test_charts_and_rows_order_targets_by_accelerator_then_macs() -> None:
    """As strings, u55-32 sorts after u55-256; a firmware engineer reads them by size."""
    import re

    from zoo.registry.site.builds import Build
    from zoo.registry.site.chart import chart_svg
    from zoo.registry.site.markup import Scale

    base = dict(model="m", weights="w", accelerator="", system_config="s", memory_mode="m", extra_flags=(),
                sram_budget=None, io="float", layout="nchw", io_in_key=False, precision="int8", inputs=(), per_second=1.0,
                sram_bytes=1.0, flash_bytes=1.0, pte_bytes=1, npu_ops=1, cpu_ops=0, partitions=1, cpu_op_names=(),
                metrics=(), weights_info={}, tools={}, built_at="2026-11-26T00:00")
    names = ["ethos-u85-1024", "ethos-u55-256", "ethos-u55-32", "ethos-u85-128", "ethos-u55-128", "ethos-u65-256"]
    builds = [Build(key=f"{i:064x}", target=t, time_ms=float(i + 1), **base)  # type: ignore[arg-type]
              for i, t in enumerate(names)]
    svg = chart_svg(builds, {}, Scale.of(b.time_ms for b in builds), title="t")
    shown = re.findall(r"<title>(ethos-[^<]+)</title>", svg)
    assert shown == ["ethos-u55-32", "ethos-u55-128", "ethos-u55-256", "ethos-u65-256", "ethos-u85-128",
                     "ethos-u85-1024"]


def test_board_builds_sit_under_their_npu_and_every_memory_is_shown(tmp_path: Path) -> None:
    """Issue 31: mv2 for imx93 read as "not built" everywhere, and DRAM and the RAM to reserve
    appeared nowhere on the site."""
    from tests.site.wide import wide_site

    folder = wide_site(tmp_path / "site")
    index = parse(folder / "index.html")
    heat = next(r for r in index.rows if r and r[0] == "" and "u55-32" in r)
    assert heat[1:] == ["u55-32", "u55-64", "u55-128", "u55-256", "u65-256", "u65-512", "u85-128", "u85-256",
                        "u85-512", "u85-1024", "u85-2048", "portable"]
    board_row = next(r for r in index.rows if r and r[0].startswith("mv2") and "board imx93" in r[0])
    assert "imx93" in board_row[heat.index("u65-256")] and "·" not in board_row[heat.index("u65-256")]
    text = index.plain()
    assert "DRAM" in text and "RAM to reserve" in text
    model = parse(folder / "models" / page_name("mv2")).plain()
    assert "Vela: SRAM" in model and "DRAM 3.3 MiB" in model and "RAM to reserve" in model
    assert "planned buffers 735.0 KiB and method allocator 9.0 KiB in any RAM the CPU reaches" in model
    assert "board imx93" in model
    two_heads = parse(folder / "models" / page_name("two_heads")).plain()
    assert "zoo --model-file /work/examples/two_heads.py fetch two_heads" in two_heads


def test_a_model_file_build_is_told_apart_by_its_code() -> None:
    """By the loader's module in the key: the one a model file's key records today, and
    zoo.registry.model_file, which earlier builds (and remotes' indexes) record."""
    from zoo._api import ZooOptions
    from zoo.registry.request.code_identity import code_identity
    from zoo.registry.site.builds import _model_file

    onnx_file = Path(__file__).parents[2] / "examples" / "conv_net.onnx"
    today = code_identity(Zoo(ZooOptions(model_files=(onnx_file,))).model("conv_net"))
    assert _model_file({"model": {"code": today}}, {"origin": str(onnx_file)}) == str(onnx_file)
    earlier = {"model": {"code": {"modules": {"zoo.registry.model_file": "sha256:0"}}}}
    assert _model_file(earlier, {"origin": "/src/net.py"}) == "/src/net.py"
    assert _model_file({"model": {"code": {"modules": {"zoo.plugins.add": "sha256:0"}}}}, {"origin": "x"}) is None


def test_a_failed_budget_build_is_labelled_by_its_budget_and_counted_as_the_report_counts(
    site_cache: dict[str, Manifest], tmp_path: Path
) -> None:
    """Issue 31: the failed --sram-budget build read "weights mnist", and the site counted 2 failures
    where zoo report --all counted 1: the budget's failure sits beside add's good default build for
    u55-128, and report --all counted only the cells where nothing built."""
    import json
    import re

    from zoo.registry.store.failures import Failure

    m = site_cache["float"]
    target = {**m.key_inputs["target"], "sram_budget": 1024}
    Zoo().cache.record_failure(Failure(
        model="add", target="ethos-u55-128", weights="none", key="f" * 64, error="BuildError",
        message="nothing fits ethos-u55-128's SRAM budget of 1.0 KiB", stage="memory fit", recorded=True,
        variant={"target": target}))
    zoo("site", str(tmp_path / "site"))
    index = parse(tmp_path / "site" / "index.html")
    site_count = re.findall(r"(\d+) failed builds?\b", index.plain())
    report = zoo("report", "--all").stdout
    report_count = re.findall(r"(\d+) failed builds?\b", report)
    assert site_count == report_count == ["2"], (site_count, report_count)
    assert len(json.loads(zoo("report", "--all", "--json").stdout)["failures"]) == 2

    row = next(r for r in index.rows if r and "failed at memory fit" in r)
    assert "weights none, SRAM budget 1.0 KiB" in row
    heat = next(r for r in index.rows if r and r[0].startswith("add") and "SRAM budget 1.0 KiB" in r[0]
                and any("✗" in c for c in r))
    assert heat
    # report --all shows it on a line of its own, under the site's label, beside the cell's good build
    u55 = [re.split(r"\s{2,}", line)[4:6] for line in report.splitlines()
           if re.split(r"\s{2,}", line)[1:4] == ["add", "none", "ethos-u55-128"]]
    assert len(u55) == 2 and u55[0][1] == "built" and u55[1] == ["SRAM budget 1.0 KiB", "FAILED at memory fit"], report


def test_a_target_built_at_several_precisions_names_the_one_to_ship(tmp_path: Path) -> None:
    """Issue 30: the site shows, per model and target, the fastest precision that meets the
    allowed drop, beside what int8 alone gives."""
    from tests.site.wide import _build
    from zoo.registry.site.builds import gather
    from zoo.registry.site.write import render_site, write_site

    def f1(program: float) -> tuple[dict[str, object], ...]:
        return ({"name": "f1", "unit": "", "float": 0.9369, "program": program, "passed": 0.9369 - program <= 0.01},)

    trained = {"weights": "silero-v6", "weights_info": {"origin": "https://github.com/snakers4/silero-vad"}}
    builds = [_build("ethos-u85-256", "ethos-u85-256", model="silero-vad", n=0, time_ms=0.225, metrics=f1(0.8775), **trained),
              _build("ethos-u85-256", "ethos-u85-256", model="silero-vad", n=1, time_ms=0.485, metrics=f1(0.9402),
                     precision="a16w8", **trained),
              _build("ethos-u55-128", "ethos-u55-128", model="silero-vad", n=2, time_ms=1.2, metrics=f1(0.8775), **trained)]
    site = gather("the local cache", builds, [], {}, from_remote=False)
    folder = write_site(tmp_path / "site", render_site(site, target_order={"ethos-u55-128": 0, "ethos-u85-256": 1}))
    page = parse(folder / "models" / page_name("silero-vad")).plain()
    assert "Best precision: a16w8 485.0 µs (int8 225.0 µs misses the goal). The goal: every metric within its allowed drop." in page
    assert page.count("Best precision") == 1  # u55-128 has int8 alone: nothing to choose between
