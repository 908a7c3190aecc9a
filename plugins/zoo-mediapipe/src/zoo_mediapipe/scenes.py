"""Faces with exact boxes: lfw_subset's faces (through zoo_vision.lfw) pasted at known positions and
sizes on scikit-image's photos and textures, each with one of its non-face crops beside it.

skimage is never imported: its PNG files are found with ``zoo.package_file``, checked by sha256 and
decoded with Pillow (PNG only, so no JPEG decoder's version changes a pixel). Module level is torch-
and numpy-free.
"""

from __future__ import annotations

import hashlib
from functools import cache
from typing import Any

import zoo

__all__ = ["BACKGROUNDS", "RULE", "identity", "scenes"]

# File in skimage/data/: sha256 (scikit-image 0.26.0). None shows a face.
BACKGROUNDS = {
    "brick.png": "7966caf324f6ba843118d98f7a07746d22f6a343430add0233eca5f6eaaa8fcf",
    "grass.png": "b6b6022426b38936c43a4ac09635cd78af074e90f42ffa8227ac8b7452d39f89",
    "gravel.png": "c48615b451bf1e606fbd72c0aa9f8cc0f068ab7111ef7d93bb9b0f2586440c12",
    "coffee.png": "cc02f8ca188b167c775a7101b5d767d1e71792cf762c33d6fa15a4599b5a8de7",
    "coins.png": "f8d773fc9cfa6f4d8e5942dc34d0a0788fcaed2a4fefbbed0aef5398d7ef4cba",
    "moon.png": "78739619d11f7eb9c165bb5d2efd4772cee557812ec847532dbb1d92ef71f577",
    "motorcycle_left.png": "db18e9c4157617403c3537a6ba355dfeafe9a7eabb6b9b94cb33f6525dd49179",
}
SEED = 56
RULE = (f"each face of the split on a square crop of one of {len(BACKGROUNDS)} scikit-image photos and textures "
        "(in turn), resized to the input with torch's bilinear antialiased interpolate; the face (lfw_subset's "
        "25×25 grey crop resized bilinearly, repeated on 3 channels) and one non-face crop of the same split "
        f"pasted at the given sizes, in opposite halves of the image, the half and positions drawn by numpy's default_rng({SEED}); "
        "the face's box is the pasted crop's")
OWNER = "zoo-mediapipe"


def _path(name: str) -> Any:
    path = zoo.package_file("skimage", f"data/{name}", owner=OWNER,
                            remedy="install it with: pip install --no-deps 'scikit-image==0.26.0' (only data/ is read)")
    return zoo.checked_file(path, BACKGROUNDS[name], owner=OWNER,
                            remedy="install scikit-image==0.26.0, whose data files these digests are")


def identity(split: str, side: int, sizes: tuple[int, ...]) -> str:
    """The backgrounds' digests, lfw_subset's identity and the rule; hashlib only."""
    from zoo_vision import lfw

    digest = hashlib.sha256(repr(sorted(BACKGROUNDS.items())).encode()).hexdigest()[:16]
    return f"scenes:{side}:{sizes}:{digest};{lfw.identity(split)};{RULE}"


@cache
def _background(name: str) -> Any:
    """One background as a float32 (3, H, W) tensor in [0, 1]."""
    import numpy as np
    import torch
    from PIL import Image

    with Image.open(_path(name)) as image:
        pixels = np.asarray(image.convert("RGB"), dtype=np.float32) / 255.0
    return torch.from_numpy(pixels.copy()).permute(2, 0, 1).contiguous()


def _crop(name: str, rng: Any, side: int) -> Any:
    import torch

    image = _background(name)
    h, w = image.shape[1:]
    edge = int(rng.integers(min(h, w) // 2, min(h, w) + 1))
    y, x = int(rng.integers(0, h - edge + 1)), int(rng.integers(0, w - edge + 1))
    part = image[:, y : y + edge, x : x + edge][None]
    return torch.nn.functional.interpolate(part, size=(side, side), mode="bilinear", align_corners=False,
                                           antialias=True)[0].clamp(0.0, 1.0)


def _place(rng: Any, side: int, size: int, half: int) -> tuple[int, int, int, int]:
    """A size×size box inside the left (``half`` 0) or right (1) half of the canvas."""
    if size > side // 2:
        raise ValueError(f"a {size}-pixel crop does not fit in half of {side}×{side}")
    x = half * (side // 2) + int(rng.integers(0, side // 2 - size + 1))
    y = int(rng.integers(0, side - size + 1))
    return (x, y, x + size, y + size)


@cache
def scenes(split: str, side: int, sizes: tuple[int, ...]) -> tuple[tuple[Any, list[tuple[int, int, int, int, int]]], ...]:
    """Each face of lfw_subset's ``split`` once per size in ``sizes``: ``(image, boxes)`` with the image
    a (1, side, side, 3) NHWC float32 tensor in [-1, 1] (as MediaPipe feeds its detectors) and
    ``boxes`` the face's ``[(x1, y1, x2, y2, 0)]`` in pixels (:data:`RULE`)."""
    import numpy as np
    from zoo_vision import lfw

    rng = np.random.default_rng(SEED)
    names = sorted(BACKGROUNDS)
    out = []
    for size in sizes:
        crops, labels = lfw.load(split, size)
        faces = [c for c, label in zip(crops, labels, strict=True) if int(label) == 1]
        others = [c for c, label in zip(crops, labels, strict=True) if int(label) == 0]
        for k, face in enumerate(faces):
            image = _crop(names[(k + size) % len(names)], rng, side) * 2.0 - 1.0
            half = int(rng.integers(0, 2))
            box = _place(rng, side, size, half)
            image[:, box[1] : box[3], box[0] : box[2]] = face
            other = _place(rng, side, size, 1 - half)
            image[:, other[1] : other[3], other[0] : other[2]] = others[k % len(others)]
            out.append((image.permute(1, 2, 0)[None].contiguous(), [(*box, 0)]))
    return tuple(out)
