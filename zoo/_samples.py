"""A batch of data as the samples a `Dataset`'s ``load`` returns, for models with one input.

Torch-free: it only slices what it is given.
"""

from __future__ import annotations

from typing import Any

from zoo._errors import SpecError

__all__ = ["labelled_samples", "one_input_samples"]


def one_input_samples(inputs: Any) -> list[tuple[Any, ...]]:
    """Each row of ``inputs`` (a tensor, samples along the first axis) as one sample: a 1-tuple
    holding a batch of one, copied, as a calibration `Dataset`'s ``load`` returns them."""
    return [(inputs[i : i + 1].clone(),) for i in range(inputs.shape[0])]


def labelled_samples(inputs: Any, labels: Any) -> list[tuple[tuple[Any, ...], int]]:
    """`one_input_samples` of ``inputs``, each paired with its label as an int (a class index),
    as an evaluation `Dataset`'s ``load`` returns them for `zoo.top1`."""
    if len(inputs) != len(labels):
        raise SpecError(f"labelled_samples: {len(inputs)} inputs but {len(labels)} labels; give one label per input")
    return [(sample, int(labels[i])) for i, sample in enumerate(one_input_samples(inputs))]
