"""LRASPP-MobileNetV3-Large (torchvision, random weights, 224×224) as an aot_arm_compiler model
file: the cross-check of docs/vision-limits.md lowers this same file with ExecuTorch's own
compiler and with ``zoo --model-file``.

    python -m executorch.backends.arm.scripts.aot_arm_compiler -m lraspp_model.py -t ethos-u55-128 -q -d -o lraspp.pte
    zoo --model-file lraspp_model.py build lraspp_model -t u55-128
"""

import torch
from torchvision.models.segmentation import lraspp_mobilenet_v3_large


class Logits(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.network = lraspp_mobilenet_v3_large(weights=None, weights_backbone=None).eval()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.network(x)["out"]


torch.manual_seed(0)
ModelUnderTest = Logits().eval()
ModelInputs = (torch.rand(1, 3, 224, 224),)
