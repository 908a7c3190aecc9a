"""Images for ImageNet classifiers: the built-in calibration crops, a user's folder
of images, and the preprocessing both share. Torch-free until data is loaded."""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from zoo import BuildError, Dataset, MissingExtraError
from zoo.plugins._image_folder import (
    SIXTEEN_BIT,
    eight_bit,
    file_sha256,
    image_folder,
    pillow_version,
)

VERSION = "1"
"""Bump when the bytes of the calibration tensors change."""

IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)

SAMPLE_IMAGES = ("china.jpg", "flower.jpg")
# (left, top, right, bottom) in the 640×427 sample photos: three full-height
# squares, four corner squares and one central square, so the calibration sees
# both whole scenes and close-ups.
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
CALIBRATION_SIZE = len(SAMPLE_IMAGES) * len(BOXES)
MAX_DIR_IMAGES = 1000


@dataclass(frozen=True)
class Preprocessing:
    """A square RGB crop resized to ``side`` with PIL's ``interpolation`` filter,
    scaled to [0, 1], then normalised with ``mean`` and ``std``."""

    side: int
    mean: tuple[float, ...] = IMAGENET_MEAN
    std: tuple[float, ...] = IMAGENET_STD
    interpolation: str = "bilinear"
    """torchvision's InterpolationMode value, which names a PIL filter: bilinear, bicubic, …"""

    @property
    def range(self) -> tuple[float, float]:
        """The value range of a normalised image."""
        pairs = list(zip(self.mean, self.std, strict=True))
        return (round(min(-m / s for m, s in pairs), 4), round(max((1 - m) / s for m, s in pairs), 4))

    def describe(self) -> str:
        return (
            f"RGB, PIL {self.interpolation} resize to {self.side}x{self.side}, /255, "
            f"mean={self.mean}, std={self.std}"
        )

    def to_tensor(self, image: Any) -> Any:
        """A PIL image, already cropped to a square, as a (1,3,side,side) float32 tensor."""
        import torch
        from PIL import Image

        side = self.side
        resample = Image.Resampling[self.interpolation.upper()]
        rgb = eight_bit(image).convert("RGB").resize((side, side), resample)
        pixels = torch.frombuffer(bytearray(rgb.tobytes()), dtype=torch.uint8)
        x = pixels.reshape(side, side, 3).permute(2, 0, 1).to(torch.float32) / 255.0
        mean = torch.tensor(self.mean).reshape(3, 1, 1)
        std = torch.tensor(self.std).reshape(3, 1, 1)
        return ((x - mean) / std).unsqueeze(0).contiguous()


def sample_image_paths(model: str) -> tuple[Path, ...]:
    spec = importlib.util.find_spec("sklearn")
    for location in (spec.submodule_search_locations or []) if spec else []:
        folder = Path(location) / "datasets" / "images"
        paths = tuple(folder / name for name in SAMPLE_IMAGES)
        if all(p.is_file() for p in paths):
            return paths
    raise MissingExtraError(f"the {model} model's calibration images (scikit-learn's sample photos)")


# --- built-in calibration: crops of scikit-learn's two sample photos -------------------


def _sample_crops(prep: Preprocessing, model: str) -> list[tuple[Any, ...]]:
    from PIL import Image

    samples: list[tuple[Any, ...]] = []
    for path in sample_image_paths(model):
        with Image.open(path) as image:
            image.load()
            for box in BOXES:
                if box[2] > image.size[0] or box[3] > image.size[1]:
                    raise BuildError(f"{model}: crop {box} does not fit {path} ({image.size}); update BOXES")
                samples.append((prep.to_tensor(image.crop(box)),))
    return samples


def _sample_identity(prep: Preprocessing, model: str) -> str:
    files = ",".join(f"{p.name}:{file_sha256(p)}" for p in sample_image_paths(model))
    return (
        f"sklearn-images:{files};boxes={BOXES};{prep.describe()};pillow={pillow_version()};"
        f"zoo-imagenet={VERSION}"
    )


def sample_calibration(prep: Preprocessing, model: str) -> Dataset:
    """Sixteen fixed crops of scikit-learn's two sample photos, preprocessed with ``prep``."""
    return Dataset(
        size=CALIBRATION_SIZE,
        description=(
            f"{CALIBRATION_SIZE} fixed crops of scikit-learn's two sample photos "
            f"({' and '.join(SAMPLE_IMAGES)}, CC BY 2.0), resized to {prep.side}"
        ),
        load=lambda: _sample_crops(prep, model),
        identity=lambda: _sample_identity(prep, model),
    )


# --- a user's folder of images ----------------------------------------------------------


def _center_square(image: Any) -> Any:
    width, height = image.size
    side = min(width, height)
    left, top = (width - side) // 2, (height - side) // 2
    return image.crop((left, top, left + side, top + side))


def _load_image(path: Path, prep: Preprocessing) -> Any:
    from PIL import Image

    with Image.open(path) as image:
        image.load()
        return prep.to_tensor(_center_square(image))


def calibration_from_dir(directory: Path, prep: Preprocessing, model: str) -> Dataset:
    """Every *.jpg/*.jpeg/*.png under ``directory`` (first 1000 by relative path),
    center-cropped to a square and preprocessed with ``prep``."""
    return image_folder(
        directory, model=model, decode=lambda path: _load_image(path, prep), limit=MAX_DIR_IMAGES,
        preprocessing=f"center square crop, {SIXTEEN_BIT}, {prep.describe()}, zoo-imagenet={VERSION}",
    )
