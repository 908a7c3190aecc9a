"""torchvision's small classifiers: the rule, the snapshot, names, sizes, torch-free
registration, and weights that are honest offline. Nothing here lowers a model."""

from __future__ import annotations

import importlib.metadata
import json
import subprocess
import sys
import urllib.error
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import run_probed
from zoo import BuildError, ModelSpec, Zoo
from zoo.plugins import _imagenet
from zoo.plugins import torchvision_classifiers as tvc


def specs() -> list[ModelSpec]:
    registered: list[ModelSpec] = []
    tvc.register_models(registered.append)
    return registered


def spec(torchvision_name: str) -> ModelSpec:
    return tvc.spec_for(tvc.entry(torchvision_name))


# --- the rule and the snapshot (these import torchvision) ------------------------------------


@pytest.fixture(scope="module")
def regenerated() -> dict[str, Any]:
    return tvc.snapshot()


@pytest.mark.stack
def test_the_rule_is_torchvisions_metadata(regenerated: dict[str, Any]) -> None:
    import torchvision
    from torchvision.models import get_model_weights, list_models

    small = set()
    for name in list_models(module=torchvision.models):
        meta = next(iter(get_model_weights(name))).meta
        if meta["num_params"] <= 12e6 and meta["_ops"] <= 2.0:
            small.add(name)
    assert {e.torchvision_name for e in tvc.entries()} == small == set(regenerated["models"])
    assert {"mobilenet_v2", "mobilenet_v3_small", "efficientnet_b2", "resnet18"} <= small
    assert not {"resnet34", "efficientnet_b3", "fcn_resnet50", "quantized_mobilenet_v2"} & small


@pytest.mark.stack
def test_snapshot_is_what_the_script_writes(regenerated: dict[str, Any]) -> None:
    # If this fails after a torchvision upgrade: python scripts/snapshot_torchvision.py
    assert tvc.dumps(regenerated) == tvc.SNAPSHOT.read_text(encoding="utf-8")


# --- names and metadata (torch-free) -----------------------------------------------------------


def test_names_are_torchvisions_hyphenated_with_the_original_as_alias() -> None:
    all_specs = specs()
    assert len(all_specs) == len(tvc.entries()) >= 24
    for s in all_specs:
        s.validate()
    assert all(len(e.sha256_prefix) >= 8 for e in tvc.entries())  # what torch hub checks
    taken = [n for s in all_specs for n in (s.name, *s.aliases)]
    assert len(taken) == len(set(taken))
    by_name = {s.name: s for s in all_specs}
    assert by_name["mobilenet-v3-small"].aliases == ("mobilenet_v3_small",)
    assert by_name["shufflenet-v2-x0-5"].aliases == ("shufflenet_v2_x0_5",)
    assert by_name["resnet18"].aliases == ()
    assert "mobilenet-v2" not in by_name and "mobilenet_v2" not in by_name


def test_mv2_resolves_as_before() -> None:
    zoo = Zoo()
    for name in ("mv2", "mobilenet_v2", "mobilenetv2", "mobilenet-v2"):
        assert zoo.model(name).name == "mv2"
    mv2 = zoo.model("mv2")
    assert [s.name for s in zoo.models("mobilenet?v2")] == ["mv2"]
    assert mv2.inputs[0].shape == (1, 3, 224, 224)
    assert mv2.weights_names == ("IMAGENET1K_V1", "random")
    assert mv2.weights_variant(None).name == "IMAGENET1K_V1"
    tv = importlib.metadata.version("torchvision").split("+")[0]
    assert mv2.weights_variant("IMAGENET1K_V1").identity() == (
        f"https://download.pytorch.org/models/mobilenet_v2-b0353104.pth;torchvision={tv}"
    )


