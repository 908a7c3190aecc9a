"""``ssdlite320-mobilenetv3-large``: torchvision's SSDLite up to its box and class heads; anchor
decoding and NMS run on the CPU in :mod:`zoo_vision.boxes`, with anchors snapshotted from
torchvision's own ``DefaultBoxGenerator`` into ``data/ssdlite320_anchors.json``."""

from __future__ import annotations

import json
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
    hub_checkpoint,
    recall_vs_float,
    reestimate_batchnorm,
)
from zoo_vision import boxes, photos

NAME = "ssdlite320-mobilenetv3-large"
VERSION = "1"
SIDE = 320
CLASSES = 91
RANDOM_SEED = 0
ANCHORS = Path(__file__).parent / "data" / "ssdlite320_anchors.json"
COCO_URL = "https://download.pytorch.org/models/ssdlite320_mobilenet_v3_large_coco-a79551df.pth"
KEEP = 10

DESCRIPTION = (
    f"torchvision's ssdlite320_mobilenet_v3_large ({CLASSES} COCO classes) from the {SIDE}×{SIDE} image to its heads: "
    "one output (1, anchors, 4 + 91), each anchor's box regression then its class logits. Anchor decoding, "
    "softmax and per-class NMS are the CPU's (zoo_vision/boxes.py, torchvision's postprocessing). "
    "Input: RGB in [0, 1] scaled to [-1, 1], as torchvision's transform feeds it, without its resize."
)


@cache
def anchors() -> list[list[float]]:
    data: list[list[float]] = json.loads(ANCHORS.read_text())["anchors"]
    return data


def torchvision_model(weights: str | None) -> Any:
    from torchvision.models.detection import ssdlite320_mobilenet_v3_large

    return ssdlite320_mobilenet_v3_large(weights=weights, weights_backbone=None, num_classes=CLASSES)


def generate_anchors() -> list[list[float]]:
    """The anchors torchvision's DefaultBoxGenerator gives a 320×320 image (torch)."""
    import torch
    from torchvision.models.detection.image_list import ImageList

    model = torchvision_model(None).eval()
    image = torch.zeros(1, 3, SIDE, SIDE)
    with torch.no_grad():
        features = list(model.backbone(image).values())
        (generated,) = model.anchor_generator(ImageList(image, [(SIDE, SIDE)]), features)
    return [[float(v) for v in row] for row in generated.tolist()]


@cache
def network_class() -> type[Any]:
    import torch
    from torch import nn

    class SSDLiteHeads(nn.Module):
        """The backbone and head of a torchvision SSD; outputs concatenated on the last axis."""

        def __init__(self, ssd: Any) -> None:
            super().__init__()
            self.backbone, self.head = ssd.backbone, ssd.head

        def forward(self, x: Any) -> Any:
            out = self.head(list(self.backbone(x).values()))
            return torch.cat([out["bbox_regression"], out["cls_logits"]], dim=2)

    return SSDLiteHeads


def _build(variant: str) -> Any:
    import torch

    if variant == "coco":
        hub_checkpoint(COCO_URL, model=NAME)  # checked; offline, refused before any download
        try:
            ssd = torchvision_model("COCO_V1")
        except Exception as e:
            raise BuildError(
                f"{NAME}: torchvision could not load its COCO weights ({COCO_URL}): {type(e).__name__}: {e}. "
                "Build with --weights random, or delete the file and fetch again online"
            ) from e
        model = network_class()(ssd).eval()
    elif variant == "random":
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(RANDOM_SEED)
            model = network_class()(torchvision_model(None))
        reestimate_batchnorm(model, _calibration())
    else:
        raise BuildError(f"{NAME} has no weights variant {variant!r}; choose coco or random")
    return model.eval()


def _images() -> list[tuple[Any, ...]]:
    return [((image * 2.0 - 1.0)[None].contiguous(),) for image in photos.views(SIDE, SIDE)]


def _calibration() -> list[tuple[Any, ...]]:
    return _images()


def decode(sample_outputs: Any) -> list[boxes.Detection]:
    """One sample's (1, A, 95) output as its ten best detections."""
    import numpy as np

    out = np.asarray(sample_outputs[0].detach().numpy() if hasattr(sample_outputs[0], "detach")
                     else sample_outputs[0], dtype=np.float64).reshape(-1, 4 + CLASSES)
    return boxes.decode_ssd(out[:, :4], out[:, 4:], anchors(), (SIDE, SIDE), keep=KEEP)


def spec() -> ModelSpec:
    data = f"{photos.identity()};views:{SIDE}x{SIDE};[-1,1]"
    return ModelSpec(
        name=NAME,
        version=VERSION,
        description=DESCRIPTION,
        task="object-detection",
        inputs=(InputSpec("image", (1, 3, SIDE, SIDE), "float32", range=(-1.0, 1.0)),),
        build=_build,
        example_inputs=lambda: _images()[0],
        calibration=Dataset(12, f"scikit-learn's two sample photos: {photos.VIEWS}", _calibration,
                            lambda: data),
        evaluation=Dataset(12, f"the calibration images; the float model's {KEEP} best boxes on each are the truth",
                           lambda: [(s, None) for s in _images()], lambda: data),
        weights=(
            WeightsVariant(
                name="coco",
                description="torchvision's SSDLite320_MobileNet_V3_Large_Weights.COCO_V1 (COCO mAP 21.3)",
                origin=COCO_URL + " (through torchvision, which checks the hash in the file name)",
                licence="BSD-3-Clause (torchvision); trained on COCO (CC BY 4.0 annotations)",
                identity=lambda: "torchvision:" + COCO_URL,
            ),
            WeightsVariant(
                name="random",
                description=(f"untrained: torchvision's init after torch.manual_seed({RANDOM_SEED}), then every "
                             "BatchNorm's statistics re-estimated on the calibration images"),
                origin="generated",
                licence="n/a",
                identity=lambda: f"seed:{RANDOM_SEED};bn-reestimated-on:{data}",
            ),
        ),
        metrics=(Metric(
            "recall50", recall_vs_float(NAME, decode), higher_is_better=True, max_drop=30.0,
            description=f"recall at IoU 0.5 of the float model's {KEEP} best boxes per image on the 12 images",
        ),),
        default_weights="coco",
        layouts=("nchw", "nhwc"),
    )
