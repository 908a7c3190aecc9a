"""DeiT-tiny (timm, random weights) as an aot_arm_compiler model file, for the cross-check of
docs/vision-limits.md: ExecuTorch's own compiler and ``zoo --model-file`` lower this same file.

    python -m executorch.backends.arm.scripts.aot_arm_compiler -m deit_tiny_model.py -t ethos-u55-128 -q -d -o deit.pte
    zoo --model-file deit_tiny_model.py build deit_tiny_model -t u55-128
"""

import timm
import torch

torch.manual_seed(0)
ModelUnderTest = timm.create_model("deit_tiny_patch16_224", pretrained=False).eval()
ModelInputs = (torch.rand(1, 3, 224, 224),)
