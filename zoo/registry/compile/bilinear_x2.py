"""Lower a ×2 bilinear upsampling on the Ethos-U55 and U65 as what it is: a nearest ×2
upsampling and two 2×2 average pools (issue 56).

Neither NPU resizes bilinearly: ExecuTorch 1.5.1's U55 check (``EthosU55NotSupported``) leaves
``aten.upsample_bilinear2d`` on the CPU, and the graph splits into NPU partitions around it
(MediaPipe's selfie segmentation into 13, whose lost outputs then fail the structure check:
docs/upstream.md, "The lost partition output"). Both NPUs do upsample by nearest neighbour ×2
and average-pool.

With half-pixel centres (``align_corners=False``, TFLite's ``half_pixel_centers``), output row
``2k`` of a ×2 upsampling is ``0.25 x[k-1] + 0.75 x[k]`` and row ``2k+1`` is
``0.75 x[k] + 0.25 x[k+1]``, the border repeated. With ``u`` the nearest ×2 upsampling
(``u[2k] = u[2k+1] = x[k]``), both are ``(u[j-1] + 2 u[j] + u[j+1]) / 4``: a (1, 2, 1) / 4
filter along each axis over ``u`` with its border repeated, which is two 2×2 stride-1 average
pools. So, per axis pair: nearest ×2, one border row and column repeated on each side (a
concatenation of slices), average pool 2×2, average pool 2×2. In float it is the same function
(the sums are in another order); in int8 every step shares the input's quantization (the Arm
quantizer's rule for resizes, slices, concatenations and pools), so no weight is quantized and
only the pools round. :func:`exact_bilinear_x2` rewrites the exported aten graph before
quantization; ``lower.py`` calls it only for a TOSA specification of the U55 subset. A
``align_corners=True`` or any other factor stays as it is (it is not this filter). ``PINNED``
ties the rewrite to upstream's U55 checks (bilinear refused, nearest ×2 taken);
tests/registry/test_upstream_pins.py fails when they change.
"""

from __future__ import annotations

from typing import Any

from zoo.registry.compile.aten_graph import tensor_value
from zoo.registry.compile.graph_edit import Edit, Replacement, rewrite_graph

__all__ = ["PINNED", "exact_bilinear_x2", "rewrites_bilinear"]

# sha256 of the upstream file that leaves bilinear resizes off the U55 and U65, as ExecuTorch 1.5.1 ships it.
PINNED = {
    "executorch/backends/arm/operator_support/ethos_u55_support.py":
        "a41ad247b9bba0f407add989e1ddebc6b7c6fe8f8c7805a64708adfff0bdfdef",
}


def rewrites_bilinear(tosa_spec: str | None) -> bool:
    """Whether a build for ``tosa_spec`` (``Target.tosa_spec``) gets the rewrite: the U55 subset,
    which the U55 and U65 share; the U85 resizes bilinearly itself."""
    return tosa_spec is not None and tosa_spec.endswith("+u55")


def _doubled(node: Any) -> bool:
    """``node`` is a bilinear upsampling with half-pixel centres of a static 4-D float tensor to
    exactly twice its height and width."""
    import torch

    aten = torch.ops.aten
    if node.op != "call_function" or node.target not in (aten.upsample_bilinear2d.vec, aten.upsample_bilinear2d.default):
        return False
    source, out = node.args[0], tensor_value(node)
    value = tensor_value(source) if isinstance(source, torch.fx.Node) else None
    if value is None or out is None or value.dim() != 4 or not value.dtype.is_floating_point:
        return False
    align = node.args[2] if len(node.args) > 2 else node.kwargs.get("align_corners", False)
    if align or not all(isinstance(d, int) for d in (*value.shape, *out.shape)):
        return False
    n, c, h, w = value.shape
    return tuple(out.shape) == (n, c, 2 * h, 2 * w)


def _repeat_border(edit: Edit, x: Any, dim: int, size: int, node: Any) -> Any:
    import torch

    aten = torch.ops.aten
    first = edit.call(aten.slice.Tensor, (x, dim, 0, 1), before=node, like=node)
    last = edit.call(aten.slice.Tensor, (x, dim, size - 1, size), before=node, like=node)
    return edit.call(aten.cat.default, ([first, x, last], dim), before=node, like=node)


def _replaced(edit: Edit, node: Any) -> Replacement | None:
    import torch

    if not _doubled(node):
        return None
    aten = torch.ops.aten
    _, _, h, w = tensor_value(node).shape
    x = edit.call(aten.upsample_nearest2d.vec, (node.args[0], [h, w], None), before=node, like=node)
    x = _repeat_border(edit, x, 2, h, node)
    x = _repeat_border(edit, x, 3, w, node)
    x = edit.call(aten.avg_pool2d.default, (x, [2, 2], [1, 1]), before=node, like=node)
    x = edit.call(aten.avg_pool2d.default, (x, [2, 2], [1, 1]), before=node, like=node)
    return Replacement(((node, x),))


def exact_bilinear_x2(graph_module: Any) -> int:
    """Replace each ×2 half-pixel bilinear upsampling of ``graph_module`` (a ``torch.fx.GraphModule``
    from torch.export) by nearest ×2, the border repeated and two 2×2 average pools; return how many."""
    return rewrite_graph(graph_module, _replaced)
