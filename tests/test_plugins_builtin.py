"""The built-in model plugins: cheap to import, valid specs, honest data and weights."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.error
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from zoo import BuildError, ModelSpec, UsageError
from zoo.plugins import _digits, add, mnist, mv2, softmax

PLUGINS = {"add": add, "softmax": softmax, "mnist": mnist, "mv2": mv2}
HEAVY = ("torch", "torchvision", "sklearn", "PIL", "numpy", "safetensors")


def spec_of(module: ModuleType) -> ModelSpec:
    registered: list[ModelSpec] = []
    module.register_models(registered.append)
    assert len(registered) == 1
    return registered[0]


def identities(spec: ModelSpec) -> dict[str, str]:
    out = {f"weights:{w.name}": w.identity() for w in spec.weights}
    out["calibration"] = spec.calibration.identity()
    if spec.evaluation is not None:
        out["evaluation"] = spec.evaluation.identity()
    return out


# --- cheap and torch-free -------------------------------------------------------------------

_PROBE = """
import json, sys
import zoo.plugins.add, zoo.plugins.softmax, zoo.plugins.mnist, zoo.plugins.mv2
specs = []
for m in (zoo.plugins.add, zoo.plugins.softmax, zoo.plugins.mnist, zoo.plugins.mv2):
    m.register_models(specs.append)
ids = {}
for s in specs:
    s.validate()
    s.summary()
    ids[s.name] = {f"weights:{w.name}": w.identity() for w in s.weights}
    ids[s.name]["calibration"] = s.calibration.identity()
    if s.evaluation is not None:
        ids[s.name]["evaluation"] = s.evaluation.identity()
