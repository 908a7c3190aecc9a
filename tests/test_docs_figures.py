"""Figures the docs quote from a build the compile tier makes are that build's own: a test
fails when they drift (issue 31: MODEL_PTE_LEN 109904u stayed in docs/c-header.md after the
.pte changed)."""

from __future__ import annotations

import re

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
