"""Evaluation samples as plain floats, for firmware to feed a program: each input in the
program's memory order (its ``dim_order``), with an integer label where the set has one, and whether
the model is judged by top-1 (it declares ``zoo.top1``): only then does the firmware score it. A model
whose spec gives ``sensor_evaluation`` has its sensor inputs' raw windows fed instead, sample by
sample with the channels interleaved, for the firmware's normalising helper.
torch is imported only by the plugin's own loading."""

from __future__ import annotations

from typing import Any

from zoo._spec import ModelSpec
from zoo.registry.firmware.project import Samples
from zoo.registry.numerics.data import declares_top1, evaluation_set


def firmware_samples(spec: ModelSpec, io: dict[str, Any], count: int) -> Samples:
    """The first ``count`` samples of the model's evaluation set (its calibration set without one), or of its
    ``sensor_evaluation`` where it gives one. ValueError if the set is too small or a raw window's shape is not
    its declaration's (its number of samples may differ: a series as long as it was recorded)."""
    if spec.sensor_evaluation is not None:
        return _raw_samples(spec, io, count)
    data = evaluation_set(spec, spec.calibration)
    if len(data.samples) < count:
        raise ValueError(f"{spec.name}'s {data.name} set has {len(data.samples)} sample(s), fewer than {count}")
    order = [list(t["dim_order"]) for t in io["inputs"]]
    inputs = [[_ordered(x, o) for x, o in zip(sample, order, strict=True)] for sample in data.samples[:count]]
    labels = [_label(label) for label in (data.labels or [None] * count)[:count]]
    return Samples(inputs, labels, top1=declares_top1(spec))


def _raw_samples(spec: ModelSpec, io: dict[str, Any], count: int) -> Samples:
    import numpy as np

    dataset = spec.sensor_evaluation
    assert dataset is not None
    items = dataset.load()
    if len(items) < count:
        raise ValueError(f"{spec.name}'s sensor_evaluation set has {len(items)} sample(s), fewer than {count}")
    order = [list(t["dim_order"]) for t in io["inputs"]]
    raw = tuple(i.sensor is not None for i in spec.inputs)
    inputs = []
    for sample, _ in items[:count]:
        if len(sample) != len(spec.inputs):
            raise ValueError(f"{spec.name}'s sensor_evaluation gives {len(sample)} input(s) per sample, not "
                             f"{len(spec.inputs)}")
        values = []
        for x, o, declared in zip(sample, order, spec.inputs, strict=True):
            if declared.sensor is None:
                values.append(_ordered(x, o))
                continue
            window = np.asarray(x, dtype=np.float32)
            want = declared.sensor.raw_shape  # a window may be longer or shorter: the helper cuts or pads it
            longest = want[0] * 64 if want[0] > 1 else 1
            if window.ndim != 2 or window.shape[1] != want[1] or not 1 <= window.shape[0] <= longest:
                raise ValueError(f"{spec.name}'s sensor_evaluation: input {declared.name!r} is a window of shape "
                                 f"{list(window.shape)}, not (samples, channels) {list(want)} as its sensor declares "
                                 "(1 to 64 windows' samples)")
            values.append([float(v) for v in window.reshape(-1).tolist()])
        inputs.append(values)
    return Samples(inputs, [_label(label) for _, label in items[:count]], raw, declares_top1(spec))


def _ordered(x: Any, order: list[int]) -> list[float]:
    return [float(v) for v in x.permute(*order).contiguous().reshape(-1).tolist()]


def _label(label: Any) -> int | None:
    try:
        value = label.item() if hasattr(label, "item") else label
    except (ValueError, RuntimeError):  # a tensor of boxes, a mask: no class to compare
        return None
    return int(value) if isinstance(value, int) and not isinstance(value, bool) else None
