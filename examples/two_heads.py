"""LRASPP in miniature: a feature map leaves the first NPU partition and is also used inside it.

Vela 5.1.0 drops that output on a U55, and zoo refuses the .pte with the cause named; the U85
runs it whole. Try it: zoo --model-file examples/two_heads.py build -t u55-128,u85-256 --keep-going
(docs/upstream.md)."""
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
        # No activations: zoo keeps a ReLU after a convolution as a fused CLAMP (issue 45), and with
        # one on these feature maps Vela writes both outputs; a bare convolution's output is lost.
        a = self.c1(x)
        b = self.c2(a)
        up = F.interpolate(b, size=a.shape[-2:], mode="bilinear", align_corners=False)
        return self.low(a) + self.high(up)

torch.manual_seed(0)
ModelUnderTest = TwoHeads().eval()
ModelInputs = (torch.rand(1, 3, 16, 16),)
CalibrationData = [(torch.rand(1, 3, 16, 16),) for _ in range(4)]
