"""Labels that are the float model's own answers: the metrics of the segmentation and
transformer models compare the int8 program with float, not with ground truth (none ships).

The evaluation set cannot know which weights variant is being built (``Dataset.load`` takes
no argument), so its labels come from the ``random`` variant, the one that builds offline:
for it the float figure is 100 % by construction and the int8 figure is the agreement."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def label_with_float(build: Callable[[str], Any], samples: list[Any], kind: str) -> list[tuple[Any, Any]]:
    """``(sample, label)`` items whose label is the random variant's float answer on the sample:
    ``kind`` ``"mask"`` gives the per-pixel argmax (an ``(H, W)`` int64 array), ``"class"`` the top-1 index."""
    import torch

    model = build("random").eval()
    items: list[tuple[Any, Any]] = []
    with torch.no_grad():
        for sample in samples:
            scores = model(sample)
            if kind == "mask":
                items.append(((sample,), scores[0].argmax(dim=0).numpy()))
            elif kind == "class":
                items.append(((sample,), int(scores.reshape(-1).argmax())))
            else:
                raise ValueError(f"label kind {kind!r}: use 'mask' or 'class'")
    return items
