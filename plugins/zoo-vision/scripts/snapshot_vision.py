"""Write src/zoo_vision/data/vision_models.json: what registering the segmentation and
transformer models needs from torchvision and timm, so that registration imports neither.

    .venv/bin/python plugins/zoo-vision/scripts/snapshot_vision.py
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

SNAPSHOT = Path(__file__).resolve().parents[1] / "src" / "zoo_vision" / "data" / "vision_models.json"
SEGMENTATION = ("lraspp_mobilenet_v3_large", "deeplabv3_mobilenet_v3_large")
TIMM = ("deit_tiny_patch16_224", "mobilevit_xs")


def snapshot() -> dict[str, Any]:
    import timm
    import torch
    import torchvision
    from torchvision.models import get_model_weights

    segmentation: dict[str, Any] = {}
    for name in SEGMENTATION:
        weights = next(iter(get_model_weights(name)))
        found = torch.hub.HASH_REGEX.search(weights.url.rsplit("/", 1)[1])
        metrics = weights.meta["_metrics"]
        (dataset,) = metrics
        segmentation[name] = {
            "weights": weights.name, "url": weights.url, "sha256_prefix": found.group(1) if found else "",
            "num_params": weights.meta["num_params"], "gflops": weights.meta["_ops"],
            "miou": metrics[dataset]["miou"], "pixel_acc": metrics[dataset]["pixel_acc"], "dataset": dataset,
            "resize_size": weights.transforms().resize_size[0], "mean": list(weights.transforms().mean),
            "std": list(weights.transforms().std), "categories": list(weights.meta["categories"]),
        }
    transformers: dict[str, Any] = {}
    for name in TIMM:
        cfg = timm.create_model(name, pretrained=False).pretrained_cfg
        transformers[name] = {
            "hf_hub_id": cfg["hf_hub_id"], "tag": cfg["tag"], "licence": cfg["license"],
            "input_size": list(cfg["input_size"]), "interpolation": cfg["interpolation"],
            "crop_pct": cfg["crop_pct"], "mean": list(cfg["mean"]), "std": list(cfg["std"]),
            "num_classes": cfg["num_classes"],
        }
    return {"torchvision_version": torchvision.__version__.split("+")[0], "timm_version": timm.__version__,
            "segmentation": segmentation, "transformers": transformers}


def dumps(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


if __name__ == "__main__":
    SNAPSHOT.write_text(dumps(snapshot()), encoding="utf-8")
    print(f"wrote {SNAPSHOT}")
