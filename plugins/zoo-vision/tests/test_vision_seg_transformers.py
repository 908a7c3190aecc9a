"""The vision pack's segmentation and transformer models, fast tier: the snapshot, what
registration declares (torch-free), the metric wrappers on hand-made outputs, the
upsampling rewrite, and the weights errors."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
from zoo_vision import agreement, photo_crops, seg_networks, segmentation, snapshot, transformers

from tests.conftest import run_probed
from zoo import BuildError, Zoo

SEGMENTERS = ("lraspp-mobilenetv3-large", "deeplabv3-mobilenetv3-large", "lraspp-mobilenetv3-large-nearest",
              "lraspp-mobilenetv3-large-convt", "deeplabv3-mobilenetv3-large-convt")
CLASSIFIERS = ("deit-tiny", "mobilevit-xs")
SCRIPT = Path(segmentation.__file__).resolve().parents[2] / "scripts" / "snapshot_vision.py"


@pytest.mark.stack
def test_the_snapshot_is_what_the_script_writes() -> None:
    # If this fails after a torchvision or timm upgrade: run the script, then read the diff.
    loaded = importlib.util.spec_from_file_location("snapshot_vision", SCRIPT)
    assert loaded is not None and loaded.loader is not None
    script = importlib.util.module_from_spec(loaded)
    loaded.loader.exec_module(script)
    assert script.dumps(script.snapshot()) == snapshot.SNAPSHOT.read_text(encoding="utf-8")


def test_zoo_list_registers_them_without_torch_timm_or_pil() -> None:
    probed = run_probed("list", "--json", watch=("torch", "torchvision", "timm", "numpy", "PIL", "executorch"))
    assert probed.returncode == 0, probed.stderr
    assert probed.loaded == []
    listed = {m["name"]: m["task"] for m in json.loads(probed.stdout)}
    wanted = {**dict.fromkeys(SEGMENTERS, "semantic-segmentation"), **dict.fromkeys(CLASSIFIERS, "image-classification")}
    assert {n: listed.get(n) for n in wanted} == wanted, "is zoo-vision installed? (make setup)"


def test_the_specs_declare_inputs_weights_and_metrics(vision_zoo: Zoo) -> None:
    for name in SEGMENTERS:
        spec = vision_zoo.model(name)
        (image,) = spec.inputs
        assert image.shape == (1, 3, 224, 224) and image.mean == photo_crops.IMAGENET_MEAN and image.std == photo_crops.IMAGENET_STD
        assert spec.weights_names == ("COCO_WITH_VOC_LABELS_V1", "random") and spec.default_weights == spec.weights_names[0]
        assert [m.name for m in spec.metrics] == ["miou"] and spec.num_labels == 21
        assert spec.evaluation is not None and spec.evaluation.size == 4 and spec.calibration.size == 16
        assert "520" in spec.description  # why not torchvision's own size
    assert "nearest" in vision_zoo.model("lraspp-mobilenetv3-large-nearest").description
    sides = {"deit-tiny": 224, "mobilevit-xs": 256}
    for name, side in sides.items():
        spec = vision_zoo.model(name)
        assert spec.inputs[0].shape == (1, 3, side, side) and [m.name for m in spec.metrics] == ["top1"]
        assert spec.num_labels == 1000 and spec.weights_names[-1] == "random"
    # Each library's own constants: timm's MobileViT takes [0, 1], DeiT ImageNet's normalisation.
    assert vision_zoo.model("mobilevit-xs").inputs[0].range == (0.0, 1.0)
    assert vision_zoo.model("deit-tiny").inputs[0].mean == photo_crops.IMAGENET_MEAN
    assert "nothing to re-estimate" in vision_zoo.model("deit-tiny").weights_variant("random").description
    assert "BatchNorm" in vision_zoo.model("mobilevit-xs").weights_variant("random").description


@pytest.mark.stack
def test_the_photo_tensors_follow_the_declared_preprocessing() -> None:
    prep = transformers.preprocessing(transformers.transformer("mobilevit-xs"))
    crops = photo_crops.crops(prep, "mobilevit-xs")
    mirrored = photo_crops.crops(prep, "mobilevit-xs", mirrored=True, count=1)
    assert len(crops) == photo_crops.CALIBRATION_SIZE and len(mirrored) == 2
    assert tuple(crops[0].shape) == (1, 3, 256, 256)
    assert float(crops[0].min()) >= 0.0 and float(crops[0].max()) <= 1.0
    assert bool((mirrored[0] == crops[0].flip(-1)).float().mean() > 0.95)  # the same crop, mirrored
    assert photo_crops.identity(prep, "m") != photo_crops.identity(prep, "m", mirrored=True)


def test_the_segmentation_metric_on_hand_made_masks() -> None:
    import numpy as np

    (metric,) = segmentation.spec(segmentation.network("lraspp-mobilenetv3-large")).metrics
    label = np.zeros((4, 4), dtype=np.int64)
    label[:, 2:] = 3
    scores = np.zeros((1, 21, 4, 4))
    scores[0, 0, :, :2] = scores[0, 3, :, 2:] = 1.0
    assert metric.fn([[scores]], [label]) == 100.0
    scores[0, 0, 0, 2] = 2.0  # one pixel of class 3 called background: IoU 8/9 and 7/8
    assert metric.fn([[scores]], [label]) == pytest.approx(100 * (8 / 9 + 7 / 8) / 2)


@pytest.mark.stack
def test_labels_are_the_float_models_own_answers() -> None:
    import torch

    class Fixed(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return x

    x = torch.zeros(1, 3, 2, 2)
    x[0, 2, 0, 0] = x[0, 1, 1, :] = 1.0
    (item,) = agreement.label_with_float(lambda variant: Fixed(), [x], "mask")
    assert item[0][0] is x and item[1].tolist() == [[2, 0], [1, 1]]
    (item,) = agreement.label_with_float(lambda variant: Fixed(), [torch.tensor([[0.1, 0.9, 0.3]])], "class")
    assert item[1] == 1
    with pytest.raises(ValueError, match="label kind"):
        agreement.label_with_float(lambda variant: Fixed(), [x], "boxes")


@pytest.mark.stack
@pytest.mark.parametrize("name", ["lraspp_mobilenet_v3_large", "deeplabv3_mobilenet_v3_large"])
def test_the_rewrite_changes_only_the_upsampling(name: str) -> None:
    import torch
    from torch.nn import functional as F

    network = seg_networks.random_init(name)
    model = seg_networks.logits_class()(network, "bilinear")
    rewrite = model._lraspp if "lraspp" in name else model._deeplab
    x = torch.randn(1, 3, 224, 224, generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        bilinear = model(x)
        # The rewrite's own code, still bilinear, is torchvision's forward: only the mode differs.
        assert torch.equal(rewrite(x), bilinear)
        nearest = seg_networks.logits_class()(network, "nearest")(x)
        as_steps = seg_networks.logits_class()(network, "transposed")
        transposed = as_steps(x)
        if "deeplab" in name:  # one upsampling, at the end: the rest must be exactly torchvision's
            coarse = network.classifier(network.backbone(x)["out"])
            assert torch.equal(nearest, F.interpolate(coarse, size=(224, 224), mode="nearest"))
            assert torch.equal(bilinear, F.interpolate(coarse, size=(224, 224), mode="bilinear", align_corners=False))
            assert torch.equal(transposed, as_steps._resize(coarse, (224, 224)))
    assert nearest.shape == transposed.shape == (1, 21, 224, 224)
    if "lraspp" in name:  # two upsamplings inside the head
        assert not torch.equal(nearest, bilinear)
        assert not torch.equal(transposed, bilinear)  # x8 and x16 as x2 steps: close, not equal


@pytest.mark.stack
def test_the_transposed_convolution_is_bilinear_upsampling_by_two() -> None:
    import torch
    from torch.nn import functional as F

    twice = seg_networks.logits_class()(seg_networks.random_init("lraspp_mobilenet_v3_large"), "transposed").twice
    x = torch.randn(1, 21, 14, 14, generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        assert torch.allclose(twice(x), F.interpolate(x, scale_factor=2, mode="bilinear"), atol=1e-6)


@pytest.mark.stack
def test_a_wrong_weights_file_is_refused_and_random_is_named(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("TORCH_HOME", str(tmp_path))
    entry = snapshot.data()["segmentation"]["lraspp_mobilenet_v3_large"]
    placed = tmp_path / "hub" / "checkpoints" / entry["url"].rsplit("/", 1)[1]
    placed.parent.mkdir(parents=True)
    placed.write_bytes(b"not the weights")
    net = segmentation.network("lraspp-mobilenetv3-large")
    with pytest.raises(BuildError, match=r"sha256 does not start with .*'--weights random'"):
        segmentation.build(net, entry["weights"])
    with pytest.raises(BuildError, match="no weights variant 'imagenet'"):
        segmentation.build(net, "imagenet")
    with pytest.raises(BuildError, match="no weights variant 'imagenet'"):
        transformers.build(transformers.transformer("deit-tiny"), "imagenet")


@pytest.mark.stack
def test_offline_the_pretrained_transformer_is_refused_naming_its_hub_id_and_the_remedy(monkeypatch: pytest.MonkeyPatch) -> None:
    import huggingface_hub.constants

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)  # as here, without the retries
    deit = transformers.transformer("deit-tiny")
    tag = snapshot.data()["transformers"][deit.timm_name]["tag"]
    with pytest.raises(BuildError, match=r"deit-tiny: cannot get timm's timm/deit_tiny_patch16_224.fb_in1k weights "
                                         r"from the Hugging Face Hub \(.*\); use '--weights random' offline"):
        transformers.build(deit, tag)
    with pytest.raises(KeyError, match="'vit-huge' is not a transformer of the vision pack"):
        transformers.transformer("vit-huge")
    with pytest.raises(KeyError, match="'unet' is not a segmentation model of the vision pack"):
        segmentation.network("unet")