@pytest.mark.stack
def test_input_sizes_are_the_weights_crop_sizes() -> None:
    sides = {s.name: s.inputs[0].shape for s in specs()}
    assert sides["efficientnet-b1"] == (1, 3, 240, 240)
    assert sides["efficientnet-b2"] == (1, 3, 288, 288)
    assert sides["mobilenet-v3-small"] == sides["mv2"] == (1, 3, 224, 224)
    b1 = spec("efficientnet_b1")
    samples = b1.calibration.load()
    assert len(samples) == b1.calibration.size == 16
    assert all(tuple(x.shape) == (1, 3, 240, 240) for (x,) in samples)
    assert "bicubic resize to 240x240" in b1.calibration.identity()


def test_metadata_of_a_pretrained_variant() -> None:
    s = spec("mobilenet_v3_small")
    assert s.label_count() == 1000
    labels = s.load_labels()
    assert labels is not None and labels[0] == "tench" and len(labels) == 1000
    pretrained = s.summary()["weights"][0]
    assert pretrained["name"] == "IMAGENET1K_V1" and pretrained["default"]
    assert pretrained["reference_top1"] == 67.668
    assert pretrained["licence"].startswith("BSD-3-Clause") and "ImageNet" in pretrained["licence"]
    assert pretrained["origin"] == "https://download.pytorch.org/models/mobilenet_v3_small-047dcff4.pth"
    first_sentence = s.description.split(". ")[0]
    assert "2.5 M parameters" in first_sentence and "0.06 GFLOPs" in first_sentence


def test_random_identity_names_the_seed_and_the_bn_data() -> None:
    mv2 = spec("mobilenet_v2")
    random = mv2.weights_variant("random").identity()
    tv = importlib.metadata.version("torchvision").split("+")[0]
    assert random == f"seed:0;torchvision={tv};bn-reestimated-on:{mv2.calibration.identity()}"
    assert spec("efficientnet_b1").weights_variant("random").identity() != spec(
        "efficientnet_b0").weights_variant("random").identity()  # 240 vs 224 calibration images
    squeeze = spec("squeezenet1_0").weights_variant("random")
    assert squeeze.identity() == f"seed:0;torchvision={tv}"
    assert "no BatchNorm" in squeeze.description


_PROBE = """
import json, sys
from zoo.plugins import torchvision_classifiers as tvc
specs = []
tvc.register_models(specs.append)
ids = {}
for s in specs:
    s.validate()
    s.summary()
    ids[s.name] = [w.identity() for w in s.weights] + [s.calibration.identity()]
print(json.dumps({"heavy": sorted(m for m in sys.argv[1:] if m in sys.modules), "ids": ids}))
"""


@pytest.mark.slow
def test_registration_and_identities_import_no_torch() -> None:
    heavy = ("torch", "torchvision", "PIL", "numpy", "sklearn")
    done = subprocess.run([sys.executable, "-c", _PROBE, *heavy], capture_output=True, text=True,
                          check=True, timeout=60)
    result = json.loads(done.stdout)
    assert result["heavy"] == []
    here = {s.name: [w.identity() for w in s.weights] + [s.calibration.identity()] for s in specs()}
    assert result["ids"] == here

    listed = run_probed("list", "--json")
    assert listed.returncode == 0, listed.stderr
    assert listed.loaded == []
    assert {"mv2", "mobilenet-v3-small", "efficientnet-b1"} <= {m["name"] for m in json.loads(listed.stdout)}


# --- building (torch, no lowering) ---------------------------------------------------------------


@pytest.mark.heavy
def test_random_batchnorm_is_reestimated_so_outputs_vary() -> None:
    import torch

    mv2 = spec("mobilenet_v2")
    images = torch.cat([x for (x,) in mv2.calibration.load()])
    untouched = tvc.random_init(tvc.entry("mobilenet_v2"))
    rng = torch.random.get_rng_state()
    built = mv2.build("random")
    assert torch.equal(rng, torch.random.get_rng_state())
    assert not built.training and not any(m.training for m in built.modules())
    with torch.no_grad():
        before, after = untouched(images), built(images)
    assert tuple(after.shape) == (16, 1000)
    # Across the 16 images: about 2e-10 untouched (constant once quantized), 0.04 re-estimated.
    assert float(before.std(dim=0).mean()) < 1e-6
    assert float(after.std(dim=0).mean()) > 1e-3


