"""``ppocr-det``, ``ppocr-rec``, ``ppocr-cls``: PaddleOCR's PP-OCRv4 text detector and recogniser
and its text direction classifier, from the ONNX files that rapidocr-onnxruntime 1.4.4 ships,
read by ``zoo.read_onnx`` at fixed shapes.

rapidocr's package imports cv2, so it is never imported: its ``models/`` folder is found with
``importlib.util.find_spec``. Each file must have the sha256 below. The NPU runs the networks;
the CPU normalises the image and decodes the outputs (``ocr_decode``).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from zoo import (
    BuildError,
    InputSpec,
    Metric,
    ModelSpec,
    WeightsVariant,
    checked_file,
    ctc_greedy,
    package_file,
    precision_at,
    reader_identity,
    recall_at,
    top1,
)
from zoo_vision import ocr_data, ocr_decode

VERSION = "1"
PACKAGE = "rapidocr_onnxruntime"
INSTALL = "pip install --no-deps rapidocr-onnxruntime==1.4.4"
LICENCE = "Apache-2.0 (PaddleOCR's weights, converted to ONNX by RapidAI/RapidOCR)"
CPU_PART = ("The CPU resizes and normalises the image ((pixel / 255 - 0.5) / 0.5, BGR) and decodes the output: "
            "{}; the NPU runs the network.")


@dataclass(frozen=True)
class Net:
    name: str
    file: str
    sha256: str
    shape: tuple[int, int, int, int]
    task: str
    output: str
    decoding: str


NETS = {
    "det": Net("ppocr-det", "ch_PP-OCRv4_det_infer.onnx",
               "d2a7720d45a54257208b1e13e36a8479894cb74155a5efe29462512d42f49da9", (1, 3, 256, 256),
               "text-detection", "probability",
               "DB post-processing (threshold 0.3, box score 0.5, unclip ratio 1.6) on the (1, 1, 256, 256) "
               "text probability map, to axis-aligned boxes"),
    "rec": Net("ppocr-rec", "ch_PP-OCRv4_rec_infer.onnx",
               "48fc40f24f6d2a207a2b1091d3437eb3cc3eb6b676dc3ef9c37384005483683b", (1, 3, 48, 320),
               "text-recognition", "characters",
               "CTC greedy decoding of the (1, 40, 6625) softmax with the dictionary in the file's metadata "
               "(class 0 the blank, the last a space)"),
    "cls": Net("ppocr-cls", "ch_ppocr_mobile_v2.0_cls_infer.onnx",
               "e47acedf663230f8863ff1ab0e64dd2d82b838fceb5957146dab185a89d6215c", (1, 3, 48, 192),
               "text-direction", "direction",
               "the argmax of the (1, 2) softmax: 0°, or 180° (turn the line before recognising it)"),
}
DESCRIPTIONS = {
    "det": "PP-OCRv4 mobile text detector (DB, PPLCNetV3 backbone) at 256×256, a multiple of its stride 32",
    "rec": "PP-OCRv4 mobile text recogniser (SVTR-LCNet, CTC over 6,623 characters) on lines of 48×320",
    "cls": "PaddleOCR's mobile v2.0 text direction classifier (0° or 180°) on lines of 48×192",
}
TRUTH = {
    "det": "the rendered lines' ink boxes (PIL textbbox)",
    "rec": "the rendered word",
    "cls": "whether the line was turned by 180°",
}
FLOAT = {"det": {"recall50": 89.87, "precision50": 82.56}, "rec": {"char_accuracy": 100.0}, "cls": {"top1": 97.92}}
"""The float models' figures on the shipped evaluation data, measured with onnxruntime 1.32."""
MAX_DROP = {"recall50": 10.0, "precision50": 10.0, "char_accuracy": 8.0, "top1": 5.0}
"""About twice what int8 lost on u85-256 (det: recall 3.8, precision -0.4 pp; rec: 3.6 pp) and u55-128
(cls: 0 pp, where one line is 2.1 pp)."""


