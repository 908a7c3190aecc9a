"""Figures the docs quote from a build the compile tier makes are that build's own: a test
fails when they drift (issue 31: MODEL_PTE_LEN 109904u stayed in docs/c-header.md after the
.pte changed)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.conftest import ROOT
from zoo import Artifact


@pytest.mark.compile
def test_the_c_header_pages_macros_are_mnist_u55_128s(built: dict[tuple[str, str], Artifact]) -> None:
    page = (ROOT / "docs" / "c-header.md").read_text(encoding="utf-8")
    block = re.search(r"```c\n(#define MODEL_PTE_LEN.*?)```", page, re.S)
    assert block is not None, "docs/c-header.md no longer opens with the header's macros"
    quoted = dict(re.findall(r"#define (MODEL_PTE_\w+) (\d+)u?\b", block.group(1)))
    header = built[("mnist", "u55-128")].header.read_text(encoding="ascii")
    actual = dict(re.findall(r"#define (MODEL_PTE_\w+) (\d+)u?\b", header))
    assert quoted and {k: actual.get(k) for k in quoted} == quoted


def _cell(art: Artifact) -> str:
    from zoo._units import duration, human_bytes

    total = art.manifest.vela_total
    assert total is not None
    return f"{duration(total.inference_time_ms)}, SRAM {human_bytes(total.sram_bytes)}"


@pytest.mark.compile
def test_the_catalogue_pages_rows_are_the_builds_own(built: dict[tuple[str, str], Artifact], tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/catalogue.md's grid is benchmarks/catalogue.py's output (random weights where a model has
    them); the rows of the models the compile tier builds, and mnist's random variant, must match."""
    from zoo import Zoo

    page = (ROOT / "docs" / "catalogue.md").read_text(encoding="utf-8")
    rows = {m.group(1): (m.group(2).strip(), m.group(3).strip())
            for m in re.finditer(r"^\| ([\w-]+) \| ([^|]+) \| ([^|]+) \|$", page, re.M)}
    for model in ("add", "softmax", "mv2"):
        assert rows[model] == (_cell(built[(model, "u55-128")]), _cell(built[(model, "u85-256")])), model
    monkeypatch.setenv("ZOO_CACHE_DIR", str(tmp_path / "cache"))  # the shared cache keeps its own builds only
    mnist = Zoo().fetch_many(["mnist"], ["u55-128", "u85-256"], weights="random")
    assert rows["mnist"] == tuple(_cell(a) for a in mnist)
