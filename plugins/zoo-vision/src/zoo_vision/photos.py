"""scikit-learn's two sample photos (``china.jpg`` and ``flower.jpg``, 427×640 RGB) as calibration and
evaluation images: cut into tiles, or resized whole, cropped and mirrored.

Read with ``sklearn.datasets.load_sample_images`` when a model is built; registration only names
them, and their identity is the two files' sha256 (found without importing scikit-learn).
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
from functools import cache
from pathlib import Path
from typing import Any

from zoo import BuildError

FILES = ("china.jpg", "flower.jpg")
ORIGIN = "scikit-learn's sample images china.jpg and flower.jpg (CC BY 2.0, via scikit-learn, BSD-3-Clause)"
RESAMPLING = "torch's interpolate, bilinear, align_corners=False, antialias=True"


def paths() -> list[Path]:
    spec = importlib.util.find_spec("sklearn")
    for location in (spec.submodule_search_locations or []) if spec else []:
        found = [Path(location) / "datasets" / "images" / name for name in FILES]
        if all(p.is_file() for p in found):
            return found
    raise BuildError("zoo-vision: scikit-learn's sample photos (sklearn/datasets/images/china.jpg, flower.jpg) "
                     "are missing: install scikit-learn")


@cache
def identity() -> str:
    """The two files' digests and the JPEG decoder's version; hashlib only."""
    digests = ",".join(f"{p.name}:{hashlib.sha256(p.read_bytes()).hexdigest()}" for p in paths())
    return f"sklearn-sample-images:{digests};pillow {importlib.metadata.version('pillow')}"


@cache
def _photos() -> tuple[Any, ...]:
    """The photos as float32 (3, 427, 640) tensors in [0, 1]."""
    import torch
    from sklearn.datasets import load_sample_images

    images = load_sample_images().images
    return tuple(torch.from_numpy(image.copy()).permute(2, 0, 1).float().div(255.0) for image in images)


def _resize(image: Any, size: tuple[int, int]) -> Any:
    import torch

    return torch.nn.functional.interpolate(image[None], size=size, mode="bilinear", align_corners=False,
                                           antialias=True)[0].clamp(0.0, 1.0)


def tiles(side: int, count: int) -> list[Any]:
    """``count`` (3, side, side) tiles in [0, 1] of the full-resolution photos, evenly spread over
    every non-overlapping tile of both, in reading order."""
    every = [photo[:, y : y + side, x : x + side]
             for photo in _photos()
             for y in range(0, photo.shape[1] - side + 1, side)
             for x in range(0, photo.shape[2] - side + 1, side)]
    if count > len(every):
        raise BuildError(f"zoo-vision: the sample photos give {len(every)} tiles of {side}×{side}, not {count}")
    step = len(every) / count
    return [every[int(i * step)].clone() for i in range(count)]


VIEWS = "each photo whole, its left and right squares, and the mirror image of each: 12 images"


def views(height: int, width: int) -> list[Any]:
    """Twelve (3, height, width) images in [0, 1]: :data:`VIEWS`, resized."""
    out = []
    for photo in _photos():
        h, w = photo.shape[1:]
        for part in (photo, photo[:, :, :h], photo[:, :, w - h :]):
            image = _resize(part.contiguous(), (height, width))
            out += [image, image.flip(2).contiguous()]
    return out