def models_dir() -> Path:
    """rapidocr's models folder, found without importing the package (its __init__ needs cv2)."""
    return package_file(PACKAGE, "models", owner="zoo-vision", remedy=(
        f"the PP-OCR models come from rapidocr-onnxruntime; install it without its dependencies (opencv and "
        f"others, not needed here): {INSTALL}"))


def onnx_path(key: str) -> Path:
    """One model's ONNX file, refused unless it has the expected sha256."""
    net = NETS[key]
    return checked_file(models_dir() / net.file, net.sha256, owner=net.name,
                        remedy=f"not rapidocr-onnxruntime 1.4.4's {net.file}; reinstall it: {INSTALL}")


def build(key: str, variant: str) -> Any:
    import zoo

    net = NETS[key]
    if variant != "rapidocr":
        raise BuildError(f"{net.name} has no weights variant {variant!r}; choose rapidocr")
    return zoo.read_onnx(onnx_path(key), {"x": net.shape}).eval()


@cache
def characters() -> tuple[str, ...]:
    """The recogniser's dictionary, from its ONNX metadata (key ``character``, one per line)."""
    import onnx

    model = onnx.load(str(onnx_path("rec")), load_external_data=False)
    for prop in model.metadata_props:
        if prop.key == "character":
            return tuple(prop.value.split("\n"))
    raise BuildError(f"ppocr-rec: {onnx_path('rec')} has no 'character' metadata; {INSTALL}")


def read_text(sample_outputs: Any) -> str:
    """A line's text: CTC greedy decoding, then the line's outer spaces dropped (they carry no text)."""
    return str(ctc_greedy(ocr_decode.alphabet(characters()))(sample_outputs)).strip()


def metrics(key: str) -> tuple[Metric, ...]:
    where = f"the {ocr_data.COUNTS[key][1]} shipped evaluation {'images' if key == 'det' else 'lines'}"
    if key == "det":
        return (
            Metric("recall50", recall_at(ocr_decode.decode_det, 0.5), higher_is_better=True,
                   max_drop=MAX_DROP["recall50"], description=f"true line boxes found at IoU ≥ 0.5 on {where}"),
            Metric("precision50", precision_at(ocr_decode.decode_det, 0.5), higher_is_better=True,
                   max_drop=MAX_DROP["precision50"], description=f"decoded boxes that are a true line at IoU ≥ 0.5 "
                   f"on {where}"),
        )
    if key == "rec":
        return (Metric("char_accuracy", ocr_decode.char_accuracy(read_text), higher_is_better=True,
                       max_drop=MAX_DROP["char_accuracy"],
                       description=f"1 - edit distance / length, summed over {where}"),)
    return (Metric("top1", top1, higher_is_better=True, max_drop=MAX_DROP["top1"],
                   description=f"0° or 180° called right on {where}, half turned"),)


def spec(key: str) -> ModelSpec:
    net = NETS[key]
    return ModelSpec(
        name=net.name,
        version=VERSION,
        description=f"{DESCRIPTIONS[key]}. {CPU_PART.format(net.decoding)}",
        task=net.task,
        inputs=(InputSpec("image", net.shape, "float32", range=(-1.0, 1.0), mean=(0.5,) * 3, std=(0.5,) * 3),),
        outputs=(net.output,),
        build=lambda variant: build(key, variant),
        example_inputs=lambda: (ocr_data.inputs(key, "calibration")[0],),
        calibration=ocr_data.calibration(key),
        evaluation=ocr_data.evaluation(key, TRUTH[key]),
        weights=(WeightsVariant(
            name="rapidocr",
            description=(f"{net.file} from rapidocr-onnxruntime 1.4.4's models/ folder, checked against its sha256; "
                         "declared: its float figures on the shipped data (onnxruntime and zoo.read_onnx agree)"),
            origin=f"rapidocr-onnxruntime 1.4.4 on PyPI ({INSTALL}), converted from PaddleOCR's inference models",
            licence=LICENCE,
            identity=lambda: f"sha256:{net.sha256};{reader_identity()}",
            reference=FLOAT[key],
        ),),
        metrics=metrics(key),
        labels=("0", "180") if key == "cls" else None,
        default_weights="rapidocr",
        layouts=("nchw", "nhwc"),
    )
