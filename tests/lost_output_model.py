"""A model file (aot_arm_compiler style) with LRASPP's shape in miniature: a feature
map leaves the first NPU partition for the CPU's bilinear upsampling's consumer
and is also used inside that partition, which goes on from it. Vela drops that
output on the U55 (zoo.registry.compile.tosa_outputs); the U85 runs it whole."""

from __future__ import annotations

import textwrap

LOST_OUTPUT_MODEL = textwrap.dedent('''
    """LRASPP in miniature: a feature map leaves the first NPU partition and is also used inside it."""
    import torch
    import torch.nn.functional as F

    class TwoHeads(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.c1 = torch.nn.Conv2d(3, 8, 3, padding=1)
            self.c2 = torch.nn.Conv2d(8, 16, 3, stride=2, padding=1)
            self.low = torch.nn.Conv2d(8, 4, 1)
            self.high = torch.nn.Conv2d(16, 4, 1)

        def forward(self, x):
            a = torch.relu(self.c1(x))
            b = torch.relu(self.c2(a))
            up = F.interpolate(b, size=a.shape[-2:], mode="bilinear", align_corners=False)
            return self.low(a) + self.high(up)

    torch.manual_seed(0)
    ModelUnderTest = TwoHeads().eval()
    ModelInputs = (torch.rand(1, 3, 16, 16),)
    CalibrationData = [(torch.rand(1, 3, 16, 16),) for _ in range(4)]
''')
