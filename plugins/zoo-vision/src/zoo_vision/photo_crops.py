"""scikit-learn's two sample photos (china.jpg, flower.jpg) as model inputs: fixed square
crops for calibration and their mirror images for evaluation, each preprocessed with one
library's constants. Torch-free at import: PIL and torch load when the data is."""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from zoo import BuildError, Dataset
from zoo_vision import photos

VERSION = "1"
"""Bump when the bytes of the tensors change."""

IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)
PHOTOS = photos.FILES
# (left, top, right, bottom) in the 640×427 photos: three full-height squares, four corner
# squares and a central one, so calibration sees whole scenes and close-ups.
BOXES = (
    (0, 0, 427, 427),
    (106, 0, 533, 427),
    (213, 0, 640, 427),
    (0, 0, 320, 320),
    (320, 0, 640, 320),
    (0, 107, 320, 427),
    (320, 107, 640, 427),
    (200, 100, 440, 340),
)
CALIBRATION_SIZE = len(PHOTOS) * len(BOXES)


@dataclass(frozen=True)
class Preprocessing:
    """A square RGB crop resized to ``side`` with PIL's ``interpolation`` filter, scaled to
    [0, 1], then normalised with ``mean`` and ``std`` (the library's own constants)."""

    side: int
    mean: tuple[float, ...] = IMAGENET_MEAN
    std: tuple[float, ...] = IMAGENET_STD
    interpolation: str = "bilinear"

    @property
    def range(self) -> tuple[float, float]:
        pairs = list(zip(self.mean, self.std, strict=True))
        return (round(min(-m / s for m, s in pairs), 4), round(max((1 - m) / s for m, s in pairs), 4))

    def describe(self) -> str:
        return (f"RGB, PIL {self.interpolation} resize to {self.side}x{self.side}, /255, "
                f"mean={self.mean}, std={self.std}")

    def to_tensor(self, image: Any) -> Any:
        """A square PIL image as a (1, 3, side, side) float32 tensor."""
        import torch
        from PIL import Image

        side = self.side
        rgb = image.convert("RGB").resize((side, side), Image.Resampling[self.interpolation.upper()])
        pixels = torch.frombuffer(bytearray(rgb.tobytes()), dtype=torch.uint8)
        x = pixels.reshape(side, side, 3).permute(2, 0, 1).to(torch.float32) / 255.0
        mean = torch.tensor(self.mean).reshape(3, 1, 1)
        std = torch.tensor(self.std).reshape(3, 1, 1)
        return ((x - mean) / std).unsqueeze(0).contiguous()


def photo_paths(model: str) -> tuple[Path, ...]:
    """The photos inside the installed scikit-learn (``photos.paths``), found without importing it."""
    try:
        return tuple(photos.paths())
    except BuildError:
        raise BuildError(f"{model}: scikit-learn's sample photos ({', '.join(PHOTOS)}) are not installed; "
                         "pip install scikit-learn") from None


@cache
def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def crops(prep: Preprocessing, model: str, mirrored: bool = False, count: int | None = None) -> list[Any]:
    """The first ``count`` crops of each photo (all of them: None), mirrored left to right
    if asked, as tensors: calibration uses the crops, evaluation their mirror images."""
    from PIL import Image

    out: list[Any] = []
    for path in photo_paths(model):
        with Image.open(path) as image:
            image.load()
            for box in BOXES[:count]:
                if box[2] > image.size[0] or box[3] > image.size[1]:
                    raise BuildError(f"{model}: crop {box} does not fit {path} ({image.size}); update BOXES")
                square = image.crop(box)
                out.append(prep.to_tensor(square.transpose(Image.Transpose.FLIP_LEFT_RIGHT) if mirrored else square))
    return out


def identity(prep: Preprocessing, model: str, mirrored: bool = False, count: int | None = None) -> str:
    files = ",".join(f"{p.name}:{_sha256(p)}" for p in photo_paths(model))
    return (f"sklearn-photos:{files};boxes={BOXES[:count]};mirrored={mirrored};{prep.describe()};"
            f"pillow={importlib.metadata.version('pillow')};zoo-vision-photos={VERSION}")


def calibration(prep: Preprocessing, model: str) -> Dataset:
    """Every crop of both photos, prepared by ``prep``: a model's calibration set."""
    return Dataset(
        size=CALIBRATION_SIZE,
        description=(f"{CALIBRATION_SIZE} fixed square crops of scikit-learn's two sample photos "
                     f"({' and '.join(PHOTOS)}), {prep.describe()}"),
        load=lambda: [(x,) for x in crops(prep, model)],
        identity=lambda: identity(prep, model),
    )

