"""Faces with exact boxes: lfw_subset's faces (``zoo.datasets.lfw_subset``) pasted at known positions and
sizes on scikit-image's photos and textures, each with one of its non-face crops beside it.

The backgrounds are read by `zoo_mediapipe.images`. Module level is torch- and numpy-free.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from zoo_mediapipe import images

__all__ = ["BACKGROUNDS", "RULE", "Scene", "identity", "scenes"]

Box = tuple[int, int, int, int]
Scene = tuple[Any, list[tuple[int, int, int, int, int]], Box]

BACKGROUNDS = ("brick.png", "coffee.png", "coins.png", "grass.png", "gravel.png", "moon.png", "motorcycle_left.png")
SEED = 56
RULE = (f"each face of the split on a square crop of one of {len(BACKGROUNDS)} scikit-image photos and textures "
        "(in turn), resized to the input with torch's bilinear antialiased interpolate; the face (lfw_subset's "
        "25×25 grey crop resized bilinearly, repeated on 3 channels) and one non-face crop of the same split "
        f"pasted at the given sizes, in opposite halves of the image, the half and positions drawn by numpy's default_rng({SEED}); "
        "the face's box is the pasted crop's")


def identity(split: str, side: int, sizes: tuple[int, ...], height: int | None = None) -> str:
    """The backgrounds' digests, lfw_subset's identity and the rule; hashlib only."""
    from zoo.datasets import lfw_subset as lfw

    shape = side if height in (None, side) else f"{height}x{side} (each crop of the input's aspect, not square)"
    return f"scenes:{shape}:{sizes}:{images.identity(BACKGROUNDS)};{lfw.identity(split)};{RULE}"


def _crop(name: str, rng: Any, side: int, height: int) -> Any:
    """A crop of the photo as wide as ``side`` is to ``height`` (square for a square input), resized to it."""
    image = images.load(name)
    h, w = image.shape[1:]
    edge = int(rng.integers(min(h, w) // 2, min(h, w) + 1))
    tall = edge * height // side
    y, x = int(rng.integers(0, h - tall + 1)), int(rng.integers(0, w - edge + 1))
    return images.resized(image[:, y : y + tall, x : x + edge], side, height)


def _place(rng: Any, side: int, size: int, half: int, height: int) -> Box:
    """A size×size box inside the left (``half`` 0) or right (1) half of the side×height canvas."""
    if size > side // 2 or size > height:
        raise ValueError(f"a {size}-pixel crop does not fit in half of {side}×{height}")
    x = half * (side // 2) + int(rng.integers(0, side // 2 - size + 1))
    y = int(rng.integers(0, height - size + 1))
    return (x, y, x + size, y + size)


@cache
def scenes(split: str, side: int, sizes: tuple[int, ...], height: int | None = None) -> tuple[Scene, ...]:
    """Each face of lfw_subset's ``split`` once per size in ``sizes``: ``(image, boxes, other)`` with the
    image a (1, height, side, 3) NHWC float32 tensor in [-1, 1] (as MediaPipe feeds its detectors; ``height``
    is ``side`` unless given: a landscape input's crops keep its aspect),
    ``boxes`` the face's ``[(x1, y1, x2, y2, 0)]`` in pixels and ``other`` the non-face crop's
    (x1, y1, x2, y2) (:data:`RULE`)."""
    import numpy as np

    from zoo.datasets import lfw_subset as lfw

    rng = np.random.default_rng(SEED)
    tall = height or side
    names = BACKGROUNDS
    out = []
    for size in sizes:
        crops, labels = lfw.load(split, size)
        faces = [c for c, label in zip(crops, labels, strict=True) if int(label) == 1]
        others = [c for c, label in zip(crops, labels, strict=True) if int(label) == 0]
        for k, face in enumerate(faces):
            image = _crop(names[(k + size) % len(names)], rng, side, tall) * 2.0 - 1.0
            half = int(rng.integers(0, 2))
            box = _place(rng, side, size, half, tall)
            image[:, box[1] : box[3], box[0] : box[2]] = face
            other = _place(rng, side, size, 1 - half, tall)
            image[:, other[1] : other[3], other[0] : other[2]] = others[k % len(others)]
            out.append((image.permute(1, 2, 0)[None].contiguous(), [(*box, 0)], other))
    return tuple(out)
