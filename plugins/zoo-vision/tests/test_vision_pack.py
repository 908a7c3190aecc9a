"""The vision pack (part A), fast tier: the lfw_subset snapshot and split, the anchor snapshot,
what the pack registers, that registering it stays light, and MTCNN's weight-file check."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from zoo_vision import mtcnn, resnet8, seg_tiny, ssdlite, vww, yolo_tiny

from tests.conftest import refusal_of_other_data, run_probed
from zoo import BuildError, Zoo
from zoo.datasets import lfw_subset as lfw

MODELS = {"vww-mobilenetv1-025": "visual-wake-words", "resnet8-cifar": "image-classification",
          "ssdlite320-mobilenetv3-large": "object-detection", "yolo-tiny-mcu": "object-detection",
          "seg-tiny-mcu": "semantic-segmentation", "mtcnn-pnet": "face-detection", "mtcnn-rnet": "face-detection", "mtcnn-onet": "face-detection"}


def test_the_snapshot_is_what_the_script_writes() -> None:
    # If this fails after a scikit-image upgrade: python scripts/snapshot_lfw.py,
    # then retrain (scripts/train_vww.py) and update vww.REFERENCE_TOP1.
    assert lfw.DATA.dumps(lfw.make_snapshot()) == lfw.SNAPSHOT.read_text()



def test_a_data_file_that_is_not_the_snapshots_is_refused_naming_both_digests(tmp_path: Path) -> None:
    found = hashlib.sha256(lfw.DATA.path().read_bytes()).hexdigest()
    text = refusal_of_other_data(lfw.DATA, tmp_path)
    assert f"{lfw.DATA.path()} has sha256 {found}, expected {'0' * 64}: refusing other bytes" in text, text
    assert "Install scikit-image==0.26.0, or regenerate the snapshot" in text, text


def test_the_pack_registers_its_models_with_tasks_metrics_and_weights(vision_zoo: Zoo) -> None:
    assert {n: vision_zoo.model(n).task for n in MODELS} == MODELS
    wake = vision_zoo.model("vww-mobilenetv1-025")
    assert wake.weights_names == ("lfw", "random") and wake.weights_variant(None).references() == {
        "top1": vww.REFERENCE_TOP1}
    assert "Labeled Faces in the Wild" in wake.weights_variant("lfw").licence
    assert vision_zoo.model("resnet8-cifar").metrics == ()
    assert vision_zoo.model("ssdlite320-mobilenetv3-large").weights_names == ("coco", "random")
    for name in ("ssdlite320-mobilenetv3-large", "mtcnn-pnet", "mtcnn-rnet", "mtcnn-onet"):
        (metric,) = vision_zoo.model(name).metrics
        assert metric.name == "recall50" and metric.unit_text == "%", name
    assert vision_zoo.model("mtcnn-onet").weights_names == ("random", "facenet")


@pytest.mark.stack
def test_every_spec_builds_a_model_that_takes_its_declared_input() -> None:
    import torch

    for spec in (vww.spec(), resnet8.spec(), ssdlite.spec(), yolo_tiny.spec(), seg_tiny.spec(),
                 *map(mtcnn.spec, mtcnn.NETS)):
        sample = spec.example_inputs()
        assert [tuple(t.shape) for t in sample] == [i.shape for i in spec.inputs], spec.name
        with torch.no_grad():
            out = spec.build("random")(*sample)
        for tensor in out if isinstance(out, tuple) else (out,):
            assert torch.isfinite(tensor).all() and float(tensor.std()) > 0, spec.name


@pytest.mark.stack
def test_the_detectors_find_boxes_and_score_themselves_perfectly() -> None:
    """The float model against its own boxes: recall 100 (the figure --verify records for float)."""
    import torch

    for spec in (ssdlite.spec(), mtcnn.spec("pnet"), mtcnn.spec("onet")):
        model = spec.build("random")
        items = spec.evaluation.load()[:3]  # type: ignore[union-attr]
        samples = [s for s, _ in items]
        with torch.no_grad():
            outputs = [list(o) if isinstance(o, tuple) else [o] for o in (model(*s) for s in samples)]
        assert spec.metrics[0].fn(outputs, [None] * 3, reference=outputs) == 100.0, spec.name  # type: ignore[call-arg]
        if spec.name == "mtcnn-onet":
            continue  # random O-Net barely moves its window: any perturbation finds the same box
        # Another model's outputs are not this one's boxes.
        other = spec.build("random")
        with torch.no_grad():
            for p in other.parameters():
                p.add_(torch.randn_like(p) * 0.5 * float(p.std() if p.numel() > 1 else 1.0))
            moved = [list(o) if isinstance(o, tuple) else [o] for o in (other(*s) for s in samples)]
        assert spec.metrics[0].fn(moved, [None] * 3, reference=outputs) < 100.0, spec.name  # type: ignore[call-arg]


def test_zoo_list_with_the_pack_imports_neither_torch_nor_numpy() -> None:
    probed = run_probed("list", "--json", watch=("torch", "numpy", "torchvision", "sklearn", "safetensors"))
    assert probed.returncode == 0, probed.stderr
    assert probed.loaded == []
    listed = {m["name"]: m["task"] for m in json.loads(probed.stdout)}
    assert {n: listed.get(n) for n in MODELS} == MODELS, "is zoo-vision installed?"


@pytest.mark.stack
def test_mtcnn_facenet_weights_without_the_folder_name_the_variable_and_random(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(mtcnn.WEIGHTS_ENV, raising=False)
    with pytest.raises(BuildError, match=f"{mtcnn.WEIGHTS_ENV}.*--weights random"):
        mtcnn.build("pnet", "facenet")


@pytest.mark.stack
def test_a_tampered_mtcnn_weights_file_is_refused_with_its_digest(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import torch

    # A real P-Net state dict, but not facenet's bytes.
    torch.save(mtcnn.network_classes()["pnet"]().state_dict(), tmp_path / "pnet.pt")
    monkeypatch.setenv(mtcnn.WEIGHTS_ENV, str(tmp_path))
    with pytest.raises(BuildError) as caught:
        mtcnn.build("pnet", "facenet")
    text = str(caught.value)
    assert "mtcnn-pnet" in text and mtcnn.NETS["pnet"].sha256 in text and "refusing other bytes" in text, text
    with pytest.raises(BuildError, match=r"rnet\.pt is missing; ZOO_MTCNN_WEIGHTS="):
        mtcnn.build("rnet", "facenet")


@pytest.mark.stack
@pytest.mark.skipif(not __import__("os").environ.get(mtcnn.WEIGHTS_ENV),
                    reason=f"{mtcnn.WEIGHTS_ENV} is not set (make setup fetches the weights, and make test sets it)")
def test_facenets_own_weights_load_and_tell_faces_from_non_faces() -> None:
    import torch

    model = mtcnn.build("onet", "facenet")
    images, labels = lfw.load("held_out", 48)
    with torch.no_grad():
        face = model(images)[2][:, 1]
    assert float(((face > 0.5).long() == labels).float().mean()) >= 0.9
