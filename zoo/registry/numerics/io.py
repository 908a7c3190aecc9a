"""A program's integer boundary, as the numerical check feeds and reads it.

torch is imported inside methods.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class QParams:
    """One input's or output's quantization: ``q = clamp(round_half_even(x / scale) + zero_point, qmin, qmax)``."""

    scale: float
    zero_point: int
    qmin: int
    qmax: int
    dtype: str
    """``int8`` or ``uint8``."""

    def quantize(self, x: Any) -> Any:
        import torch
        import torch.ao.quantization.fx._decomposed  # registers the quantized_decomposed ops

        # torch's own kernel, so the rule is exactly the one the fake-quantized model used.
        return torch.ops.quantized_decomposed.quantize_per_tensor(
            x, self.scale, self.zero_point, self.qmin, self.qmax, getattr(torch, self.dtype)
        )

    def dequantize(self, q: Any) -> Any:
        import torch

        return (q.to(torch.float32) - self.zero_point) * self.scale


@dataclass(frozen=True)
class IoParams:
    inputs: tuple[QParams, ...]
    outputs: tuple[QParams, ...]

    @classmethod
    def from_record(cls, io: dict[str, Any]) -> IoParams:
        """From ``io_boundary.record``; every input and output must be quantized."""

        def side(name: str) -> tuple[QParams, ...]:
            out = []
            for t in io[name]:
                if t["scale"] is None:
                    raise ValueError(f"{name[:-1]} {t['name']!r} has no quantization parameters")
                out.append(QParams(float(t["scale"]), int(t["zero_point"]), int(t["qmin"]), int(t["qmax"]), t["dtype"]))
            return tuple(out)

        return cls(side("inputs"), side("outputs"))
