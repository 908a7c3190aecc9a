"""DeiT-tiny (timm, random weights, 224×224) as an aot_arm_compiler model file, for the
cross-check of docs/vision-limits.md (benchmarks/aot_cross_check.py)."""

import timm
import torch

torch.manual_seed(0)
ModelUnderTest = timm.create_model("deit_tiny_patch16_224", pretrained=False).eval()
ModelInputs = (torch.rand(1, 3, 224, 224),)
