"""Lower a spatial mean as an average pool, as the int8 TFLite flow's Vela does (issue 45).

torchvision's MNASNet and ShuffleNetV2 end in ``x.mean([2, 3])``, which torch.export keeps as
``aten.mean.dim``. ExecuTorch 1.5.1's ``DecomposeMeanDimPass`` lowers every mean to REDUCE_SUM
and MUL by 1/N, with transposes around them in the NHWC TOSA: mnasnet0-5 on u85-256 cost
2.067× the TFLite flow's cycles (benchmarks/vs_tflite.py). ``adaptive_avg_pool2d(x, 1)``
(MobileNetV2's head) lowers to one AVG_POOL2D, which Vela runs cheaply on every Ethos-U.

:func:`pool_spatial_means` rewrites the exported aten graph before quantization, so the Arm
quantizer annotates the pool exactly as it does MobileNetV2's (a pool and a flatten share
their input's quantization, as the mean did), in PTQ and QAT alike. Only a mean over exactly
the two spatial dimensions of a 4-D tensor of static shape, with no dtype, is rewritten, and
only where every Ethos-U takes the pool (batch 1, a kernel U55 allows); a mean over channels,
a transformer's 3-D token mean, or one that casts stays. ``PINNED`` ties
the rewrite to upstream's pass; tests/registry/test_upstream_pins.py fails when it changes
(``upstream_pin``; docs/upstream.md says what to re-check).
"""

from __future__ import annotations

from typing import Any

from zoo.registry.compile.graph_edit import Edit, Replacement, rewrite_graph

__all__ = ["PINNED", "pool_spatial_means"]

# sha256 of the upstream file whose lowering this module avoids, as ExecuTorch 1.5.1 ships it.
PINNED = {
    "executorch/backends/arm/_passes/decompose_meandim_pass.py":
        "d4e4d7098ebe7401af1e9cf5dea72bb696ccdeea88dd8a34ba97a14fbf0d3a81",
}


def _spatial_mean(node: Any) -> bool:
    """``node`` is ``aten.mean.dim`` over exactly dims {2, 3} of a static 4-D tensor a pool covers, with no dtype."""
    import torch

    if node.op != "call_function" or node.target is not torch.ops.aten.mean.dim:
        return False
    source = node.args[0]
    value = source.meta.get("val") if isinstance(source, torch.fx.Node) else None
    if not isinstance(value, torch.Tensor) or value.dim() != 4:
        return False
    if not all(isinstance(size, int) for size in value.shape) or not _poolable(*value.shape):
        return False
    if node.kwargs.get("dtype") is not None or len(node.args) > 3:
        return False
    dims = node.args[1] if len(node.args) > 1 else node.kwargs.get("dim")
    if dims is None:
        return False
    return sorted(d % 4 for d in dims) == [2, 3]


def _poolable(n: int, c: int, h: int, w: int) -> bool:
    """ExecuTorch's U55 check takes an AVG_POOL2D over the whole H × W (``AvgPool2dSupported``):
    batch 1, a kernel of at most 65536 elements and 256 wide; upstream's REDUCE_SUM takes the rest."""
    return n == 1 and max(c, h, w) <= 65536 and h * w <= 65536 and w <= 256


def _pooled(edit: Edit, node: Any) -> Replacement | None:
    import torch

    if not _spatial_mean(node):
        return None
    aten = torch.ops.aten
    keepdim = node.args[2] if len(node.args) > 2 else node.kwargs.get("keepdim", False)
    result = edit.call(aten.adaptive_avg_pool2d.default, (node.args[0], [1, 1]), before=node, like=node)
    if not keepdim:
        result = edit.call(aten.flatten.using_ints, (result, 1), before=node, like=node)
    return Replacement(((node, result),))


def pool_spatial_means(graph_module: Any) -> int:
    """Replace each spatial mean of ``graph_module`` (a ``torch.fx.GraphModule`` from torch.export)
    by ``adaptive_avg_pool2d(x, [1, 1])``, then, when the mean dropped the dimensions, the
    ``flatten(1)`` MobileNetV2's head has; return how many were replaced."""
    return rewrite_graph(graph_module, _pooled)
