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
        self.c2 = torch.nn.Conv2d(8, 64, 3, stride=2, padding=1)
        self.low = torch.nn.Conv2d(8, 4, 1)
        self.high = torch.nn.Conv2d(64, 4, 1)

    def forward(self, x):
        # No activations: zoo keeps a ReLU after a convolution as a fused CLAMP (issue 45), and with
        # one on these feature maps Vela writes both outputs; a bare convolution's output is lost.
        # The pool makes the upsampling x4, which stays on the U55's CPU as LRASPP's last x8 does (zoo
        # lowers a x2 one on the NPU: bilinear_x2.py); 64 channels keep that output at 1,024 bytes.
        a = self.c1(x)
        b = F.avg_pool2d(self.c2(a), 2)
        up = F.interpolate(b, size=a.shape[-2:], mode="bilinear", align_corners=False)
        return self.low(a) + self.high(up)

torch.manual_seed(0)
ModelUnderTest = TwoHeads().eval()
ModelInputs = (torch.rand(1, 3, 16, 16),)
CalibrationData = [(torch.rand(1, 3, 16, 16),) for _ in range(4)]
