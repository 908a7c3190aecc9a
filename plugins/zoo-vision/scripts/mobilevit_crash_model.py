"""The smallest part of MobileViT-XS (timm, random weights) found on which Vela 5.1.0 segfaults for
Ethos-U55 and U65: the first MobileViT block's local convolutions, its unfold into 2×2 patches, and
its first transformer block's attention (docs/upstream.md). Each part alone lowers: the unfold and
LayerNorm, the LayerNorm and qkv projection, the attention on (4, 4, 256, 24).

    zoo --model-file mobilevit_crash_model.py build mobilevit_crash_model -t u55-128 --executor processes
"""

import timm
import torch

torch.manual_seed(0)
_BLOCK = timm.create_model("mobilevit_xs", pretrained=False).eval().stages[2][1]


class FirstAttention(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.block = _BLOCK

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b = self.block
        x = b.conv_1x1(b.conv_kxk(x))
        n, c, h, w = x.shape
        x = x.reshape(n * c * h // 2, 2, w // 2, 2).transpose(1, 2)
        x = x.reshape(n, c, h * w // 4, 4).transpose(1, 3).reshape(n * 4, h * w // 4, c)
        t = b.transformer[0]
        return x + t.attn(t.norm1(x))


ModelUnderTest = FirstAttention().eval()
ModelInputs = (torch.rand(1, 64, 32, 32),)
