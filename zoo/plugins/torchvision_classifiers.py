"""torchvision's small ImageNet classifiers, ``mv2`` among them.

The rule comes from torchvision's own weights metadata: every classification model
whose first weights have at most 12 M parameters and 2 GFLOPs. Registration reads
``data/torchvision_classifiers.json`` (written by scripts/snapshot_torchvision.py,
checked by a test), so listing models never imports torch.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from zoo import (
    BuildError,
    Dataset,
    InputSpec,
    Metric,
    ModelSpec,
    WeightsVariant,
    hookimpl,
    hub_checkpoint,
    reestimate_batchnorm,
    top1,
)
from zoo.plugins import _imagenet

VERSION = "1"
MAX_PARAMS = 12_000_000
MAX_GFLOPS = 2.0
SNAPSHOT = Path(__file__).parent / "data" / "torchvision_classifiers.json"
RANDOM_SEED = 0
LICENCE = "BSD-3-Clause (torchvision); trained on ImageNet-1k, whose terms of use also apply"

# mv2 keeps the name of ExecuTorch's Arm tutorial, under which it was always built.
NAMES: dict[str, tuple[str, tuple[str, ...]]] = {
    "mobilenet_v2": ("mv2", ("mobilenet_v2", "mobilenetv2", "mobilenet-v2")),
}
# Without weights googlenet gets auxiliary heads and no input transform; this is
# the architecture its pretrained weights come with.
RANDOM_KWARGS: dict[str, dict[str, Any]] = {
    "googlenet": {"aux_logits": False, "transform_input": True, "init_weights": True},
}


@dataclass(frozen=True)
class Entry:
    """One model of the snapshot."""

    torchvision_name: str
    weights: str
    url: str
    sha256_prefix: str
    num_params: int
    gflops: float
    crop_size: int
    resize_size: int
    interpolation: str
    mean: tuple[float, ...]
    std: tuple[float, ...]
    acc1: float
    acc5: float
    recipe: str
    batchnorm: bool
    categories: tuple[str, ...]

    @property
    def name(self) -> str:
        return NAMES.get(self.torchvision_name, (self.torchvision_name.replace("_", "-"), ()))[0]

    @property
    def aliases(self) -> tuple[str, ...]:
        if self.torchvision_name in NAMES:
            return NAMES[self.torchvision_name][1]
        return (self.torchvision_name,) if self.torchvision_name != self.name else ()

    @property
    def file(self) -> str:
        return self.url.rsplit("/", 1)[1]

    @property
    def preprocessing(self) -> _imagenet.Preprocessing:
        return _imagenet.Preprocessing(self.crop_size, self.mean, self.std, self.interpolation)


@cache
def _snapshot_data() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(SNAPSHOT.read_text(encoding="utf-8"))
    return data


@cache
def entries() -> tuple[Entry, ...]:
    data = _snapshot_data()
    out = []
    for name, m in sorted(data["models"].items()):
        out.append(Entry(
            torchvision_name=name, weights=m["weights"], url=m["url"], sha256_prefix=m["sha256_prefix"],
            num_params=m["num_params"], gflops=m["gflops"], crop_size=m["crop_size"],
            resize_size=m["resize_size"], interpolation=m["interpolation"], mean=tuple(m["mean"]),
            std=tuple(m["std"]), acc1=m["acc1"], acc5=m["acc5"], recipe=m["recipe"],
            batchnorm=m["batchnorm"], categories=tuple(m.get("categories") or data["categories"]),
        ))
    return tuple(out)


def entry(torchvision_name: str) -> Entry:
    for e in entries():
        if e.torchvision_name == torchvision_name:
            return e
    raise KeyError(f"{torchvision_name!r} is not in {SNAPSHOT.name}")


# --- the snapshot, from the installed torchvision ------------------------------------------


def _batchnorms(model: Any) -> list[Any]:
    from torch import nn

    kinds = (nn.BatchNorm1d, nn.BatchNorm2d, nn.BatchNorm3d)
    return [m for m in model.modules() if isinstance(m, kinds)]


def snapshot() -> dict[str, Any]:
    """What registration needs to know, read from the installed torchvision."""
    import torch
    import torchvision
    from torchvision.models import get_model, get_model_weights, list_models

    models: dict[str, dict[str, Any]] = {}
    for name in list_models(module=torchvision.models):
        weights = next(iter(get_model_weights(name)))  # IMAGENET1K_V1 for all of them today
        meta = weights.meta
        if meta["num_params"] > MAX_PARAMS or meta["_ops"] > MAX_GFLOPS:
            continue
        transforms = weights.transforms()
        found = torch.hub.HASH_REGEX.search(weights.url.rsplit("/", 1)[1])
        model = get_model(name, weights=None, **RANDOM_KWARGS.get(name, {}))
        metrics = meta["_metrics"]["ImageNet-1K"]
        models[name] = {
            "weights": weights.name,
            "url": weights.url,
            "sha256_prefix": found.group(1) if found else "",
            "num_params": meta["num_params"],
            "gflops": meta["_ops"],
            "crop_size": transforms.crop_size[0],
            "resize_size": transforms.resize_size[0],
            "interpolation": transforms.interpolation.value,
            "mean": list(transforms.mean),
            "std": list(transforms.std),
            "acc1": metrics["acc@1"],
            "acc5": metrics["acc@5"],
            "recipe": meta["recipe"],
            "batchnorm": bool(_batchnorms(model)),
            "categories": list(meta["categories"]),
        }
    data: dict[str, Any] = {
        "torchvision_version": torchvision.__version__.split("+")[0],  # without the build tag (+cpu, +cu130)
        "rule": {"max_params": MAX_PARAMS, "max_gflops": MAX_GFLOPS, "weights": "first enum member"},
        "models": models,
    }
    first = next(iter(models.values()))["categories"]
    if all(m["categories"] == first for m in models.values()):
        data["categories"] = first
        for m in models.values():
            del m["categories"]
    return data


def dumps(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


# --- weights ------------------------------------------------------------------------------


def _stale_snapshot(e: Entry, detail: str) -> BuildError:
    import torchvision

    return BuildError(
        f"{e.name}: the installed torchvision {torchvision.__version__} does not match zoo's "
        f"snapshot {SNAPSHOT.name} ({detail}); install torchvision "
        f"{_snapshot_data()['torchvision_version']}, or regenerate the snapshot with "
        "scripts/snapshot_torchvision.py"
    )


def _pretrained(e: Entry) -> Any:
    from torchvision.models import get_model, get_model_weights

    try:
        weights = get_model_weights(e.torchvision_name)[e.weights]
    except (KeyError, ValueError):
        raise _stale_snapshot(e, f"it has no {e.torchvision_name} {e.weights}") from None
    if weights.url != e.url:
        raise _stale_snapshot(e, f"{e.weights} is {weights.url} there, {e.url} in the snapshot")
    path = hub_checkpoint(e.url, model=e.name)  # checked; offline, refused before any download
    try:
        return get_model(e.torchvision_name, weights=weights)
    except Exception as exc:
        raise BuildError(
            f"{e.name}: cannot load torchvision's {e.weights} weights from {path} ({type(exc).__name__}: {exc}); "
            "use '--weights random' for untrained weights, or delete the file and fetch again online"
        ) from exc


def random_init(e: Entry) -> Any:
    """torchvision's init after ``torch.manual_seed``; the global RNG is left untouched."""
    import torch
    from torchvision.models import get_model

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(RANDOM_SEED)
        model = get_model(e.torchvision_name, weights=None, **RANDOM_KWARGS.get(e.torchvision_name, {}))
    return model.eval()


