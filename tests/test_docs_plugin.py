"""The plugin example in docs/plugins.md is complete: no undefined names, it registers, its model
runs on its own samples, and its evaluation items pass the label check."""

from __future__ import annotations

import io
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT
from zoo.registry.catalog.plugin_loader import LoadOptions, Registry


def example() -> str:
    page = (ROOT / "docs" / "plugins.md").read_text()
    section = page[page.index("## A complete plugin"):]
    return re.search(r"```python\n(# my_models\.py.*?)```", section, re.S).group(1)  # type: ignore[union-attr]


def test_the_example_has_no_undefined_names(tmp_path: Path) -> None:
    path = tmp_path / "my_models.py"
    path.write_text(example())
    ruff = Path(sys.executable).with_name("ruff")
    proc = subprocess.run([str(ruff), "check", "--isolated", "--select", "F", str(path)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.stack
def test_the_example_registers_builds_and_its_labels_pass(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "my_models.py").write_text(example())
    monkeypatch.syspath_prepend(str(tmp_path))
    reg = Registry(stderr=io.StringIO()).load(LoadOptions(modules=("my_models",), entry_points=False))
    assert reg.plugins[0].status == "ok", reg.plugins[0].error
    spec = reg.catalog.get("kws")
    assert spec.weights_variant(None).references() == {"top1": 95.0}
    model = spec.build("random")
    (out,) = [model(*spec.example_inputs())]
    assert tuple(out.shape) == (1, 10)

    from zoo.registry import numerics

    labelled = numerics.load_labelled(spec, None, "model 'kws'")
    assert labelled is not None and len(labelled.items) == spec.evaluation.size  # type: ignore[union-attr]
