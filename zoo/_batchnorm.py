"""BatchNorm statistics for untrained weights: a helper for plugins' ``random`` variants."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def reestimate_batchnorm(model: Any, samples: Sequence[tuple[Any, ...]]) -> int:
    """Set every BatchNorm's running statistics to those of ``samples`` (each a tuple
    whose first element is one batch of the model's single input), run as one batch,
    and return how many layers there were. The model is left in eval mode.

    Untrained BatchNorm layers keep mean 0 and variance 1, so the activations shrink
    or grow layer by layer until the output barely depends on the input, and int8
    calibration measures noise; measured statistics keep the signal alive."""
    import torch
    from torch import nn

    norms = [m for m in model.modules() if isinstance(m, nn.BatchNorm1d | nn.BatchNorm2d | nn.BatchNorm3d)]
    model.eval()
    momenta = [m.momentum for m in norms]
    for m in norms:
        m.reset_running_stats()
        m.momentum = None  # a cumulative average: exactly the batch's statistics
        m.train()
    with torch.no_grad():
        model(torch.cat([s[0] for s in samples]))
    for m, momentum in zip(norms, momenta, strict=True):
        m.momentum = momentum
        m.eval()
    return len(norms)
