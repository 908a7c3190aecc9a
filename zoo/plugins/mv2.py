"""``mv2``: torchvision's MobileNetV2, the model of ExecuTorch's Arm tutorial."""

from __future__ import annotations

import hashlib
import importlib.util
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from zoo import (
    BuildError,
    Dataset,
    InputSpec,
    MissingExtraError,
    ModelSpec,
    UsageError,
    WeightsVariant,
    hookimpl,
)

VERSION = "1"
SIDE = 224
MEAN = (0.485, 0.456, 0.406)
STD = (0.229, 0.224, 0.225)
RANGE = (
    round(min(-m / s for m, s in zip(MEAN, STD, strict=True)), 4),
    round(max((1 - m) / s for m, s in zip(MEAN, STD, strict=True)), 4),
)

# Hard-coded so the build key never imports torchvision; a test checks it
# against MobileNet_V2_Weights.IMAGENET1K_V1.url.
IMAGENET1K_V1_URL = "https://download.pytorch.org/models/mobilenet_v2-b0353104.pth"
IMAGENET1K_V1_FILE = IMAGENET1K_V1_URL.rsplit("/", 1)[1]
IMAGENET1K_V1_SHA256_PREFIX = IMAGENET1K_V1_FILE.rsplit("-", 1)[1].split(".")[0]
RANDOM_SEED = 0

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
PREPROCESSING = f"RGB, PIL bilinear resize to {SIDE}x{SIDE}, /255, mean={MEAN}, std={STD}"
DIR_PREPROCESSING = f"center square crop; {PREPROCESSING}"
IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png")
MAX_DIR_IMAGES = 1000


def _pillow_version() -> str:
    # Decoding and resizing belong to Pillow, so its release is part of the data.
    import importlib.metadata  # ~25 ms, so only when an identity is asked for

    try:
        return importlib.metadata.version("pillow")
    except importlib.metadata.PackageNotFoundError:
        return "none"


def _sample_image_paths() -> tuple[Path, ...]:
    spec = importlib.util.find_spec("sklearn")
    for location in (spec.submodule_search_locations or []) if spec else []:
        folder = Path(location) / "datasets" / "images"
        paths = tuple(folder / name for name in SAMPLE_IMAGES)
        if all(p.is_file() for p in paths):
            return paths
    raise MissingExtraError("the mv2 model's calibration images (scikit-learn's sample photos)")


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _to_tensor(image: Any) -> Any:
    """A PIL image, already cropped, as a normalised (1,3,224,224) float32 tensor."""
    import torch
    from PIL import Image

    rgb = image.convert("RGB").resize((SIDE, SIDE), Image.Resampling.BILINEAR)
    pixels = torch.frombuffer(bytearray(rgb.tobytes()), dtype=torch.uint8)
    x = pixels.reshape(SIDE, SIDE, 3).permute(2, 0, 1).to(torch.float32) / 255.0
    mean = torch.tensor(MEAN).reshape(3, 1, 1)
    std = torch.tensor(STD).reshape(3, 1, 1)
    return ((x - mean) / std).unsqueeze(0).contiguous()


def _center_square(image: Any) -> Any:
    width, height = image.size
    side = min(width, height)
    left, top = (width - side) // 2, (height - side) // 2
    return image.crop((left, top, left + side, top + side))


# --- built-in calibration: crops of scikit-learn's two sample photos -------------------


def _calibration() -> list[tuple[Any, ...]]:
    from PIL import Image

    samples: list[tuple[Any, ...]] = []
    for path in _sample_image_paths():
        with Image.open(path) as image:
            image.load()
            for box in BOXES:
                if box[2] > image.size[0] or box[3] > image.size[1]:
                    raise BuildError(f"mv2: crop {box} does not fit {path} ({image.size}); update BOXES")
                samples.append((_to_tensor(image.crop(box)),))
    return samples


def _calibration_identity() -> str:
    files = ",".join(f"{p.name}:{_sha256(p)}" for p in _sample_image_paths())
    return (
        f"sklearn-images:{files};boxes={BOXES};{PREPROCESSING};pillow={_pillow_version()};"
        f"mv2-plugin={VERSION}"
    )


def _example_inputs() -> tuple[Any, ...]:
    return _calibration()[0]


# --- a user's folder of images ----------------------------------------------------------


def _image_files(directory: Path) -> list[Path]:
    files = [p for p in directory.rglob("*") if p.is_file() and p.suffix.lower() in IMAGE_SUFFIXES]
    return sorted(files, key=lambda p: p.relative_to(directory).as_posix())


def _check_decodable(path: Path) -> None:
    try:
        from PIL import Image
    except ImportError:
        raise MissingExtraError("--calibration-dir for mv2") from None
    try:
        with Image.open(path) as image:
            image.verify()
    except Exception as exc:
        raise UsageError(f"--calibration-dir: cannot decode image {path}: {exc}") from None


def _load_image(path: Path) -> Any:
    from PIL import Image

    try:
        with Image.open(path) as image:
            image.load()
            return _to_tensor(_center_square(image))
    except Exception as exc:
        raise UsageError(f"--calibration-dir: cannot decode image {path}: {exc}") from None