heavy = sorted(m for m in sys.argv[1:] if m in sys.modules)
print(json.dumps({"heavy": heavy, "ids": ids}))
"""


@pytest.fixture(scope="module")
def fresh_process() -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, *HEAVY], capture_output=True, text=True, check=True, timeout=60
    )
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def test_import_register_and_identities_stay_torch_free(fresh_process: dict[str, Any]) -> None:
    assert fresh_process["heavy"] == []


@pytest.mark.parametrize("name", sorted(PLUGINS))
def test_identities_are_stable_across_processes(name: str, fresh_process: dict[str, Any]) -> None:
    spec = spec_of(PLUGINS[name])
    assert identities(spec) == identities(spec) == fresh_process["ids"][name]


@pytest.mark.parametrize("name", sorted(PLUGINS))
def test_spec_validates(name: str) -> None:
    spec = spec_of(PLUGINS[name])
    spec.validate()
    assert spec.name == name
    assert spec.weights_variant(None).name == (spec.default_weights or spec.weights[0].name)


def test_identities_are_distinct() -> None:
    spec = spec_of(mnist)
    ids = identities(spec)
    assert ids["weights:random"] == "seed:0"
    assert ids["weights:digits"].startswith("sha256:")
    assert ids["calibration"] != ids["evaluation"]
    assert identities(spec_of(mv2))["weights:random"] == "seed:0"


# --- add and softmax ------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["add", "softmax"])
def test_operator_models_calibrate_deterministically(name: str) -> None:
    import torch

    spec = spec_of(PLUGINS[name])
    first, second = spec.calibration.load(), spec.calibration.load()
    assert len(first) == spec.calibration.size
    for a, b in zip(first, second, strict=True):
        assert all(torch.equal(x, y) for x, y in zip(a, b, strict=True))
        assert [tuple(x.shape) for x in a] == [i.shape for i in spec.inputs]
        assert all(float(x.min()) >= -1.0 and float(x.max()) <= 1.0 for x in a)


def test_add_and_softmax_compute_what_the_seeds_show() -> None:
    import torch

    add_spec, softmax_spec = spec_of(add), spec_of(softmax)
    assert torch.equal(add_spec.build("none")(*add_spec.example_inputs()), torch.full((1, 1, 1, 1), 2.0))
    assert torch.equal(softmax_spec.build("none")(*softmax_spec.example_inputs()), torch.full((2, 2), 0.5))
    with pytest.raises(BuildError):
        add_spec.build("random")


# --- mnist ----------------------------------------------------------------------------------


def test_mnist_has_the_seeds_parameter_count() -> None:
    model = spec_of(mnist).build("random")
    assert sum(p.numel() for p in model.parameters()) == 105_866


def test_mnist_splits_are_disjoint_and_deterministic() -> None:
    held_out = set(_digits.eval_indices())
    training = set(_digits.train_indices())
    calibration = set(_digits.calibration_indices())
    assert len(held_out) == _digits.EVAL_SIZE >= 297
    assert 64 <= len(calibration) == _digits.CALIBRATION_SIZE <= 100
    assert held_out.isdisjoint(training)
    assert held_out | training == set(range(_digits.COUNT))
    assert calibration <= training
    # Pinned: the shipped weights were trained on this split; a new one would leak.
    assert _digits.eval_indices()[:5] == (1335, 392, 942, 404, 87)


def test_mnist_datasets_have_the_declared_shapes() -> None:
    import torch

    spec = spec_of(mnist)
    assert spec.evaluation is not None
    calibration, evaluation = spec.calibration.load(), spec.evaluation.load()
    assert len(calibration) == spec.calibration.size
    assert len(evaluation) == spec.evaluation.size
    assert all(len(s) == 1 and tuple(s[0].shape) == (1, 1, 28, 28) for s in calibration)
    assert all(isinstance(label, int) and 0 <= label <= 9 for _, label in evaluation)
    images = torch.cat([s[0] for s in calibration])
    assert images.dtype == torch.float32
    assert float(images.min()) >= 0.0 and float(images.max()) <= 1.0
    assert tuple(spec.example_inputs()[0].shape) == (1, 1, 28, 28)
    assert spec.load_labels() == tuple("0123456789")


def test_mnist_digits_weights_reach_90_percent_on_held_out() -> None:
    import torch

    spec = spec_of(mnist)
    assert spec.evaluation is not None
    model = spec.build("digits")
    samples = spec.evaluation.load()
    images = torch.cat([s[0] for s, _ in samples])
    labels = torch.tensor([label for _, label in samples])
    with torch.no_grad():
        accuracy = float((model(images).argmax(1) == labels).float().mean())
    assert accuracy >= 0.90


def test_mnist_weights_identity_is_the_file_digest() -> None:
    import hashlib

    digest = hashlib.sha256(mnist.WEIGHTS_FILE.read_bytes()).hexdigest()
    assert spec_of(mnist).weights_variant("digits").identity() == f"sha256:{digest}"


# --- mv2 ------------------------------------------------------------------------------------


def test_mv2_url_matches_torchvision() -> None:
    from torchvision.models import MobileNet_V2_Weights

    url = MobileNet_V2_Weights.IMAGENET1K_V1.url
    assert url == mv2.IMAGENET1K_V1_URL
    assert url == spec_of(mv2).weights_variant("IMAGENET1K_V1").identity()


def test_mv2_random_builds_and_classifies_1000_ways() -> None:
    import torch

    spec = spec_of(mv2)
    model = spec.build("random")
    with torch.no_grad():
        out = model(*spec.example_inputs())
    assert tuple(out.shape) == (1, 1000)
    again = spec.build("random")
    assert torch.equal(model.features[0][0].weight, again.features[0][0].weight)
    assert spec.label_count() == 1000
    labels = spec.load_labels()
    assert labels is not None and len(labels) == 1000


def test_mv2_calibration_is_real_images() -> None:
    spec = spec_of(mv2)
    samples = spec.calibration.load()
    assert len(samples) == spec.calibration.size == 16
    assert all(tuple(s[0].shape) == (1, 3, 224, 224) for s in samples)
    lo, hi = mv2.RANGE
    assert all(lo - 1e-4 <= float(s[0].min()) and float(s[0].max()) <= hi + 1e-4 for s in samples)
    assert float(samples[0][0].std()) > 0.3  # a photo, not a constant


def test_mv2_offline_download_says_what_to_do(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from torchvision.models._api import WeightsEnum

    def offline(*args: Any, **kwargs: Any) -> Any:
        raise urllib.error.URLError("Name or service not known")

    monkeypatch.setenv("TORCH_HOME", str(tmp_path))
    monkeypatch.setattr(WeightsEnum, "get_state_dict", offline)
    with pytest.raises(BuildError) as caught:
        spec_of(mv2).build("IMAGENET1K_V1")
    message = str(caught.value)
    assert "--weights random" in message
    assert str(tmp_path / "hub" / "checkpoints" / "mobilenet_v2-b0353104.pth") in message


def test_mv2_rejects_a_wrong_cached_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TORCH_HOME", str(tmp_path))
    placed = tmp_path / "hub" / "checkpoints" / "mobilenet_v2-b0353104.pth"
    placed.parent.mkdir(parents=True)
    placed.write_bytes(b"not the weights")
    with pytest.raises(BuildError, match="b0353104"):
        spec_of(mv2).build("IMAGENET1K_V1")


def _write_pngs(folder: Path, count: int) -> None:
    from PIL import Image

    for i in range(count):
        colour = (40 * i % 256, 255 - 30 * i % 256, 90)
        Image.new("RGB", (64 + 8 * i, 48), colour).save(folder / f"img_{i}.png")


def test_mv2_calibration_from_dir(tmp_path: Path) -> None:
    _write_pngs(tmp_path, 3)
    (tmp_path / "notes.txt").write_text("ignored")
    dataset = mv2.calibration_from_dir(tmp_path)
    samples = dataset.load()
    assert dataset.size == len(samples) == 3
    assert all(tuple(s[0].shape) == (1, 3, 224, 224) for s in samples)
    first = dataset.identity()
    assert mv2.calibration_from_dir(tmp_path).identity() == first
    _write_pngs(tmp_path, 4)
    assert mv2.calibration_from_dir(tmp_path).identity() != first


def test_mv2_calibration_from_empty_dir_fails_clearly(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="no images"):
        mv2.calibration_from_dir(tmp_path)


def test_mv2_calibration_from_dir_names_a_corrupt_file(tmp_path: Path) -> None:
    _write_pngs(tmp_path, 2)
    (tmp_path / "broken.jpg").write_bytes(b"\xff\xd8\xff garbage")
    with pytest.raises(UsageError, match=r"broken\.jpg"):
        mv2.calibration_from_dir(tmp_path)
