"""Weight transforms (``--weights-transform``, a recipe's ``weights``): weights the NPU reads faster.

- ``paletteN`` (U55, U65): each layer's weights take at most N shared values in the quantizer's own
  per-channel normalised range, so every int8 weight stream holds at most N distinct values and
  Vela's weight codec can use its palette mode. Each output channel's weights are divided by the
  scale the symmetric per-channel observer will compute (its largest magnitude over 127); the
  layer's normalised values are clustered by 1-D k-means into N integer levels, ±127 among them,
  so each channel keeps its scale and every level is an exact int8 value.
- ``sparse24`` (U85): in every group of 4 consecutive input channels of a convolution (not a
  depthwise or grouped one) or fully connected layer, the 2 largest magnitudes are kept and the
  rest set to 0 (ties: the lower channel is kept), which Vela encodes ``SPARSE_2_4``.

Applied to the prepared (observed) graph before calibration, so the observers see the
transformed weights; with ``--qat`` the weights' fake quantizers see them projected onto the
pattern (a straight-through estimate) and ``finish`` projects the trained weights at the end,
so zeros stay zero and levels stay shared. Deterministic: float64 numpy, a fixed initialisation
(quantiles), no randomness. torch is imported inside functions.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
import numpy.typing as npt

__all__ = ["Pattern", "apply", "finish", "palette_levels", "project_palette", "sparse24_mask"]

QMAX = 127
"""The symmetric int8 weight range of Arm's configs is [-127, 127]."""
_KMEANS_ITERATIONS = 100
Array = npt.NDArray[np.float64]


def palette_levels(normalised: Array, count: int) -> Array:
    """At most ``count`` integer levels in [-127, 127], ±127 among them, for ``normalised`` values:
    1-D k-means (Lloyd) started at the values' quantiles, the two ends held fixed. In one dimension
    each cluster is a run of the sorted values, so its sum is a difference of one running sum
    (sequential, the same bits on every CPU) and memory stays that of the layer."""
    values = np.sort(np.asarray(normalised, dtype=np.float64).ravel())
    running = np.concatenate([[0.0], np.cumsum(values)])
    fixed = np.array([-QMAX, QMAX], dtype=np.float64)
    free = count - len(fixed)
    levels = np.quantile(values, (np.arange(free) + 0.5) / free) if free > 0 and values.size else np.zeros(0)
    for _ in range(_KMEANS_ITERATIONS):
        every = np.concatenate([fixed, levels])
        order = np.argsort(every, kind="stable")
        ordered = every[order]
        ends = np.searchsorted(values, (ordered[1:] + ordered[:-1]) / 2, side="right")  # ties: the lower level
        starts, stops = np.concatenate([[0], ends]), np.concatenate([ends, [values.size]])
        sizes = stops - starts
        means = np.empty_like(every)
        means[order] = np.where(sizes > 0, (running[stops] - running[starts]) / np.maximum(sizes, 1), ordered)
        moved = means[len(fixed):]
        if np.array_equal(moved, levels):
            break
        levels = moved
    return cast(Array, np.unique(np.clip(np.rint(np.concatenate([fixed, levels])), -QMAX, QMAX)))


def _nearest(normalised: Array, levels: Array) -> Array:
    """Each value's nearest of the sorted ``levels``; a value midway takes the lower level."""
    return levels[np.searchsorted((levels[1:] + levels[:-1]) / 2, normalised, side="left")]


def _scales(weight: Array, per_channel: bool) -> Array:
    """The scale of each output channel (or the tensor's), shaped to divide ``weight``."""
    axes = tuple(range(1, weight.ndim)) if per_channel else tuple(range(weight.ndim))
    scale = np.max(np.abs(weight), axis=axes, keepdims=True) / QMAX
    return cast(Array, np.where(scale > 0, scale, 1.0))


def project_palette(weight: Array, levels: Array, per_channel: bool) -> Array:
    """``weight`` with each value replaced by its nearest level, in its channel's scale."""
    scale = _scales(weight, per_channel)
    return _nearest(weight / scale, levels) * scale


