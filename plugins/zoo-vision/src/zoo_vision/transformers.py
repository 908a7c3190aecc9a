"""Vision transformers from timm: DeiT-tiny (attention throughout, LayerNorm) and
MobileViT-XS (convolutions with transformer blocks between them, BatchNorm in the convolutions).

Task ``image-classification``: both are ImageNet-1k classifiers, judged like the others by
top-1, here the int8 program's top-1 against float's own on mirrored photo crops.
Registration reads the snapshot only; torch and timm load when a model is built."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from zoo import (
    BuildError,
    Dataset,
    InputSpec,
    Metric,
    ModelSpec,
    WeightsVariant,
    reestimate_batchnorm,
    top1,
)
from zoo_vision import agreement, photo_crops, snapshot

VERSION = "1"
RANDOM_SEED = 0
EVALUATION_CROPS = 4
"""Per photo: 8 mirrored crops in all."""


@dataclass(frozen=True)
class Transformer:
    name: str
    timm_name: str
    summary: str
    normalisation: str
    """``layernorm``: nothing to re-estimate for random weights; ``batchnorm``: re-estimated."""


TRANSFORMERS = (
    Transformer("deit-tiny", "deit_tiny_patch16_224",
                "DeiT-tiny (Touvron et al. 2021): a ViT of 12 blocks, width 192, 3 heads, on 16×16 patches, "
                "5.7 M parameters", "layernorm"),
    Transformer("mobilevit-xs", "mobilevit_xs",
                "MobileViT-XS (Mehta and Rastegari 2022): MobileNetV2 blocks with three MobileViT blocks "
                "(unfold into patches, transformer, fold back), 2.3 M parameters", "batchnorm"),
)


def transformer(name: str) -> Transformer:
    for t in TRANSFORMERS:
        if t.name == name:
            return t
    raise KeyError(f"{name!r} is not a transformer of the vision pack")


def _entry(t: Transformer) -> dict[str, Any]:
    entry: dict[str, Any] = snapshot.data()["transformers"][t.timm_name]
    return entry


def preprocessing(t: Transformer) -> photo_crops.Preprocessing:
    e = _entry(t)
    return photo_crops.Preprocessing(e["input_size"][1], tuple(e["mean"]), tuple(e["std"]), e["interpolation"])


def _pretrained(t: Transformer) -> Any:
    import timm

    e = _entry(t)
    try:
        return timm.create_model(t.timm_name, pretrained=True)
    except Exception as exc:
        raise BuildError(f"{t.name}: cannot get timm's {e['hf_hub_id']} weights from the Hugging Face Hub "
                         f"({type(exc).__name__}: {exc}); use '--weights random' offline") from exc


def build(t: Transformer, variant: str) -> Any:
    import torch

    snapshot.check_version(t.name, "timm")
    if variant == _entry(t)["tag"]:
        return _pretrained(t).eval()
    if variant != "random":
        raise BuildError(f"{t.name} has no weights variant {variant!r}; choose {_entry(t)['tag']} or random")
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(RANDOM_SEED)
        import timm

        model = timm.create_model(t.timm_name, pretrained=False).eval()
    if t.normalisation == "batchnorm":
        reestimate_batchnorm(model, calibration(t).load())
    return model


def calibration(t: Transformer) -> Dataset:
    return photo_crops.calibration(preprocessing(t), t.name)


def evaluation(t: Transformer) -> Dataset:
    prep = preprocessing(t)

    def load() -> list[tuple[Any, Any]]:
        samples = photo_crops.crops(prep, t.name, mirrored=True, count=EVALUATION_CROPS)
        return agreement.label_with_float(lambda v: build(t, v), samples, "class")

    return Dataset(
        size=EVALUATION_CROPS * len(photo_crops.PHOTOS),
        description=(f"the mirror images of {EVALUATION_CROPS} calibration crops of each photo, labelled with "
                     "the random variant's float top-1 (no labelled ImageNet images ship offline)"),
        load=load,
        identity=lambda: (f"{photo_crops.identity(prep, t.name, mirrored=True, count=EVALUATION_CROPS)};"
                          f"labels=float-top1-of-random:seed={RANDOM_SEED};timm={snapshot.version('timm')}"),
    )


def _random_description(t: Transformer, cal: Dataset) -> str:
    init = f"untrained: timm's init after torch.manual_seed({RANDOM_SEED})"
    if t.normalisation == "layernorm":
        return f"{init}; LayerNorm normalises each token by its own statistics, so there is nothing to re-estimate"
    return f"{init}, then every BatchNorm's statistics re-estimated on the {cal.size} calibration crops"


def spec(t: Transformer) -> ModelSpec:
    e = _entry(t)
    prep = preprocessing(t)
    side = prep.side
    cal = calibration(t)
    count = EVALUATION_CROPS * len(photo_crops.PHOTOS)
    norm = "ImageNet mean and std" if prep.mean == photo_crops.IMAGENET_MEAN else f"mean {prep.mean} and std {prep.std}"
    return ModelSpec(
        name=t.name,
        version=VERSION,
        description=(f"{t.summary}; ImageNet-1k classifier (timm's {t.timm_name}). Input: one RGB image "
                     f"{side}×{side}, /255 then {norm}; timm evaluates it after a {e['interpolation']} resize "
                     f"and a {e['crop_pct']} center crop."),
        task="image-classification",
        inputs=(InputSpec("image", (1, 3, side, side), "float32", range=prep.range, mean=prep.mean, std=prep.std),),
        build=lambda variant: build(t, variant),
        example_inputs=lambda: cal.load()[0],
        calibration=cal,
        evaluation=evaluation(t),
        metrics=(Metric(
            "top1", top1, higher_is_better=True, max_drop=50.0,
            description=f"top-1 against the random variant's float top-1 on {count} mirrored photo crops",
        ),),
        weights=(
            WeightsVariant(
                name=e["tag"],
                description=f"timm's {e['hf_hub_id']} weights, downloaded from the Hugging Face Hub by timm",
                origin=f"https://huggingface.co/{e['hf_hub_id']}",
                licence=e["licence"],
                identity=lambda: f"hf:{e['hf_hub_id']};timm={snapshot.version('timm')}",
            ),
            WeightsVariant(
                name="random",
                description=_random_description(t, cal),
                origin="generated",
                licence="n/a",
                identity=lambda: (f"seed:{RANDOM_SEED};timm={snapshot.version('timm')}"
                                  + (f";bn-reestimated-on:{cal.identity()}" if t.normalisation == "batchnorm" else "")),
            ),
        ),
        default_weights=e["tag"],
        num_labels=e["num_classes"],
        layouts=("nchw", "nhwc"),
    )


def specs() -> tuple[ModelSpec, ...]:
    return tuple(spec(t) for t in TRANSFORMERS)
