"""``--qat STEPS``: quantization-aware training as part of what is built.

The fast tests check the choice, the key and the recipe field without compiling. The compile
tier fine-tunes the tests' RGB plugin for u85-256 and holds it against its PTQ build.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import run_zoo
from zoo import Recipe, UsageError, Zoo
from zoo.registry.request.precision import QAT, Precision

PLUGIN = {"ZOO_PLUGINS": "tests.rgb_plugin", "PYTHONPATH": str(Path(__file__).parents[1])}


@pytest.fixture
def rgb(monkeypatch: pytest.MonkeyPatch) -> Zoo:
    monkeypatch.setenv("ZOO_PLUGINS", "tests.rgb_plugin")
    return Zoo()


def test_qat_is_its_own_build_named_by_its_steps_and_keyed_by_its_data(rgb: Zoo) -> None:
    ptq, tuned, longer = (rgb.request("rgb-tiny", "u85-256", qat=q) for q in (None, 20, 40))
    assert rgb.request("rgb-tiny", "u85-256", qat=0).key() == ptq.key()
    assert len({ptq.key(), tuned.key(), longer.key()}) == 3
    inputs = tuned.key_inputs()
    assert inputs["quantization"]["is_qat"] is True and inputs["quantization"]["qat"] == {"steps": 20, **QAT}
    assert inputs["training"] == {"size": 24, "identity": "rgb-tiny-images-v1 seed 4"}
    assert "training" not in ptq.key_inputs() and ptq.key_inputs()["quantization"]["is_qat"] is False
    assert (tuned.precision.name, tuned.stem) == ("int8+qat20", "rgb-tiny_u85-256_int8-qat20")
    assert Precision.from_key(inputs["quantization"]) == tuned.precision
    info = run_zoo("info", "rgb-tiny", env=PLUGIN).stdout
    assert "training:    24 samples for --qat STEPS: 24 other seeded images" in info
    a16w8 = rgb.request("rgb-tiny", "u85-256", precision="a16w8", qat=20)
    assert a16w8.precision.name == "a16w8+qat20" and a16w8.precision.uses("a16w8")
    assert Precision.from_key(a16w8.key_inputs()["quantization"]) == a16w8.precision  # what the structure check reads


def test_qat_is_refused_where_there_is_nothing_to_train(rgb: Zoo) -> None:
    with pytest.raises(UsageError, match=r"'add' declares no training data .* build it without --qat"):
        rgb.request("add", "u55-128", qat=10)
    with pytest.raises(UsageError, match="--qat 10: 'portable' runs 'rgb-tiny' in float on the CPU"):
        rgb.request("rgb-tiny", "portable", qat=10)
    result = run_zoo("fetch", "rgb-tiny", "-t", "u85-256", "--qat", "-3", "--no-build", env=PLUGIN)
    assert result.returncode == 2 and "--qat" in result.stderr and "-3" in result.stderr


def test_a_recipe_file_may_ask_for_qat_and_the_option_overrides_it(rgb: Zoo, tmp_path: Path) -> None:
    path = tmp_path / "tuned.json"
    path.write_text(Recipe("int8", {"0": "a16w8"}, qat=30).dumps())
    assert json.loads(path.read_text())["qat"] == 30
    assert "qat" not in Recipe("int8").to_json()  # recipes written before --qat read back the same
    from_file = rgb.request("rgb-tiny", "u85-256", recipe=path)
    assert (from_file.precision.name, from_file.precision.qat) == ("tuned+qat30", 30)
    assert rgb.request("rgb-tiny", "u85-256", recipe=path, qat=0).precision.qat == 0
    path.write_text(json.dumps({"default": "int8", "qat": "many"}))
    with pytest.raises(UsageError, match="qat must be a number of training steps"):
        rgb.request("rgb-tiny", "u85-256", recipe=path)


@pytest.mark.compile
def test_qat_fine_tunes_from_the_ptq_program_and_passes_its_checks(
    shared_cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ZOO_PLUGINS", "tests.rgb_plugin")
    monkeypatch.setenv("ZOO_CACHE_DIR", str(shared_cache))
    monkeypatch.chdir(tmp_path)
    zoo = Zoo()
    ptq = zoo.fetch("rgb-tiny", "u85-256", verify=True)
    tuned = zoo.fetch("rgb-tiny", "u85-256", qat=20, verify=True)
    m = tuned.manifest
    assert m.precision == "int8+qat20" and tuned.verification and tuned.verification.passed
    assert '#define MODEL_PTE_PRECISION "int8+qat20"' in tuned.header.read_text()
    assert tuned.pte.read_bytes() != ptq.pte.read_bytes()
    again = zoo.fetch("rgb-tiny", "u85-256", qat=20, force_build=True, out_dir=tmp_path / "again")
    assert again.pte.read_bytes() == tuned.pte.read_bytes()  # training is seeded: the same bytes every build
    record = (m.calibration or {})["qat"]
    assert record["steps"] == 20 and record["samples"] == 24
    assert record["loss"]["kept"] < record["loss"]["ptq"] and record["kept_step"] > 0  # it learned to match float
    # The activation ranges are PTQ's, calibrated on the same data: the same boundary scales.
    assert m.io == ptq.manifest.io
    # What QAT minimises: the program's distance from the float model.
    assert m.output_sqnr[0]["sqnr_db"] > (ptq.manifest.output_sqnr[0]["sqnr_db"] or 0)


@pytest.mark.compile
def test_training_leaves_the_float_model_it_learns_from_as_it_was() -> None:
    """The exported graph shares the float model's parameters: trained in place, the numerical
    check would compare the program against the trained weights, not the plugin's. PReLU's slope
    is a parameter that takes an activation's histogram observer, which cannot be re-ranged."""
    import torch

    from tests import rgb_plugin
    from zoo.registry.compile import qat
    from zoo.registry.compile.export import _export, _quantize
    from zoo.registry.compile.retarget import ethosu_compile_spec
    from zoo.registry.request.reproducible import numerics

    with numerics(torch, "test"):
        torch.manual_seed(3)
        model = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3), torch.nn.PReLU(8), torch.nn.Flatten(),
                                    torch.nn.Linear(8 * 14 * 14, 4)).eval()
        before = {k: v.clone() for k, v in model.state_dict().items()}
        samples = rgb_plugin._images()
        training = qat.Training(model, rgb_plugin._images(seed=4))
        graph = _export(model, samples[0]).module(check_guards=False)
        _quantize(graph, samples, ethosu_compile_spec(Zoo().target("u85-256")), "test", lambda *_: None,
                  precision=Precision("int8").with_qat(3), training=training)
    assert training.record["steps"] == 3 and training.record["loss"]["kept"] <= training.record["loss"]["ptq"]
    assert all(torch.equal(before[k], v) for k, v in model.state_dict().items())


@pytest.mark.compile
def test_quantizing_leaves_the_float_models_conv_weights_as_they_were() -> None:
    """Found on PP-OCR: the Arm quantizer's FoldScalarMulIntoConvPass folds a scalar multiply into
    the convolution before it with an in-place copy_, so without a copy the numerical check's
    float reference was the folded network (PP-OCR det's float recall read 1.3 % instead of 90 %)."""
    import torch

    from tests import rgb_plugin
    from zoo.registry.compile.export import _export, _quantize
    from zoo.registry.compile.retarget import ethosu_compile_spec
    from zoo.registry.request.reproducible import numerics

    class ScaledConv(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.conv = torch.nn.Conv2d(3, 8, 3)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return torch.relu(self.conv(x) * 0.25)

    with numerics(torch, "test"):
        torch.manual_seed(5)
        model = ScaledConv().eval()
        before = {k: v.clone() for k, v in model.state_dict().items()}
        samples = rgb_plugin._images()
        graph = _export(model, samples[0]).module(check_guards=False)
        _quantize(graph, samples, ethosu_compile_spec(Zoo().target("u85-256")), "test", lambda *_: None)
    assert all(torch.equal(before[k], v) for k, v in model.state_dict().items())
