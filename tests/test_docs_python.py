"""The README's Python lines run as written, against the builds the compile tier shares
(so nothing compiles here), and the metric they read is typed and says what was measured."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.fake_compile import FakeCompile
from zoo import Artifact, Zoo


def python_blocks(page: Path) -> list[str]:
    return re.findall(r"```python\n(.*?)```", page.read_text(encoding="utf-8"), re.S)


def test_every_model_file_a_command_in_the_docs_names_is_shipped() -> None:
    """Issue 31: the README's two_heads.py command could not be run as written."""
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    named = {(page.name, m) for page in pages
             for m in re.findall(r"^\s*(?:\$ )?zoo[^\n`]*--model-file (\S+)", page.read_text(encoding="utf-8"), re.M)}
    named |= {(page.name, m) for page in pages
              for m in re.findall(r"`zoo --model-file (\S+)", page.read_text(encoding="utf-8"))}
    assert named, "the docs name no model file: the pattern no longer matches them"
    missing = sorted((page, m) for page, m in named if not (ROOT / m).is_file())
    assert not missing, missing


@pytest.mark.compile
def test_the_readmes_python_runs_as_written(built: dict[tuple[str, str], Artifact], use_shared_cache: Path) -> None:
    (block,) = python_blocks(ROOT / "README.md")
    namespace: dict[str, object] = {}
    lines = block.strip().splitlines()
    exec("\n".join(lines[:-1]), namespace)
    top1 = eval(lines[-1].split("#")[0], namespace)
    assert top1 == built[("mnist", "u55-128")].manifest.metric("top1").program and 0 < top1 <= 100


def test_a_metric_reads_typed_and_an_unmeasured_one_names_what_was(fake_compile: FakeCompile) -> None:
    manifest = Zoo().fetch("add", "u55-128").manifest
    with pytest.raises(KeyError, match=r"add for ethos-u55-128 has no measured metric 'top1'; measured: none \(fetch"):
        manifest.metric("top1")
    record = {"name": "top1", "unit": "%", "float": 98.5, "program": 98.0, "drop": 0.5, "max_drop": 1.0,
              "passed": True, "dataset": "MNIST test", "samples": 200, "program_kind": "TOSA reference model"}
    measured = dataclasses.replace(manifest, verification={"numerics": {"metrics": [record]}})
    top1 = measured.metric("top1")
    assert (top1.float, top1.program, top1.drop, top1.passed, top1.samples) == (98.5, 98.0, 0.5, True, 200)
    with pytest.raises(KeyError, match="measured: top1"):
        measured.metric("accuracy")