def sparse24_mask(weight: Array) -> npt.NDArray[np.bool_]:
    """True where 2:4 pruning along axis 1 (the input channels) keeps a weight: the 2 largest
    magnitudes of each group of 4 (a last, shorter group keeps at most 2); ties keep the lower channel."""
    moved = np.moveaxis(np.abs(weight), 1, -1)
    channels = moved.shape[-1]
    padded = -(-channels // 4) * 4
    grouped = np.concatenate([moved, np.full((*moved.shape[:-1], padded - channels), -1.0)], axis=-1)
    grouped = grouped.reshape(*moved.shape[:-1], padded // 4, 4)
    order = np.argsort(-grouped, axis=-1, kind="stable")
    keep = np.zeros(grouped.shape, dtype=bool)
    np.put_along_axis(keep, order[..., :2], True, axis=-1)
    keep = keep.reshape(*moved.shape[:-1], padded)[..., :channels]
    return np.moveaxis(keep, -1, 1)


@dataclass
class Pattern:
    """One layer's transform: its parameter, and how to project any value of it onto the pattern."""

    layer: str
    param: Any
    project: Callable[[Any], Any]
    """Tensor → tensor on the pattern (torch, the parameter's dtype)."""
    record: dict[str, Any]


_CONVOLUTIONS = ("conv1d", "conv2d", "convolution")


def _layers(prepared: Any) -> list[tuple[str, Any, Any, bool]]:
    """(name, parameter, weight quantizer, sparse-capable) of each quantized convolution and
    fully connected layer, in graph order: a weight read by ``get_attr`` through its quantizer."""
    out = []
    for node in prepared.graph.nodes:
        op = str(getattr(node.target, "__name__", node.target)).split(".")[0]
        if node.op != "call_function" or op not in (*_CONVOLUTIONS, "linear") or len(node.args) < 2:
            continue
        observed = node.args[1]
        if getattr(observed, "op", None) != "call_module" or not observed.args:
            continue
        source = observed.args[0]
        if getattr(source, "op", None) != "get_attr":
            continue
        param = _attr(prepared, str(source.target))
        groups = int(_arg(node, 6 if op != "convolution" else 8, "groups", 1))
        transposed = op == "convolution" and bool(_arg(node, 6, "transposed", False))
        sparse = param.dim() >= 2 and groups == 1 and not transposed
        out.append((str(source.target), param, prepared.get_submodule(str(observed.target)), sparse))
    return out


def _arg(node: Any, index: int, name: str, default: Any) -> Any:
    return node.args[index] if len(node.args) > index else node.kwargs.get(name, default)


def _attr(module: Any, dotted: str) -> Any:
    for part in dotted.split("."):
        module = getattr(module, part)
    return module


def apply(prepared: Any, transform: str, per_channel: bool, where: str) -> list[Pattern]:
    """Transform the weights of ``prepared`` in place; the patterns, for ``qat`` and the manifest."""
    import torch

    from zoo._errors import BuildError

    patterns = []
    for name, param, quantizer, sparse in _layers(prepared):
        weight = param.detach().double().numpy()
        project: Callable[[Any], Any]
        if transform.startswith("palette"):
            levels = palette_levels(weight / _scales(weight, per_channel), int(transform.removeprefix("palette")))
            project = _onto_palette(levels, per_channel)
            record = {"layer": name, "levels": len(levels)}
        elif transform == "sparse24":
            if not sparse:
                continue
            mask = torch.from_numpy(sparse24_mask(weight))
            project = _masked(mask)
            record = {"layer": name, "zeros": int((~mask).sum()), "weights": int(mask.numel())}
        else:
            raise BuildError(f"{where}: unknown weight transform {transform!r}")
        with torch.no_grad():
            param.copy_(project(param))
        quantizer.weight_pattern = project
        patterns.append(Pattern(name, param, project, record))
    if not patterns:
        raise BuildError(f"{where}: --weights-transform {transform} found no quantized "
                         f"{'convolution or fully connected layer' if transform == 'sparse24' else 'layer with weights'} "
                         "to transform; build without it")
    return patterns


def _onto_palette(levels: Array, per_channel: bool) -> Callable[[Any], Any]:
    import torch

    last: list[Any] = [None, None]
    """The last tensor's identity and version, and its projection: QAT's forward passes, a sample at a
    time, read the same weights until the optimiser steps (which bumps their version)."""

    def project(t: Any) -> Any:  # not differentiable: QAT passes the gradient straight through
        key = (id(t), t.data_ptr(), t._version, tuple(t.shape), t.dtype)
        if last[0] != key:
            last[0], last[1] = key, torch.from_numpy(project_palette(t.detach().double().numpy(), levels,
                                                                     per_channel)).to(t.dtype)
        return last[1]
    return project


def _masked(mask: Any) -> Callable[[Any], Any]:
    def project(t: Any) -> Any:  # differentiable: a pruned weight gets no gradient
        return t * mask.to(t.dtype)
    return project


def finish(patterns: list[Pattern]) -> None:
    """Project the (trained) parameters onto their patterns, in place."""
    import torch

    with torch.no_grad():
        for p in patterns:
            p.param.copy_(p.project(p.param))
