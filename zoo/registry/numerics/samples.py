"""Evaluation samples as plain floats, for firmware to feed a program: each input in the
program's memory order (its ``dim_order``), with an integer label where the set has one.
torch is imported only by the plugin's own loading."""

from __future__ import annotations

from typing import Any

from zoo._spec import ModelSpec
from zoo.registry.firmware.project import Samples
from zoo.registry.numerics.data import evaluation_set


def firmware_samples(spec: ModelSpec, io: dict[str, Any], count: int) -> Samples:
    """The first ``count`` samples of the model's evaluation set (its calibration set without one)."""
    data = evaluation_set(spec, spec.calibration)
    if len(data.samples) < count:
        raise ValueError(f"{spec.name}'s {data.name} set has {len(data.samples)} sample(s), fewer than {count}")
    order = [list(t["dim_order"]) for t in io["inputs"]]
    inputs = [[[float(v) for v in x.permute(*o).contiguous().reshape(-1).tolist()] for x, o in zip(sample, order, strict=True)]
              for sample in data.samples[:count]]
    labels = [_label(label) for label in (data.labels or [None] * count)[:count]]
    return Samples(inputs, labels)


def _label(label: Any) -> int | None:
    try:
        value = label.item() if hasattr(label, "item") else label
    except (ValueError, RuntimeError):  # a tensor of boxes, a mask: no class to compare
        return None
    return int(value) if isinstance(value, int) and not isinstance(value, bool) else None
