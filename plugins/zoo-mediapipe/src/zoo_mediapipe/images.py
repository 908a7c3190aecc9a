"""scikit-image's sample photos and textures (``skimage/data/*.png``), found without importing
skimage, checked by sha256 (scikit-image 0.26.0's files) and decoded with Pillow. PNG only, so
that no JPEG decoder's version changes a pixel. Module level is torch- and numpy-free."""

from __future__ import annotations

import hashlib
from functools import cache
from pathlib import Path
from typing import Any

import zoo

__all__ = ["DIGESTS", "PHOTOS", "identity", "load", "mirrored", "photos_text", "resized"]

OWNER = "zoo-mediapipe"
DIGESTS = {
    "astronaut.png": "88431cd9653ccd539741b555fb0a46b61558b301d4110412b5bc28b5e3ea6cb5",
    "brick.png": "7966caf324f6ba843118d98f7a07746d22f6a343430add0233eca5f6eaaa8fcf",
    "camera.png": "b0793d2adda0fa6ae899c03989482bff9a42d3d5690fc7e3648f2795d730c23a",
    "chelsea.png": "596aa1e7cb875eb79f437e310381d26b338a81c2da23439704a73c4651e8c4bb",
    "coffee.png": "cc02f8ca188b167c775a7101b5d767d1e71792cf762c33d6fa15a4599b5a8de7",
    "coins.png": "f8d773fc9cfa6f4d8e5942dc34d0a0788fcaed2a4fefbbed0aef5398d7ef4cba",
    "grass.png": "b6b6022426b38936c43a4ac09635cd78af074e90f42ffa8227ac8b7452d39f89",
    "gravel.png": "c48615b451bf1e606fbd72c0aa9f8cc0f068ab7111ef7d93bb9b0f2586440c12",
    "moon.png": "78739619d11f7eb9c165bb5d2efd4772cee557812ec847532dbb1d92ef71f577",
    "motorcycle_left.png": "db18e9c4157617403c3537a6ba355dfeafe9a7eabb6b9b94cb33f6525dd49179",
}
PHOTOS = ("astronaut.png", "camera.png", "chelsea.png", "coffee.png", "coins.png", "motorcycle_left.png")
"""The photos the detectors, the landmark networks and the selfie segmenter calibrate on."""
ORIGIN = "scikit-image 0.26.0's sample images (skimage/data/, BSD-3-Clause; see its README for each image's source)"


def path(name: str) -> Path:
    found = zoo.package_file("skimage", f"data/{name}", owner=OWNER,
                             remedy="install it with: pip install --no-deps 'scikit-image==0.26.0' (only data/ is read)")
    return zoo.checked_file(found, DIGESTS[name], owner=OWNER,
                            remedy="install scikit-image==0.26.0, whose data files these digests are")


def identity(names: tuple[str, ...]) -> str:
    """The named files' digests; hashlib only."""
    return "skimage-data:" + hashlib.sha256(repr([(n, DIGESTS[n]) for n in names]).encode()).hexdigest()[:16]


@cache
def load(name: str) -> Any:
    """One image as a float32 (3, H, W) tensor in [0, 1] (grey images repeated on 3 channels)."""
    import numpy as np
    import torch
    from PIL import Image

    with Image.open(path(name)) as image:
        pixels = np.asarray(image.convert("RGB"), dtype=np.float32) / 255.0
    return torch.from_numpy(pixels.copy()).permute(2, 0, 1).contiguous()


def resized(image: Any, side: int, height: int | None = None) -> Any:
    """A (3, h, w) image resized to (3, height, side), ``height`` being ``side`` unless given: torch's bilinear,
    antialiased interpolate."""
    import torch

    return torch.nn.functional.interpolate(image[None], size=(height or side, side), mode="bilinear",
                                           align_corners=False, antialias=True)[0].clamp(0.0, 1.0)


def photos_text(mirrored: bool) -> str:
    """How a dataset names PHOTOS, and their mirrors where it holds them."""
    named = f"{len(PHOTOS)} scikit-image photos ({', '.join(p.removesuffix('.png') for p in PHOTOS)})"
    return named + (" and their mirrors" if mirrored else "")


@cache
def mirrored(side: int) -> tuple[Any, ...]:
    """Each of PHOTOS at ``side``×``side``, then its left-right mirror: (3, side, side) tensors in [0, 1]."""
    out = []
    for name in PHOTOS:
        view = resized(load(name), side)
        out += [view, view.flip(2).contiguous()]
    return tuple(out)
