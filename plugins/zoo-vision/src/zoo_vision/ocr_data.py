"""The OCR models' data: text rendered in DejaVu Sans on plates over scikit-learn's sample photos
by ``scripts/make_ocr_data.py``, shipped as uint8 arrays with their truth in ``data/ocr/*.npz``.

Shipped rather than rendered at build time because JPEG decoding, FreeType and PIL's resampling
may change bytes between versions; what builds read is these files, checked against
:data:`SHA256`. Normalising to the models' inputs is torch arithmetic only (``x / 255``, ``- 0.5``,
``/ 0.5``), bit-identical on every CPU. Torch-free at import.
"""

from __future__ import annotations

import hashlib
from functools import cache
from pathlib import Path
from typing import Any

from zoo import BuildError, Dataset

FOLDER = Path(__file__).parent / "data" / "ocr"
DET_SIDE = 256
LINE_SHAPES = {"rec": (48, 320), "cls": (48, 192)}
COUNTS = {"det": (8, 32), "rec": (16, 48), "cls": (16, 48)}
"""(calibration, evaluation) items per model."""
SHA256 = {
    "det": "986a130a0571b71ccbc41cbb91ea99ebf590e3bbed2cec12c5242126ccd9a344",
    "rec": "1f6e4dccf79f8afb3d1dccf1a6fa6a90ea8d038017c6efdfc0ae4b09ae48b1cf",
    "cls": "289a88a060ef985bbc0e381e0ca6624df428d7eac86fe542a1cb7e9a6f8306d3",
}
SOURCE = ("text in DejaVu Sans (matplotlib's copy; Bitstream Vera licence) on light or dark plates over "
          "scikit-learn's sample photos china.jpg and flower.jpg (CC BY 2.0), rendered by "
          "plugins/zoo-vision/scripts/make_ocr_data.py and shipped as uint8 arrays")
NORMALISE = "(pixel / 255 - 0.5) / 0.5 in BGR order, as rapidocr feeds cv2's images"


def file_sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def path(kind: str) -> Path:
    return FOLDER / f"{kind}.npz"


def identity(kind: str, split: str) -> str:
    return f"zoo-vision-ocr:{kind}.npz:sha256:{SHA256[kind]};{split};{NORMALISE}"


@cache
def arrays(kind: str) -> dict[str, Any]:
    """The arrays of ``data/ocr/{kind}.npz``, refused unless the file is the one shipped."""
    import numpy as np

    file = path(kind)
    if not file.is_file():
        raise BuildError(f"zoo-vision: {file} is missing: reinstall zoo-vision (its package data holds data/ocr/*.npz)")
    digest = file_sha256(file)
    if digest != SHA256[kind]:
        raise BuildError(f"zoo-vision: {file} has sha256 {digest}, the pack expects {SHA256[kind]}: reinstall "
                         "zoo-vision, or if you regenerated it, update ocr_data.SHA256 and the measured figures")
    with np.load(file, allow_pickle=False) as data:
        return {name: data[name] for name in data.files}


def normalise(images: Any, widths: Any = None) -> Any:
    """(n, h, w, 3) uint8 RGB to (n, 3, h, w) float32 BGR in [-1, 1]; columns at or beyond each
    image's width (rapidocr's right padding) are 0."""
    import torch

    x = torch.from_numpy(images.copy()).permute(0, 3, 1, 2).flip(1).to(torch.float32)
    x = (x / 255.0 - 0.5) / 0.5
    if widths is not None:
        columns = torch.arange(x.shape[-1]).reshape(1, 1, 1, -1)
        x = torch.where(columns < torch.from_numpy(widths.astype("int64")).reshape(-1, 1, 1, 1), x, 0.0)
    return x.contiguous()


def inputs(kind: str, split: str) -> list[Any]:
    """Each item of a split as one (1, 3, h, w) input tensor."""
    data = arrays(kind)
    batch = normalise(data[split], None if kind == "det" else data[f"{split}_width"])
    return [batch[i : i + 1].clone() for i in range(batch.shape[0])]


def labels(kind: str) -> list[Any]:
    """The evaluation truth: det, each image's line boxes ``[(x1, y1, x2, y2, 0), ...]``;
    rec, each line's string; cls, 1 where the line is turned by 180°, else 0."""
    data = arrays(kind)
    if kind == "det":
        boxes, owner = data["evaluation_boxes"], data["evaluation_box_image"]
        return [[(*(float(v) for v in boxes[k]), 0) for k in range(len(owner)) if owner[k] == i]
                for i in range(data["evaluation"].shape[0])]
    if kind == "rec":
        return [str(t) for t in data["evaluation_text"]]
    return [int(v) for v in data["evaluation_label"]]


def describe(kind: str, split: str) -> str:
    count = COUNTS[kind][0 if split == "calibration" else 1]
    if kind == "det":
        what = f"{count} {DET_SIDE}×{DET_SIDE} photo crops with 1-4 text lines each (font sizes 16-36 px)"
    elif kind == "rec":
        what = f"{count} single-word lines resized to height 48, padded to width 320"
    else:
        what = f"{count} short-word lines at 48×192, every other one turned by 180°"
    return f"{what}: {SOURCE}; {NORMALISE}"


def calibration(kind: str) -> Dataset:
    return Dataset(COUNTS[kind][0], describe(kind, "calibration"), lambda: [(x,) for x in inputs(kind, "calibration")],
                   lambda: identity(kind, "calibration"))


def evaluation(kind: str, truth: str) -> Dataset:
    return Dataset(COUNTS[kind][1], f"{describe(kind, 'evaluation')}; truth: {truth}",
                   lambda: [((x,), y) for x, y in zip(inputs(kind, "evaluation"), labels(kind), strict=True)],
                   lambda: identity(kind, "evaluation"))
