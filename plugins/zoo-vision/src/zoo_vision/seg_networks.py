"""torchvision's two MobileNetV3 segmentation networks as zoo builds them: weights loaded
(hash-checked) or initialised, the ``out`` logits alone returned, and the upsampling rewrites.

``upsampling="bilinear"`` runs torchvision's own forward. ``"nearest"`` runs the same layers
with every ``F.interpolate`` in nearest mode (LRASPP's 14→28 inside the head and the 28→224
at the end; DeepLabV3's 14→224 at the end, its ASPP pooling branch broadcast with ``expand``,
which is what upsampling a 1×1 map is). ``"transposed"`` makes each bilinear upsampling a chain
of ×2 steps, each a stride-2 transposed convolution with the bilinear kernel over an input whose
border rows and columns are repeated: exactly ``F.interpolate(scale_factor=2, mode="bilinear")``,
in operators a U55 runs (a stride-8 transposed convolution falls back to the CPU there); ×8 as
three ×2 steps is close to, not equal to, one ×8. In LRASPP the head's 1×1 high classifier then
runs before its ×2 upsampling instead of after (exact: both are linear and the bilinear weights
sum to 1), so the upsampling moves 21 channels instead of 128. Torch loads inside the functions."""

from __future__ import annotations

from functools import cache
from typing import Any

from zoo import BuildError, hub_checkpoint
from zoo_vision import snapshot

UPSAMPLING = ("bilinear", "nearest", "transposed")
RANDOM_SEED = 0
CLASSES = 21


def pretrained(model: str, torchvision_name: str) -> Any:
    """torchvision's weights from torch's hub cache (``zoo.hub_checkpoint``: downloaded, or
    placed by hand, and checked); offline a BuildError that names ``--weights random``."""
    from torchvision.models import get_model, get_model_weights

    entry = snapshot.data()["segmentation"][torchvision_name]
    weights = get_model_weights(torchvision_name)[entry["weights"]]
    path = hub_checkpoint(str(entry["url"]), model=model)  # checked; offline, refused before any download
    try:
        network = get_model(torchvision_name, weights=weights)
    except Exception as e:
        raise BuildError(f"{model}: cannot load torchvision's {entry['weights']} weights from {path} "
                         f"({type(e).__name__}: {e}); use '--weights random', or delete the file and fetch "
                         "again online") from e
    network.aux_classifier = None  # trained with an auxiliary loss; its output is not ours
    return network


def random_init(torchvision_name: str) -> Any:
    """torchvision's init after ``torch.manual_seed``, without the ImageNet backbone weights
    (``weights_backbone=None``: nothing is downloaded); the global RNG is left untouched."""
    import torch
    from torchvision.models import get_model

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(RANDOM_SEED)
        return get_model(torchvision_name, weights=None, weights_backbone=None, num_classes=CLASSES).eval()


@cache
def logits_class() -> type[Any]:
    import torch
    from torch import nn
    from torch.nn import functional as F
    from torchvision.models.segmentation.deeplabv3 import ASPPPooling, DeepLabV3
    from torchvision.models.segmentation.lraspp import LRASPP

    class Bilinear2x(nn.Module):
        """``F.interpolate(x, scale_factor=2, mode="bilinear")`` as a transposed convolution."""

        def __init__(self, channels: int) -> None:
            super().__init__()
            taps = torch.tensor([0.25, 0.75, 0.75, 0.25])
            self.up = nn.ConvTranspose2d(channels, channels, 4, stride=2, padding=1, bias=False)
            self.up.weight.requires_grad_(False)
            self.up.weight.zero_()
            for c in range(channels):
                self.up.weight[c, c] = torch.outer(taps, taps)

        def forward(self, x: torch.Tensor) -> Any:
            x = torch.cat([x[:, :, :1], x, x[:, :, -1:]], dim=2)
            x = torch.cat([x[:, :, :, :1], x, x[:, :, :, -1:]], dim=3)
            return self.up(x)[:, :, 2:-2, 2:-2]

    class SegmentationLogits(nn.Module):
        """The ``out`` logits, (1, 21, H, W), of an LRASPP or DeepLabV3 network."""

        def __init__(self, network: nn.Module, upsampling: str) -> None:
            super().__init__()
            if upsampling not in UPSAMPLING:
                raise ValueError(f"upsampling {upsampling!r}: use one of {', '.join(UPSAMPLING)}")
            self.network: Any = network
            self.upsampling = upsampling
            self.twice = Bilinear2x(CLASSES) if upsampling == "transposed" else None

        def forward(self, x: torch.Tensor) -> Any:
            if self.upsampling == "bilinear":
                return self.network(x)["out"]
            if isinstance(self.network, LRASPP):
                return self._lraspp(x)
            if isinstance(self.network, DeepLabV3):
                return self._deeplab(x)
            raise TypeError(f"no {self.upsampling} rewrite for {type(self.network).__name__}")

        def _resize(self, x: torch.Tensor, size: Any) -> Any:
            if self.twice is None:
                return F.interpolate(x, size=size, mode=self.upsampling)
            while x.shape[-1] < size[-1]:
                if (x.shape[-2] * 2, x.shape[-1] * 2) > tuple(size):
                    raise ValueError(f"{tuple(x.shape[-2:])} to {tuple(size)} is not a power-of-two upsampling")
                x = self.twice(x)
            return x

        def _lraspp(self, x: torch.Tensor) -> Any:
            features = self.network.backbone(x)
            head = self.network.classifier
            low, high = features["low"], features["high"]
            y = head.cbr(high) * head.scale(high)
            if self.twice is None:
                y = head.high_classifier(self._resize(y, low.shape[-2:]))
            else:
                y = self._resize(head.high_classifier(y), low.shape[-2:])
            return self._resize(head.low_classifier(low) + y, x.shape[-2:])

        def _deeplab(self, x: torch.Tensor) -> Any:
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
