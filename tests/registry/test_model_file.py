"""aot_arm_compiler-style model files (--model-file)."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from tests.conftest import run_zoo
from zoo import SpecError
from zoo.registry.model_files.py_file import spec_from_model_file

# The seed's file, unchanged in shape: ModelUnderTest and ModelInputs, random init.
SEED_STYLE = textwrap.dedent('''
    """Small CNN in the Arm learning path's style."""
    import torch
    import torch.nn as nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(1, 4, 3, padding=1)
            self.fc = nn.Linear(4 * 8 * 8, 10)

        def forward(self, x):
            return self.fc(torch.relu(self.conv(x)).view(x.size(0), -1))

    model = Net()
    example_input = torch.randn(1, 1, 8, 8)
    ModelUnderTest = model
    ModelInputs = (example_input,)
''')


@pytest.fixture
def model_file(tmp_path: Path) -> Path:
    path = tmp_path / "My_Net.py"
    path.write_text(SEED_STYLE)
    return path


@pytest.mark.stack
def test_model_file_becomes_a_spec(model_file: Path) -> None:
    spec = spec_from_model_file(model_file)
    spec.validate()
    assert spec.name == "my_net"
    assert spec.inputs[0].shape == (1, 1, 8, 8)
    assert spec.description == "Small CNN in the Arm learning path's style."
    assert spec.calibration.size == 1
    out = spec.build("file")(*spec.example_inputs())
    assert tuple(out.shape) == (1, 10)


@pytest.mark.stack
def test_same_file_gives_same_weights_and_identity(model_file: Path) -> None:
    import torch

    a, b = spec_from_model_file(model_file), spec_from_model_file(model_file)
    assert a.version == b.version and a.weights[0].identity() == b.weights[0].identity()
    assert a.calibration.identity() == b.calibration.identity()
    for pa, pb in zip(a.build("file").parameters(), b.build("file").parameters(), strict=True):
        assert torch.equal(pa, pb)


@pytest.mark.stack
def test_calibration_data_is_used_when_defined(tmp_path: Path) -> None:
    path = tmp_path / "withcal.py"
    path.write_text(SEED_STYLE + "\nCalibrationData = [(torch.rand(1, 1, 8, 8),) for _ in range(5)]\n")
    assert spec_from_model_file(path).calibration.size == 5


@pytest.mark.stack
def test_calibration_data_that_is_no_list_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "badcal.py"
    path.write_text(SEED_STYLE + "\nCalibrationData = 5\n")
    with pytest.raises(SpecError, match=r"CalibrationData must be a list .* of input tuples, like ModelInputs; got int"):
        spec_from_model_file(path)


@pytest.mark.stack
def test_missing_model_inputs_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "bad.py"
    path.write_text("import torch\nModelUnderTest = torch.nn.Identity()\n")
    with pytest.raises(SpecError, match="does not define ModelInputs"):
        spec_from_model_file(path)


@pytest.mark.stack
def test_cli_lists_and_describes_a_model_file(model_file: Path) -> None:
    proc = run_zoo("--model-file", str(model_file), "info", "my_net", "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["inputs"][0]["shape"] == [1, 1, 8, 8]


@pytest.mark.stack
def test_broken_model_file_is_skipped_not_fatal(tmp_path: Path) -> None:
    path = tmp_path / "broken.py"
    path.write_text("raise ValueError('oops')\n")
    proc = run_zoo("--model-file", str(path), "list")
    assert proc.returncode == 0
    assert "zoo: skipped plugin" in proc.stderr and "ValueError: oops" in proc.stderr