def calibration_from_dir(directory: Path) -> Dataset:
    """Every *.jpg/*.jpeg/*.png under ``directory`` (first 1000 by relative path),
    center-cropped to a square, resized to 224 and normalised like ImageNet."""
    directory = Path(directory).expanduser()
    if not directory.is_dir():
        raise UsageError(f"--calibration-dir {directory}: not a directory")
    files = _image_files(directory)
    if not files:
        raise UsageError(
            f"--calibration-dir {directory}: no images found "
            f"(looked for {', '.join('*' + s for s in IMAGE_SUFFIXES)}, in subfolders too)"
        )
    kept = files[:MAX_DIR_IMAGES]
    for path in kept:
        _check_decodable(path)

    digest = hashlib.sha256()
    for path in kept:
        digest.update(f"{path.relative_to(directory).as_posix()}\0{_sha256(path)}\n".encode())
    identity = (
        f"dir:sha256:{digest.hexdigest()};{DIR_PREPROCESSING};pillow={_pillow_version()};"
        f"mv2-plugin={VERSION}"
    )
    dropped = f" (first {len(kept)} of {len(files)})" if len(files) > len(kept) else ""
    return Dataset(
        size=len(kept),
        description=f"{len(kept)} images from {directory}{dropped}, center-cropped and resized to {SIDE}",
        load=lambda: [(_load_image(p),) for p in kept],
        identity=lambda: identity,
    )


# --- weights ------------------------------------------------------------------------------


def _cached_weights_path() -> Path:
    import torch

    return Path(torch.hub.get_dir()) / "checkpoints" / IMAGENET1K_V1_FILE


def _offline_help(path: Path) -> str:
    return (
        "use '--weights random' for untrained weights, or download "
        f"{IMAGENET1K_V1_URL} on a connected machine and place it at {path}"
    )


def _imagenet_model() -> Any:
    from torchvision.models import MobileNet_V2_Weights, mobilenet_v2

    path = _cached_weights_path()
    # torchvision checks the hash only when it downloads; a file someone placed
    # by hand must be checked here, or the build key would lie about the bytes.
    if path.is_file() and not _sha256(path).startswith(IMAGENET1K_V1_SHA256_PREFIX):
        raise BuildError(
            f"mv2: {path} is not torchvision's IMAGENET1K_V1 file (its sha256 does not start "
            f"with {IMAGENET1K_V1_SHA256_PREFIX}); delete it, then {_offline_help(path)}"
        )
    try:
        return mobilenet_v2(weights=MobileNet_V2_Weights.IMAGENET1K_V1)
    except Exception as exc:
        raise BuildError(
            f"mv2: cannot get the IMAGENET1K_V1 weights ({type(exc).__name__}: {exc}); "
            + _offline_help(path)
        ) from exc


def _build(variant: str) -> Any:
    import torch
    from torchvision.models import mobilenet_v2

    if variant == "IMAGENET1K_V1":
        model = _imagenet_model()
    elif variant == "random":
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(RANDOM_SEED)
            model = mobilenet_v2(weights=None)
    else:
        raise BuildError(f"mv2 has no weights variant {variant!r}; choose IMAGENET1K_V1 or random")
    return model.eval()


def _labels() -> Sequence[str]:
    from torchvision.models import MobileNet_V2_Weights

    categories: list[str] = MobileNet_V2_Weights.IMAGENET1K_V1.meta["categories"]
    return categories


def spec() -> ModelSpec:
    calibration_size = len(SAMPLE_IMAGES) * len(BOXES)
    return ModelSpec(
        name="mv2",
        aliases=("mobilenet_v2", "mobilenetv2"),
        version=VERSION,
        description=(
            "torchvision's MobileNetV2 (3.5 M parameters), ImageNet-1k classifier, as in "
            "ExecuTorch's Arm Ethos-U tutorial. Input: one RGB image, 224×224, "
            "values /255 then normalised with ImageNet mean and std."
        ),
        task="image-classification",
        inputs=(InputSpec("image", (1, 3, SIDE, SIDE), "float32", range=RANGE, mean=MEAN, std=STD),),
        build=_build,
        example_inputs=_example_inputs,
        calibration=Dataset(
            size=calibration_size,
            description=(
                f"{calibration_size} fixed crops of scikit-learn's two sample photos "
                f"({' and '.join(SAMPLE_IMAGES)}, CC BY 2.0), resized to {SIDE}"
            ),
            load=_calibration,
            identity=_calibration_identity,
        ),
        weights=(
            WeightsVariant(
                name="IMAGENET1K_V1",
                description="torchvision's ImageNet-1k weights (top-1 71.9 %), downloaded and hash-checked",
                origin=IMAGENET1K_V1_URL,
                licence="BSD-3-Clause (torchvision); trained on ImageNet-1k, whose terms of use also apply",
                identity=lambda: IMAGENET1K_V1_URL,
            ),
            WeightsVariant(
                name="random",
                description=f"untrained: torchvision's init after torch.manual_seed({RANDOM_SEED})",
                origin="generated",
                licence="n/a",
                identity=lambda: f"seed:{RANDOM_SEED}",
            ),
        ),
        default_weights="IMAGENET1K_V1",
        labels=_labels,
        num_labels=1000,
        calibration_from_dir=calibration_from_dir,
    )


@hookimpl
def register_models(register: Callable[[ModelSpec], None]) -> None:
    register(spec())
