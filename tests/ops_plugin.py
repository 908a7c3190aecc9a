"""Tiny RGB networks, one per operation the command-stream interpreter must model (issue 46):
each a convolution (or two) and the operation, small enough to build for u55-128 with ``--verify``
in seconds, so that the NPU-program level runs the program Vela makes of that operation."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from tests import rgb_plugin
from zoo import ModelSpec, hookimpl

__all__ = ["MODELS"]


def _network(op: str) -> Any:
    import torch
    import torch.nn.functional as F

    class Op(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.a = torch.nn.Conv2d(3, 8, 3, padding=1)
            self.b = torch.nn.Conv2d(3, 8, 3, padding=1)
            self.up = torch.nn.ConvTranspose2d(8, 8, 2, stride=2)
            self.dilated = torch.nn.Conv2d(8, 8, 3, padding=2, dilation=2)
            self.prelu = torch.nn.PReLU(8, init=0.2)
            self.norm = torch.nn.LayerNorm(8)
            if op == "batchmul":  # two heads of 30, as MobileViT's attention
                self.qkv = torch.nn.Linear(8, 3 * 2 * 30)
            if op == "stridepad":  # a stride the NPU lacks, with padding
                self.strided = torch.nn.Conv2d(8, 8, 5, stride=5, padding=2)
            if op == "stridepad1":  # the same from one channel, as wav2letter's first convolution
                self.strided = torch.nn.Conv2d(1, 8, (1, 6), stride=(1, 5), padding=(0, 2))
            if op == "chanshuffle":  # shufflenet-v2's stride-1 unit: half the channels through 1x1, 3x3 depthwise, 1x1
                from torchvision.models.shufflenetv2 import InvertedResidual
                self.widen = torch.nn.Conv2d(8, 48, 1)
                self.units = torch.nn.Sequential(InvertedResidual(48, 48, 1), InvertedResidual(48, 48, 1))
            if op == "depthwise":  # palm-detection's depthwise kernels: 3x3, and 5x5 at stride 2 (25 positions)
                self.dw3 = torch.nn.Conv2d(8, 8, 3, padding=1, groups=8)
                self.dw5 = torch.nn.Conv2d(8, 8, 5, stride=2, padding=2, groups=8)
            if op in ("conv64", "a16-forms"):  # a 1x1 convolution whose output two operations read (MediaPipe's projections)
                self.pw = torch.nn.Conv2d(8, 8, 1)
                self.pw2 = torch.nn.Conv2d(8, 8, 1)
            if op == "deconv3":  # a decoder's x2 transposed convolution: 3x3 taps, so Vela's kernels differ in size
                self.up3 = torch.nn.ConvTranspose2d(8, 6, 3, stride=2, padding=1, output_padding=1)

        def forward(self, x: Any) -> Any:
            a = self.a(x)
            if op == "max":
                return torch.maximum(a, self.b(x))
            if op == "min":
                return torch.minimum(a, self.b(x))
            if op == "clamp":
                return torch.clamp(a + self.b(x), -0.5, 0.75)
            if op == "lrelu":
                return torch.nn.functional.leaky_relu(a, 0.1)
            if op == "abs":
                return torch.abs(a)
            if op == "sigmoid":
                return torch.sigmoid(a)
            if op == "tanh":
                return torch.tanh(a)
            if op == "hardswish":
                return F.hardswish(a)
            if op == "hardsigmoid":
                return F.hardsigmoid(a)
            if op == "avgpad":
                return F.avg_pool2d(a, 3, stride=2, padding=1, count_include_pad=True)
            if op == "avgpad-excl":
                return F.avg_pool2d(a, 3, stride=2, padding=1, count_include_pad=False)
            if op == "mix":  # the compile tier's one build: each mode the interpreter grew for these networks
                y = torch.abs(torch.maximum(a, self.b(x)) + torch.minimum(a, self.b(x)))
                y = F.avg_pool2d(y, 3, stride=2, padding=1, count_include_pad=False)
                return self.up(self.dilated(F.interpolate(y, scale_factor=2, mode="nearest")))
            if op == "upsample":
                return F.interpolate(a, scale_factor=2, mode="nearest")
            if op == "bilinear":
                return F.interpolate(a, scale_factor=2, mode="bilinear", align_corners=False)
            if op == "deconv":
                return self.up(a)
            if op == "deconv3":
                return self.up3(a)
            if op == "dilated":
                return self.dilated(a)
            if op == "gelu":
                return F.gelu(a)
            if op == "silu":
                return F.silu(a)
            if op == "prelu":
                return self.prelu(a)
            if op == "upsample4":
                return F.interpolate(a, scale_factor=4, mode="nearest")
            if op == "chanmean":
                return a.mean(1, keepdim=True)
            if op == "shuffle":
                return F.pixel_shuffle(a, 2)
            if op == "layernorm":
                return self.norm(a.permute(0, 2, 3, 1))
            if op == "matmul":  # two activations multiplied: the U85's MATMUL (a transformer's attention scores)
                return torch.matmul(a.flatten(2), self.b(x).flatten(2).transpose(1, 2))
            if op == "u85-model":  # one build for the U85 C model: RESIZE both ways, a layer norm (REDUCE_SUM, 32-bit
                # maps, the null pool), MATMUL
                up = F.interpolate(a, scale_factor=2, mode="bilinear", align_corners=False)
                y = self.norm(up.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)
                near = F.interpolate(self.b(x), scale_factor=2, mode="nearest")
                return torch.matmul(y.flatten(2), near.flatten(2).transpose(1, 2))
            if op == "batchmul":  # a scalar MUL over a batch of 4 (MobileViT's q * scale over its 4 patches)
                tokens = a.flatten(2).transpose(1, 2).reshape(4, 64, 8)  # 4 patches of 64 tokens
                q, k, _ = self.qkv(tokens).reshape(4, 64, 3, 2, 30).permute(2, 0, 3, 1, 4).unbind(0)
                return torch.matmul(q * 30 ** -0.5, k.transpose(-1, -2))
            if op == "stridepad":
                return self.strided(a)
            if op == "stridepad1":
                return self.strided(a[:, :1])
            if op == "chanshuffle":
                return self.units(self.widen(a))
            if op == "depthwise":
                return self.dw5(F.relu(self.dw3(a)))
            if op == "mul16":  # two activations multiplied (at a16w8 a 16-bit MUL: MediaPipe's attention gates)
                return a * self.b(x)
            if op == "conv64":  # at a16w8 its 48-bit output is read by two rescales: a 64-bit OFM
                y = self.pw(a)
                return y + self.pw2(y)
            if op == "a16-forms":  # the compile tier's one a16w8 build of the three: a 64-bit OFM, PReLU's 16-bit MUL
                y = self.pw(a)
                return self.prelu(y + self.pw2(y)) * self.b(x)
            if op == "flip":  # reversals along W, H and C (TOSA REVERSE: an OFM reversal, where Vela writes one)
                return torch.flip(a, [3]) + torch.flip(self.b(x), [2]) - torch.flip(a, [1])
            raise ValueError(f"unknown operation {op!r}")

    torch.manual_seed(11)
    return Op().eval()


MODELS = ("max", "min", "clamp", "lrelu", "abs", "sigmoid", "tanh", "hardswish", "hardsigmoid", "avgpad", "avgpad-excl", "mix",
          "upsample", "bilinear", "deconv", "dilated", "gelu", "silu",
          "prelu", "upsample4", "chanmean", "shuffle", "layernorm", "matmul", "batchmul", "u85-model", "stridepad",
          "stridepad1", "chanshuffle", "flip", "depthwise", "deconv3", "mul16", "conv64", "a16-forms")
"""Each registers as ``ops-<name>``."""


@hookimpl
def register_models(register: Callable[[ModelSpec], None]) -> None:
    for op in MODELS:
        register(dataclasses.replace(
            rgb_plugin.spec(), name=f"ops-{op}", description=f"tests: a convolution and {op}, for the NPU-program level",
            build=lambda variant, op=op: _network(op), training=None, recipes={},
        ))
