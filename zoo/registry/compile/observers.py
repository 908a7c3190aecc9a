"""The activation observer a recipe asks for (``zoo._recipe.OBSERVERS``), swapped into Arm's
quantization configs. Weights keep Arm's per-channel (or per-tensor) min/max.

torch is imported inside functions.
"""

from __future__ import annotations

import dataclasses
from functools import cache
from typing import Any

from zoo._recipe import OBSERVERS

PERCENTILE = 1e-4
"""``percentile`` keeps each sample's activations between these quantiles (0.01 % and 99.99 %)."""


def with_observer(config: Any, name: str) -> Any:
    """``config`` (an Arm quantization config) observing activations with ``name``; itself for Arm's default."""
    if name == OBSERVERS[0]:
        return config
    changes = {}
    for field in ("input_activation", "output_activation"):
        spec = getattr(config, field)
        if spec is not None:
            eps = getattr(getattr(spec.observer_or_fake_quant_ctr, "p", None), "keywords", {}).get("eps")
            changes[field] = dataclasses.replace(spec, observer_or_fake_quant_ctr=_observer(name).with_args(
                **({"eps": eps} if eps is not None else {})))
    return dataclasses.replace(config, **changes)


def _observer(name: str) -> Any:
    from torchao.quantization.pt2e import observer

    if name == "minmax":
        return observer.MinMaxObserver
    if name == "moving_average":
        return observer.MovingAverageMinMaxObserver
    if name == "percentile":
        return _percentile_class()
    raise ValueError(f"unknown observer {name!r}: one of {', '.join(OBSERVERS)}")


@cache
def _percentile_class() -> Any:
    import torch
    from torchao.quantization.pt2e.observer import MinMaxObserver

    class PercentileObserver(MinMaxObserver):  # type: ignore[misc]  # torchao is untyped here
        """The running min/max of each sample's 0.01 % and 99.99 % quantiles: a rare outlier
        does not stretch the range, and so the step, of every other value."""

        def forward(self, x_orig: Any) -> Any:
            if x_orig.numel() == 0:
                return x_orig
            x = x_orig.detach().to(self.min_val.dtype).reshape(-1)
            step = -(-x.numel() // (1 << 24))  # torch.quantile takes at most 2^24 elements
            low, high = torch.quantile(x[::step], torch.tensor([PERCENTILE, 1 - PERCENTILE], dtype=x.dtype))
            self.min_val.copy_(torch.minimum(low, self.min_val))
            self.max_val.copy_(torch.maximum(high, self.max_val))
            return x_orig

    return PercentileObserver
