"""Semantic segmentation: torchvision's LRASPP- and DeepLabV3-MobileNetV3-Large, and the
nearest-upsampling rewrite of LRASPP (see docs/vision-limits.md for what each lowers to).

Input 224×224, not the 520 torchvision evaluates at: at 520 the logits alone are 21×520×520
(5.7 M int8 values) and DeepLabV3's stride-16 features 960×33×33, past what an Ethos-U's
SRAM and a two-core compile can take; 224 is the size ExecuTorch's Arm examples lower.
Registration reads the snapshot only; torch and torchvision load when a model is built."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from zoo import Dataset, InputSpec, Metric, ModelSpec, WeightsVariant, miou, reestimate_batchnorm
from zoo_vision import agreement, photo_crops, seg_networks, snapshot

VERSION = "1"
SIDE = 224
EVALUATION_CROPS = 2
"""Per photo: 4 mirrored crops in all; the TOSA reference model takes long on these networks."""
PREPROCESSING = photo_crops.Preprocessing(SIDE)
LICENCE = "BSD-3-Clause (torchvision); trained on COCO with the 20 Pascal VOC classes, whose terms also apply"


@dataclass(frozen=True)
class Network:
    name: str
    torchvision_name: str
    upsampling: str
    summary: str


NETWORKS = (
    Network("lraspp-mobilenetv3-large", "lraspp_mobilenet_v3_large", "bilinear",
            "LRASPP (Howard et al. 2019, Searching for MobileNetV3) on MobileNetV3-Large: a 1×1 branch gated by a "
            "pooled sigmoid on the stride-16 features, bilinearly upsampled to stride 8 and added to a classifier of "
            "the stride-8 features, then bilinearly upsampled to the input"),
    Network("deeplabv3-mobilenetv3-large", "deeplabv3_mobilenet_v3_large", "bilinear",
            "DeepLabV3 (Chen et al. 2017) on dilated MobileNetV3-Large: ASPP (1×1, three 3×3 atrous rates 12/24/36 "
            "and image pooling) on the stride-16 features, a 3×3 head, then bilinearly upsampled to the input"),
    Network("lraspp-mobilenetv3-large-nearest", "lraspp_mobilenet_v3_large", "nearest",
            "A rewrite of lraspp-mobilenetv3-large: the same layers and weights, both bilinear upsamplings "
            "(14→28 in the head, 28→224 at the end) replaced by nearest-neighbour ones, so that "
            "upsample_bilinear2d is gone from the graph; the accuracy this costs is measured in "
            "docs/vision-limits.md"),
    Network("lraspp-mobilenetv3-large-convt", "lraspp_mobilenet_v3_large", "transposed",
            "A rewrite of lraspp-mobilenetv3-large: the same weights, each bilinear upsampling made of exact ×2 "
            "steps, each a stride-2 transposed convolution with the fixed bilinear kernel over the input with its "
            "border repeated (28→224 as three of them, close to one ×8 bilinear); the head's 1×1 high classifier "
            "runs before its ×2 upsampling, which is exact, so 21 channels are upsampled, not 128"),
    Network("deeplabv3-mobilenetv3-large-convt", "deeplabv3_mobilenet_v3_large", "transposed",
            "A rewrite of deeplabv3-mobilenetv3-large: the same weights, the final 14→224 bilinear upsampling made "
            "of four exact ×2 steps, each a stride-2 transposed convolution with the fixed bilinear kernel over the "
            "input with its border repeated, and the ASPP image-pooling branch broadcast with expand"),
)


def network(name: str) -> Network:
    for n in NETWORKS:
        if n.name == name:
            return n
    raise KeyError(f"{name!r} is not a segmentation model of the vision pack")


def build(net: Network, variant: str) -> Any:
    entry = snapshot.data()["segmentation"][net.torchvision_name]
    snapshot.check_version(net.name, "torchvision")
    if variant == entry["weights"]:
        model = seg_networks.pretrained(net.name, net.torchvision_name)
    elif variant == "random":
        model = seg_networks.random_init(net.torchvision_name)
        reestimate_batchnorm(model, calibration(net).load())
    else:
        from zoo import BuildError

        raise BuildError(f"{net.name} has no weights variant {variant!r}; choose {entry['weights']} or random")
    return seg_networks.logits_class()(model.eval(), net.upsampling).eval()


def calibration(net: Network) -> Dataset:
    return photo_crops.calibration(PREPROCESSING, net.name)


def evaluation(net: Network) -> Dataset:
    def load() -> list[tuple[Any, Any]]:
        samples = photo_crops.crops(PREPROCESSING, net.name, mirrored=True, count=EVALUATION_CROPS)
        return agreement.label_with_float(lambda v: build(net, v), samples, "mask")

    return Dataset(
        size=EVALUATION_CROPS * len(photo_crops.PHOTOS),
        description=(f"the mirror images of {EVALUATION_CROPS} calibration crops of each photo, labelled with the "
                     "random variant's float argmax per pixel (no segmentation ground truth ships offline)"),
        load=load,
        identity=lambda: (f"{photo_crops.identity(PREPROCESSING, net.name, mirrored=True, count=EVALUATION_CROPS)};"
                          f"labels=float-argmax-of-random:seed={seg_networks.RANDOM_SEED};"
                          f"torchvision={snapshot.version('torchvision')};upsampling={net.upsampling}"),
    )


def spec(net: Network) -> ModelSpec:
    entry = snapshot.data()["segmentation"][net.torchvision_name]
    categories = tuple(entry["categories"])
    cal = calibration(net)
    return ModelSpec(
        name=net.name,
        version=VERSION,
        description=(
            f"{net.summary}. Returns the 'out' logits only, (1, {len(categories)}, {SIDE}, {SIDE}): the Pascal VOC "
            f"classes, background first. Input: one RGB image {SIDE}×{SIDE}, /255 then ImageNet mean and std "
            f"(torchvision evaluates at {entry['resize_size']}; {SIDE} keeps the activations within an Ethos-U's "
            "memory and the compile within minutes)."
        ),
        task="semantic-segmentation",
        inputs=(InputSpec("image", (1, 3, SIDE, SIDE), "float32", range=PREPROCESSING.range,
                          mean=PREPROCESSING.mean, std=PREPROCESSING.std),),
        build=lambda variant: build(net, variant),
        example_inputs=lambda: cal.load()[0],
        calibration=cal,
        evaluation=evaluation(net),
        metrics=(Metric(
            "miou", miou(len(categories), ignore_index=None), higher_is_better=True, max_drop=25.0,
            description=("mIoU of the per-pixel argmax against the random variant's float argmax on "
                         f"{EVALUATION_CROPS * len(photo_crops.PHOTOS)} mirrored photo crops"),
        ),),
        weights=(
            WeightsVariant(
                name=entry["weights"],
                description=(f"torchvision's {entry['weights']} weights ({entry['dataset']} mIoU {entry['miou']} %, "
                             f"pixel accuracy {entry['pixel_acc']} % at {entry['resize_size']}), downloaded and "
                             "hash-checked by torchvision; the auxiliary classifier is dropped"),
                origin=entry["url"],
                licence=LICENCE,
                identity=lambda: f"{entry['url']};torchvision={snapshot.version('torchvision')}",
            ),
            WeightsVariant(
                name="random",
                description=(f"untrained: torchvision's init after torch.manual_seed({seg_networks.RANDOM_SEED}), "
                             "no backbone weights, then every BatchNorm's statistics re-estimated on the "
                             f"{cal.size} calibration crops so the output depends on the input"),
                origin="generated",
                licence="n/a",
                identity=lambda: (f"seed:{seg_networks.RANDOM_SEED};torchvision={snapshot.version('torchvision')};"
                                  f"bn-reestimated-on:{cal.identity()}"),
            ),
        ),
        default_weights=entry["weights"],
        labels=categories,
        num_labels=len(categories),
        layouts=("nchw", "nhwc"),
    )


def specs() -> tuple[ModelSpec, ...]:
    return tuple(spec(n) for n in NETWORKS)
