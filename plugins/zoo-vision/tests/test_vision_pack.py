"""The vision pack (part A), fast tier: the lfw_subset snapshot and split, the anchor snapshot,
what the pack registers, that registering it stays light, and MTCNN's weight-file check."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from zoo_vision import lfw, mtcnn, resnet8, ssdlite, vww, yolo_tiny

from tests.conftest import run_probed
from zoo import BuildError, Zoo

MODELS = {"vww-mobilenetv1-025": "visual-wake-words", "resnet8-cifar": "image-classification",
          "ssdlite320-mobilenetv3-large": "object-detection", "yolo-tiny-mcu": "object-detection",
          "mtcnn-pnet": "face-detection", "mtcnn-rnet": "face-detection", "mtcnn-onet": "face-detection"}


def test_the_snapshot_is_what_the_script_writes() -> None:
    # If this fails after a scikit-image upgrade: python plugins/zoo-vision/scripts/snapshot_lfw.py,
    # then retrain (scripts/train_vww.py) and update vww.REFERENCE_TOP1.
    assert lfw.dumps(lfw.make_snapshot()) == lfw.SNAPSHOT.read_text()



def test_a_data_file_that_is_not_the_snapshots_is_refused_naming_both_digests(monkeypatch: pytest.MonkeyPatch) -> None:
    real = hashlib.sha256(lfw.data_path().read_bytes()).hexdigest()
    monkeypatch.setattr(lfw, "snapshot", lambda: {**json.loads(lfw.SNAPSHOT.read_text()), "sha256": "0" * 64})
    lfw.checked_path.cache_clear()
    try:
        with pytest.raises(BuildError) as caught:
            lfw.checked_path()
    finally:
        lfw.checked_path.cache_clear()
    assert f"{lfw.data_path()} has sha256 {real}, expected {'0' * 64}: refusing other bytes" in str(caught.value)
    assert "Install scikit-image==0.26.0, or regenerate the snapshot" in str(caught.value)

def test_the_split_is_stratified_and_follows_the_crops_bytes_not_their_order() -> None:
    import numpy as np

    crops = np.load(lfw.data_path())
    split = lfw.split_of([c.tobytes() for c in crops])
    assert {k: len(v) for k, v in split.items()} == {"held_out": 40, "train": 160, "calibration": 32}
    assert sorted(split["held_out"] + split["train"]) == list(range(200))
    assert set(split["calibration"]) <= set(split["train"])
    for part in split.values():
        faces = sum(lfw.label_of(i) for i in part)
        assert faces * 2 == len(part)  # half faces in every part
    # Reversed within each class, the same crops land in the same parts.
    order = [*range(99, -1, -1), *range(199, 99, -1)]
    again = lfw.split_of([crops[i].tobytes() for i in order])
    for name, part in split.items():
        assert {crops[order[i]].tobytes() for i in again[name]} == {crops[i].tobytes() for i in part}


@pytest.mark.stack
def test_loaded_crops_have_the_declared_shape_and_range() -> None:
    images, labels = lfw.load("held_out")
    assert tuple(images.shape) == (40, 3, 96, 96) and labels.tolist().count(1) == 20
    assert float(images.min()) >= -1.0 and float(images.max()) <= 1.0
    assert bool((images[:, 0] == images[:, 2]).all())  # grey on three channels
    small, _ = lfw.load("held_out", 24)
    assert tuple(small.shape) == (40, 3, 24, 24)


@pytest.mark.stack
def test_the_anchor_snapshot_is_torchvisions() -> None:
    stored = json.loads(ssdlite.ANCHORS.read_text())
    assert stored["anchors"] == ssdlite.generate_anchors() and len(stored["anchors"]) == 3234


def test_the_pack_registers_its_models_with_tasks_metrics_and_weights(vision_zoo: Zoo) -> None:
    assert {n: vision_zoo.model(n).task for n in MODELS} == MODELS
    wake = vision_zoo.model("vww-mobilenetv1-025")
    assert wake.weights_names == ("lfw", "random") and wake.weights_variant(None).references() == {
        "top1": vww.REFERENCE_TOP1}
    assert "Labeled Faces in the Wild" in wake.weights_variant("lfw").licence
    assert vision_zoo.model("resnet8-cifar").metrics == ()
    assert vision_zoo.model("ssdlite320-mobilenetv3-large").weights_names == ("coco", "random")
    for name in ("ssdlite320-mobilenetv3-large", "yolo-tiny-mcu", "mtcnn-pnet", "mtcnn-rnet", "mtcnn-onet"):
        (metric,) = vision_zoo.model(name).metrics
        assert metric.name == "recall50" and metric.unit_text == "%", name
    assert vision_zoo.model("mtcnn-onet").weights_names == ("random", "facenet")


@pytest.mark.stack
def test_every_spec_builds_a_model_that_takes_its_declared_input() -> None:
    import torch

    for spec in (vww.spec(), resnet8.spec(), ssdlite.spec(), yolo_tiny.spec(), *map(mtcnn.spec, mtcnn.NETS)):
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

    for spec in (ssdlite.spec(), yolo_tiny.spec(), mtcnn.spec("pnet"), mtcnn.spec("onet")):
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
