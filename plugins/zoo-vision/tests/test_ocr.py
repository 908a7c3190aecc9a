"""The PP-OCR models: the shipped data and its truth, the CPU decoders on hand-made outputs, the
errors when rapidocr-onnxruntime is missing or altered, and (stack tier) the float models read by
zoo.read_onnx scoring what the pack declares, and matching onnxruntime."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from zoo_vision import ocr_data, ocr_decode, ppocr

from zoo import BuildError, Zoo, ctc_greedy, precision_at, reader_identity, recall_at


def rapidocr_models() -> Path:
    try:
        return ppocr.models_dir()
    except BuildError:
        pytest.skip("rapidocr-onnxruntime is not installed: pip install --no-deps rapidocr-onnxruntime==1.4.4")


def test_the_shipped_data_is_what_the_pack_expects() -> None:
    # If this fails after running scripts/make_ocr_data.py: update ocr_data.SHA256 and ppocr.FLOAT.
    sizes = {kind: ocr_data.path(kind).stat().st_size for kind in ocr_data.SHA256}
    assert {kind: ocr_data.file_sha256(ocr_data.path(kind)) for kind in sizes} == ocr_data.SHA256
    assert sum(sizes.values()) < 2.1e6, sizes
    for kind, (calibration, evaluation) in ocr_data.COUNTS.items():
        data = ocr_data.arrays(kind)
        side = (ocr_data.DET_SIDE, ocr_data.DET_SIDE) if kind == "det" else ocr_data.LINE_SHAPES[kind]
        assert data["calibration"].shape == (calibration, *side, 3) and data["calibration"].dtype == np.uint8
        assert data["evaluation"].shape == (evaluation, *side, 3) and data["evaluation"].dtype == np.uint8
        assert len(ocr_data.labels(kind)) == evaluation


def test_the_truth_is_well_formed() -> None:
    boxes = ocr_data.labels("det")
    assert all(1 <= len(lines) <= 4 for lines in boxes)
    assert all(0 <= b[0] < b[2] <= ocr_data.DET_SIDE and 0 <= b[1] < b[3] <= ocr_data.DET_SIDE
               for lines in boxes for b in lines)
    words = ocr_data.labels("rec")
    assert all(w.isalnum() and w.isascii() for w in words)
    widths = ocr_data.arrays("rec")["evaluation_width"]
    assert bool((widths <= 320).all()) and int(ocr_data.arrays("rec")["evaluation"][0, :, widths[0]:].max()) == 0
    assert ocr_data.labels("cls") == [i % 2 for i in range(ocr_data.COUNTS["cls"][1])]


def test_a_data_file_with_other_bytes_is_refused(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    shipped = ocr_data.path("cls").read_bytes()
    (tmp_path / "cls.npz").write_bytes(shipped[:-1] + bytes([shipped[-1] ^ 1]))
    monkeypatch.setattr(ocr_data, "FOLDER", tmp_path)
    ocr_data.arrays.cache_clear()
    try:
        with pytest.raises(BuildError, match="expects " + ocr_data.SHA256["cls"]):
            ocr_data.arrays("cls")
    finally:
        ocr_data.arrays.cache_clear()


def test_every_truth_character_is_in_the_recognisers_dictionary() -> None:
    rapidocr_models()
    characters = set(ppocr.characters())
    assert len(ppocr.characters()) + 2 == 6625  # the blank and the space around the dictionary
    assert set("".join(ocr_data.labels("rec"))) <= characters


def test_db_boxes_on_a_hand_made_probability_map() -> None:
    prob = np.zeros((1, 1, 64, 128))
    prob[0, 0, 10:20, 20:80] = 0.9  # a text line
    prob[0, 0, 40:50, 10:30] = 0.4  # above the pixel threshold, below the box score
    prob[0, 0, 55:57, 60:120] = 0.95  # two pixels tall: too thin
    prob[0, 0, 30:36, 100:112] = 1.0  # a short word
    found = ocr_decode.db_boxes(prob)
    # The line's dilated component is 61×11 pixel centres apart by 60×10: grown by 600·1.6/140 = 6.86
    # each side, scored by its 600 pixels of 0.9 over 11·61; the word's by 72·1.6/36 = 3.2, 72 / 91.
    assert [b[:4] for b in found] == [(13, 3, 87, 27), (97, 27, 115, 39)]
    assert [b[4] for b in found] == pytest.approx([540 / 671, 72 / 91])
    assert ocr_decode.db_boxes(prob, box_thresh=0.3)[-1][:5] == pytest.approx((5, 35, 35, 55, 80 / 231))
    assert ocr_decode.db_boxes(np.zeros((8, 8))) == []


def test_detection_recall_and_precision_on_hand_made_boxes() -> None:
    truth = [[(0.0, 0.0, 10.0, 10.0, 0), (20.0, 20.0, 30.0, 30.0, 0)]]
    decode = lambda outputs: outputs[0]  # noqa: E731
    half = [[[(0, 0, 10, 10, 0.9, 0), (0, 0, 10, 10, 0.8, 0), (50, 50, 60, 60, 0.7, 0)]]]
    assert recall_at(decode)(half, truth) == 50.0
    assert precision_at(decode)(half, truth) == pytest.approx(100 / 3)  # a duplicate claims nothing
    assert precision_at(decode)([[[]]], truth) == 0.0


def test_ctc_greedy_decoding_and_character_accuracy() -> None:
    classes = ocr_decode.alphabet(["a", "b", "c"])
    assert classes == ["<blank>", "a", "b", "c", " "]
    frames = [0, 1, 1, 0, 1, 2, 4, 3, 3, 0]
    scores = np.eye(len(classes))[frames][None]
    decode = ctc_greedy(classes)
    assert decode([scores]) == "aab c"
    accuracy = ocr_decode.char_accuracy(lambda outputs: decode(outputs).strip())
    assert accuracy([[scores]], ["aab c"]) == 100.0
    assert accuracy([[scores], [scores]], ["aabxc", "ab"]) == pytest.approx(100 * (1 - (1 + 3) / 7))


def test_the_pack_registers_the_three_models(vision_zoo: Zoo) -> None:
    tasks = {name: vision_zoo.model(name).task for name in ("ppocr-det", "ppocr-rec", "ppocr-cls")}
    assert tasks == {"ppocr-det": "text-detection", "ppocr-rec": "text-recognition", "ppocr-cls": "text-direction"}
    for key, net in ppocr.NETS.items():
        spec = vision_zoo.model(net.name)
        assert spec.inputs[0].shape == net.shape and "CPU" in spec.description
        assert spec.weights_variant(None).identity() == f"sha256:{net.sha256};{reader_identity()}"
        assert [m.name for m in spec.metrics] == list(ppocr.FLOAT[key])
        assert ocr_data.SHA256[key] in spec.calibration.identity() and ocr_data.SHA256[key] in spec.evaluation.identity()  # type: ignore[union-attr]


def test_missing_rapidocr_names_the_package_and_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ppocr, "PACKAGE", "no_such_package_for_zoo_tests")
    for key in ppocr.NETS:
        with pytest.raises(BuildError, match="rapidocr-onnxruntime") as raised:
            ppocr.spec(key).build("rapidocr")
        assert "pip install --no-deps rapidocr-onnxruntime==1.4.4" in str(raised.value)


def test_an_altered_onnx_file_is_refused(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    (tmp_path / ppocr.NETS["cls"].file).write_bytes(b"not the model")
    monkeypatch.setattr(ppocr, "models_dir", lambda: tmp_path)
    with pytest.raises(BuildError, match=ppocr.NETS["cls"].sha256):
        ppocr.build("cls", "rapidocr")
    with pytest.raises(BuildError, match="choose rapidocr"):
        ppocr.build("cls", "random")


def float_outputs(key: str) -> list[list[object]]:
    import torch

    model = ppocr.build(key, "rapidocr")
    with torch.no_grad():
        return [[model(x)] for x in ocr_data.inputs(key, "evaluation")]


@pytest.mark.stack
@pytest.mark.parametrize("key", list(ppocr.NETS))
def test_the_float_models_score_what_the_pack_declares(key: str) -> None:
    rapidocr_models()
    outputs = float_outputs(key)
    measured = {m.name: round(m.fn(outputs, ocr_data.labels(key)), 2) for m in ppocr.spec(key).metrics}
    assert measured == ppocr.FLOAT[key]


@pytest.mark.stack
@pytest.mark.parametrize("key", list(ppocr.NETS))
def test_read_onnx_matches_onnxruntime(key: str) -> None:
    ort = pytest.importorskip("onnxruntime", reason="onnxruntime (a dev dependency) runs the ONNX files as reference")
    rapidocr_models()
    session = ort.InferenceSession(str(ppocr.onnx_path(key)))
    inputs = ocr_data.inputs(key, "evaluation")[:4]
    for x, (ours,) in zip(inputs, float_outputs(key)[:4], strict=True):
        theirs = session.run(None, {"x": x.numpy()})[0]
        assert ours.shape == theirs.shape  # type: ignore[attr-defined]
        np.testing.assert_allclose(ours.numpy(), theirs, atol=1e-4, rtol=1e-4)  # type: ignore[attr-defined]
