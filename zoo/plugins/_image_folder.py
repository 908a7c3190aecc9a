"""A user's folder of images as a Dataset: what ``--calibration-dir`` and each
class folder of ``--eval-dir`` give an image model. The model's plugin says how
one image becomes a sample (``decode``); the folder rules are the same for all.

Torch-free: listing, checking and hashing need Pillow only to verify that
each file decodes, and the identity is computed with hashlib.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from zoo import Dataset, MissingExtraError, UsageError

IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png")


def pillow_version() -> str:
    # Decoding and resizing belong to Pillow, so its release is part of the data.
    import importlib.metadata  # ~25 ms, so only when an identity is asked for

    try:
        return importlib.metadata.version("pillow")
    except importlib.metadata.PackageNotFoundError:
        return "none"


def file_sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def image_files(directory: Path) -> list[Path]:
    """Every image under ``directory``, subfolders included, in order of relative path."""
    files = [p for p in directory.rglob("*") if p.is_file() and p.suffix.lower() in IMAGE_SUFFIXES]
    return sorted(files, key=lambda p: p.relative_to(directory).as_posix())


SIXTEEN_BIT = "16-bit grey scaled to 8 bits"
"""How ``eight_bit`` reads a 16-bit image, for the preprocessing strings of folder data sets."""


def eight_bit(image: Any) -> Any:
    """``image`` with 8-bit channels. Pillow opens a 16-bit grey PNG as ``I;16`` (or ``I``),
    and its conversion to ``L`` or ``RGB`` clips every value above 255: nearly every pixel
    of a 16-bit image becomes white. Scaled instead (0..65535 to 0..255, rounded)."""
    if image.mode not in ("I", "I;16", "I;16B", "I;16L", "I;16N"):
        return image
    return image.convert("I").point(lambda v: v * 255 / 65535 + 0.5).convert("L")


def _check_decodable(path: Path, model: str) -> None:
    try:
        from PIL import Image
    except ImportError:
        raise MissingExtraError(f"reading a folder of images for {model} (Pillow)") from None
    try:
        with Image.open(path) as image:
            image.verify()
    except Exception as exc:
        raise UsageError(f"image folder: cannot decode {path}: {exc}; remove or replace the file") from None


def image_folder(
    directory: Path,
    *,
    model: str,
    decode: Callable[[Path], Any],
    preprocessing: str,
    limit: int | None = None,
) -> Dataset:
    """The images under ``directory`` (the first ``limit`` by relative path), each
    checked to decode before anything is built. ``preprocessing`` names what
    ``decode`` does; it goes into the identity with the files' digests."""
    directory = Path(directory).expanduser()
    if not directory.is_dir():
        raise UsageError(f"image folder {directory}: not a directory; give a folder of *.png/*.jpg images")
    files = image_files(directory)
    if not files:
        raise UsageError(
            f"image folder {directory}: no images found "
            f"(looked for {', '.join('*' + s for s in IMAGE_SUFFIXES)}, in subfolders too)"
        )
    kept = files[:limit] if limit is not None else files
    digest = hashlib.sha256()
    for path in kept:
        _check_decodable(path, model)
        digest.update(f"{path.relative_to(directory).as_posix()}\0{file_sha256(path)}\n".encode())
    identity = f"dir:sha256:{digest.hexdigest()};{preprocessing};pillow={pillow_version()}"
    dropped = f" (first {len(kept)} of {len(files)})" if len(files) > len(kept) else ""

    def load() -> list[tuple[Any, ...]]:
        samples = []
        for path in kept:
            try:
                samples.append((decode(path),))
            except UsageError:
                raise
            except Exception as exc:
                raise UsageError(f"image folder: cannot decode {path}: {exc}; remove or replace the file") from None
        return samples

    return Dataset(
        size=len(kept),
        description=f"{len(kept)} images from {directory}{dropped}, {preprocessing}",
        load=load,
        identity=lambda: identity,
    )