def _build(e: Entry, calibration: Dataset, variant: str) -> Any:
    if variant == e.weights:
        model = _pretrained(e)
    elif variant == "random":
        model = random_init(e)
        if bool(_batchnorms(model)) != e.batchnorm:
            detail = f"BatchNorm layers there: {not e.batchnorm}, in the snapshot: {e.batchnorm}"
            raise _stale_snapshot(e, detail)
        if e.batchnorm:
            reestimate_batchnorm(model, calibration.load())
    else:
        raise BuildError(f"{e.name} has no weights variant {variant!r}; choose {e.weights} or random")
    return model.eval()


# --- specs --------------------------------------------------------------------------------


@cache
def _torchvision_version() -> str:
    # The architecture and the random init are torchvision's code, so its release
    # is part of the weights' identity (and so of the build key).
    import importlib.metadata  # ~25 ms, so only when an identity is asked for

    try:
        return importlib.metadata.version("torchvision").split("+")[0]
    except importlib.metadata.PackageNotFoundError:
        return "none"


def _description(e: Entry) -> str:
    if (e.mean, e.std) == (_imagenet.IMAGENET_MEAN, _imagenet.IMAGENET_STD):
        norm = "ImageNet mean and std"
    else:
        norm = f"mean {e.mean} and std {e.std}"
    side = e.crop_size
    return (
        f"ImageNet-1k classifier, {e.num_params / 1e6:.1f} M parameters, {e.gflops:.2f} GFLOPs "
        f"(torchvision's {e.torchvision_name}). Input: one RGB image, {side}×{side}, values /255 "
        f"then normalised with {norm}; torchvision evaluates it after a {e.interpolation} resize "
        f"to {e.resize_size} and a center crop to {side}."
    )


