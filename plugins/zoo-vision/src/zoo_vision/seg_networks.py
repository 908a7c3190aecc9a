"""torchvision's two MobileNetV3 segmentation networks as zoo builds them: weights loaded
(hash-checked) or initialised, the ``out`` logits alone returned, and the upsampling rewrites.

``upsampling="bilinear"`` runs torchvision's own forward. ``"nearest"`` runs the same layers
with every ``F.interpolate`` in nearest mode (LRASPP's 14→28 inside the head and the 28→224
at the end; DeepLabV3's 14→224 at the end, its ASPP pooling branch broadcast with ``expand``,
which is what upsampling a 1×1 map is). Torch loads inside the functions."""

from __future__ import annotations

import hashlib
from functools import cache
from pathlib import Path
from typing import Any

from zoo import BuildError
from zoo_vision import snapshot

UPSAMPLING = ("bilinear", "nearest")
RANDOM_SEED = 0


def _checkpoint(model: str, entry: dict[str, Any]) -> Path:
    import torch

    return Path(torch.hub.get_dir()) / "checkpoints" / entry["url"].rsplit("/", 1)[1]


def pretrained(model: str, torchvision_name: str) -> Any:
    """torchvision's weights, downloaded by torchvision (which checks the hash) or placed by
    hand (checked here); offline a BuildError that names ``--weights random``."""
    from torchvision.models import get_model, get_model_weights

    entry = snapshot.data()["segmentation"][torchvision_name]
    weights = get_model_weights(torchvision_name)[entry["weights"]]
    path = _checkpoint(model, entry)
    advice = f"use '--weights random', or download {entry['url']} on a connected machine and place it at {path}"
    if path.is_file() and not hashlib.sha256(path.read_bytes()).hexdigest().startswith(entry["sha256_prefix"]):
        raise BuildError(f"{model}: {path} is not torchvision's {entry['weights']} file (its sha256 does not "
                         f"start with {entry['sha256_prefix']}); delete it, then {advice}")
    try:
        network = get_model(torchvision_name, weights=weights)
    except Exception as e:
        raise BuildError(f"{model}: cannot get torchvision's {entry['weights']} weights "
                         f"({type(e).__name__}: {e}); {advice}") from e
    network.aux_classifier = None  # trained with an auxiliary loss; its output is not ours
    return network


def random_init(torchvision_name: str) -> Any:
    """torchvision's init after ``torch.manual_seed``, without the ImageNet backbone weights
    (``weights_backbone=None``: nothing is downloaded); the global RNG is left untouched."""
    import torch
    from torchvision.models import get_model

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(RANDOM_SEED)
        return get_model(torchvision_name, weights=None, weights_backbone=None, num_classes=21).eval()


@cache
def logits_class() -> type[Any]:
    import torch
    from torch import nn
    from torch.nn import functional as F  # noqa: N812
    from torchvision.models.segmentation.deeplabv3 import ASPPPooling, DeepLabV3
    from torchvision.models.segmentation.lraspp import LRASPP

    class SegmentationLogits(nn.Module):
        """The ``out`` logits, (1, 21, H, W), of an LRASPP or DeepLabV3 network."""

        def __init__(self, network: nn.Module, upsampling: str) -> None:
            super().__init__()
            if upsampling not in UPSAMPLING:
                raise ValueError(f"upsampling {upsampling!r}: use one of {', '.join(UPSAMPLING)}")
            self.network = network
            self.upsampling = upsampling

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            if self.upsampling == "bilinear":
                return self.network(x)["out"]
            if isinstance(self.network, LRASPP):
                return self._lraspp(x)
            if isinstance(self.network, DeepLabV3):
                return self._deeplab(x)
            raise TypeError(f"no {self.upsampling} rewrite for {type(self.network).__name__}")

        def _resize(self, x: torch.Tensor, size: Any) -> torch.Tensor:
            return F.interpolate(x, size=size, mode=self.upsampling)

        def _lraspp(self, x: torch.Tensor) -> torch.Tensor:
            features = self.network.backbone(x)
            head = self.network.classifier
            low, high = features["low"], features["high"]
            y = head.cbr(high) * head.scale(high)
            y = self._resize(y, low.shape[-2:])
            return self._resize(head.low_classifier(low) + head.high_classifier(y), x.shape[-2:])

        def _deeplab(self, x: torch.Tensor) -> torch.Tensor:
            features = self.network.backbone(x)["out"]
            aspp, *rest = self.network.classifier
            branches = []
            for branch in aspp.convs:
                if isinstance(branch, ASPPPooling):
                    pooled = features
                    for layer in branch:
                        pooled = layer(pooled)
                    branches.append(pooled.expand(-1, -1, *features.shape[-2:]))
                else:
                    branches.append(branch(features))
            y = aspp.project(torch.cat(branches, dim=1))
            for layer in rest:
                y = layer(y)
            return self._resize(y, x.shape[-2:])

    return SegmentationLogits
