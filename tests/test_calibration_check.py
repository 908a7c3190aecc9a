"""Calibration data must match the inputs a plugin declares: a mismatch fails the
build at once, naming the plugin, the sample and both shapes, before anything
is exported. (Imports torch, so a few seconds; nothing is lowered.)"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tests.conftest import run_zoo

PLUGIN = textwrap.dedent('''
    from zoo import Dataset, InputSpec, ModelSpec, WeightsVariant, hookimpl

    def _samples():
        import torch
        return [(torch.zeros(SHAPE, dtype=DTYPE),) for _ in range(2)]

    def _build(variant):
        import torch
        return torch.nn.Identity()

    @hookimpl
    def register_models(register):
        register(ModelSpec(
            name="liar", version="1", description="declares one shape, calibrates on another", task="test",
            inputs=(InputSpec("x", (1, 1, 4, 4), "float32"),),
            build=_build, example_inputs=lambda: _samples()[0],
            calibration=Dataset(2, "mismatched", _samples, lambda: "v1"),
            weights=(WeightsVariant("none", "none", "tests", "MIT", lambda: "none"),),
        ))
''')


@pytest.mark.compile  # each run imports torch and ExecuTorch: about 6 s
@pytest.mark.parametrize(("shape", "dtype", "said"), [
    ("(1, 3, 7, 7)", "torch.float32", "is float32 [1, 3, 7, 7], but plugin 'liar_plugin' declares float32 [1, 1, 4, 4]"),
    ("(1, 1, 4, 4)", "torch.int32", "is int32 [1, 1, 4, 4], but plugin 'liar_plugin' declares float32 [1, 1, 4, 4]"),
])
def test_calibration_that_contradicts_the_declared_inputs_fails_naming_the_plugin(
    tmp_path: Path, shape: str, dtype: str, said: str
) -> None:
    (tmp_path / "liar_plugin.py").write_text(f"SHAPE = {shape}\nimport torch\nDTYPE = {dtype}\n" + PLUGIN)
    proc = run_zoo("build", "liar", "-t", "u55-128", env={"ZOO_PLUGINS": "liar_plugin"}, pythonpath=tmp_path)
    assert proc.returncode == 1, proc.stderr
    assert f"calibration sample 0, input 'x', {said}; fix the declaration or the data" in proc.stderr
    assert "Traceback" not in proc.stderr