@pytest.mark.heavy
def test_random_variant_is_deterministic() -> None:
    s = spec("shufflenet_v2_x0_5")
    first, second = s.build("random").state_dict(), s.build("random").state_dict()
    assert list(first) == list(second)
    assert all(first[k].numpy().tobytes() == second[k].numpy().tobytes() for k in first)
    assert int(first["conv1.1.num_batches_tracked"]) == 1  # statistics of one batch: the 16 images


@pytest.mark.stack
def test_pretrained_offline_says_what_to_do(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import torch.hub

    def offline(url: str, *args: Any, **kwargs: Any) -> None:
        raise urllib.error.URLError("Name or service not known")

    # An empty TORCH_HOME, and no network even where there is one.
    monkeypatch.setenv("TORCH_HOME", str(tmp_path))
    monkeypatch.setattr(torch.hub, "download_url_to_file", offline)
    with pytest.raises(BuildError) as caught:
        spec("mobilenet_v3_small").build("IMAGENET1K_V1")
    message = str(caught.value)
    assert message.startswith("mobilenet-v3-small: cannot download https://")
    assert "--weights random" in message
    assert "https://download.pytorch.org/models/mobilenet_v3_small-047dcff4.pth" in message
    assert str(tmp_path / "hub" / "checkpoints" / "mobilenet_v3_small-047dcff4.pth") in message


@pytest.mark.stack
def test_pretrained_offline_refuses_before_any_download_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    from zoo.registry.offline import no_network

    monkeypatch.setenv("TORCH_HOME", str(tmp_path))
    with no_network(True), pytest.raises(BuildError) as caught:
        spec("mobilenet_v3_small").build("IMAGENET1K_V1")
    message = str(caught.value)
    assert message.startswith("mobilenet-v3-small: zoo is offline") and "nothing was downloaded" in message
    assert "--weights random" in message
    printed = capfd.readouterr()
    assert "Downloading" not in printed.out + printed.err  # torch's line, before it would connect
    assert not any(p.is_file() for p in tmp_path.rglob("*"))  # not even a .partial file


@pytest.mark.stack
def test_pretrained_rejects_a_wrong_placed_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TORCH_HOME", str(tmp_path))
    placed = tmp_path / "hub" / "checkpoints" / "shufflenetv2_x0.5-f707e7126e.pth"
    placed.parent.mkdir(parents=True)
    placed.write_bytes(b"not the weights")
    with pytest.raises(BuildError, match=r"shufflenet-v2-x0-5: .* sha256 does not start with f707e7126e"):
        spec("shufflenet_v2_x0_5").build("IMAGENET1K_V1")


def test_unknown_variant_names_the_choices() -> None:
    with pytest.raises(BuildError, match="googlenet has no weights variant 'v2'; choose IMAGENET1K_V1 or random"):
        spec("googlenet").build("v2")


@pytest.mark.stack
def test_calibration_dir_uses_the_models_side(tmp_path: Path) -> None:
    from PIL import Image

    Image.new("RGB", (300, 200), (10, 200, 90)).save(tmp_path / "a.png")
    s = spec("efficientnet_b2")
    assert s.calibration_from_dir is not None
    dataset = s.calibration_from_dir(tmp_path)
    (sample,) = dataset.load()
    assert tuple(sample[0].shape) == (1, 3, 288, 288)
    assert "288x288" in dataset.identity()
    other = spec("mobilenet_v3_small").calibration_from_dir
    assert other is not None and other(tmp_path).identity() != dataset.identity()


def test_preprocessing_range_covers_normalised_pixels() -> None:
    prep = _imagenet.Preprocessing(224)
    assert prep.range == (-2.1179, 2.64)