def _random_variant(e: Entry, calibration: Dataset) -> WeightsVariant:
    init = f"torchvision's init after torch.manual_seed({RANDOM_SEED})"
    if not e.batchnorm:
        return WeightsVariant(
            name="random",
            description=f"untrained: {init}; no BatchNorm layers, so nothing is re-estimated",
            origin="generated",
            licence="n/a",
            identity=lambda: f"seed:{RANDOM_SEED};torchvision={_torchvision_version()}",
        )
    return WeightsVariant(
        name="random",
        description=(
            f"untrained: {init}, then every BatchNorm's statistics re-estimated on the "
            f"{calibration.size} calibration images, so the output depends on the input"
        ),
        origin="generated",
        licence="n/a",
        identity=lambda: (
            f"seed:{RANDOM_SEED};torchvision={_torchvision_version()};bn-reestimated-on:{calibration.identity()}"
        ),
    )


def spec_for(e: Entry) -> ModelSpec:
    prep = e.preprocessing
    calibration = _imagenet.sample_calibration(prep, e.name)

    def from_dir(directory: Path) -> Dataset:
        return _imagenet.calibration_from_dir(directory, prep, e.name)

    return ModelSpec(
        name=e.name,
        aliases=e.aliases,
        version=VERSION,
        description=_description(e),
        task="image-classification",
        inputs=(
            InputSpec("image", (1, 3, e.crop_size, e.crop_size), "float32", range=prep.range,
                      mean=e.mean, std=e.std),
        ),
        build=lambda variant: _build(e, calibration, variant),
        example_inputs=lambda: calibration.load()[0],
        calibration=calibration,
        weights=(
            WeightsVariant(
                name=e.weights,
                description=(
                    f"torchvision's {e.weights} weights (ImageNet-1k top-1 {e.acc1:.1f} %, top-5 "
                    f"{e.acc5:.1f} %), downloaded and hash-checked; recipe: {e.recipe}"
                ),
                origin=e.url,
                licence=LICENCE,
                identity=lambda: f"{e.url};torchvision={_torchvision_version()}",
                reference_top1=e.acc1,
            ),
            _random_variant(e, calibration),
        ),
        metrics=(Metric(
            "top1", top1, higher_is_better=True, max_drop=1.0,
            description="top-1 on ImageNet class folders given with --eval-dir (no labelled set ships with zoo)",
        ),),
        default_weights=e.weights,
        labels=e.categories,
        num_labels=len(e.categories),
        calibration_from_dir=from_dir,
        layouts=("nchw", "nhwc"),
    )


@hookimpl
def register_models(register: Callable[[ModelSpec], None]) -> None:
    for e in entries():
        register(spec_for(e))
