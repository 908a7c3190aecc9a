"""DeepLabV3-MobileNetV3-Large (torchvision, random weights, 224×224) as an aot_arm_compiler model
file, for the cross-check of docs/vision-limits.md (benchmarks/aot_cross_check.py)."""

import torch
from torchvision.models.segmentation import deeplabv3_mobilenet_v3_large


class Logits(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.network = deeplabv3_mobilenet_v3_large(weights=None, weights_backbone=None, aux_loss=False).eval()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.network(x)["out"]


torch.manual_seed(0)
ModelUnderTest = Logits().eval()
ModelInputs = (torch.rand(1, 3, 224, 224),)
