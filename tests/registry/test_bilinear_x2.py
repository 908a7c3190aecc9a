"""A ×2 half-pixel bilinear upsampling lowers on the U55 and U65 as nearest ×2 and two 2×2 average
pools (compile/bilinear_x2.py, issue 56): which targets get it (fast), the rewrite in torch on a
torch model and on zoo.read_tflite's RESIZE_BILINEAR (stack), and a tiny network lowered whole on
u55-128 (compile)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.tiny_builds import compile_verified, tosa_ops
from zoo.registry.compile.bilinear_x2 import rewrites_bilinear
from zoo.registry.npu.targets import TargetTable


def test_only_the_u55_and_u65_get_the_rewrite() -> None:
    table = TargetTable()
    assert [rewrites_bilinear(table.resolve(t).tosa_spec) for t in ("u55-128", "u65-256", "u85-256", "portable")] == \
        [True, True, False, False]


def _rewritten(module: Any, *shape: int) -> tuple[Any, int, Any, Any]:
    """``module`` exported, its output before and after ``exact_bilinear_x2``, and the count."""
    import torch

    from zoo.registry.compile.bilinear_x2 import exact_bilinear_x2

    torch.manual_seed(0)
    x = torch.randn(*shape)
    graph = torch.export.export(module, (x,)).module(check_guards=False)
    before = graph(x)
    count = exact_bilinear_x2(graph)
    return graph, count, before, graph(x)


def _targets(graph: Any) -> list[str]:
    return [str(n.target) for n in graph.graph.nodes if n.op == "call_function"]


def _resize(**kwargs: Any) -> Any:
    import torch
    from torch.nn import functional as F

    class Resize(torch.nn.Module):
        def forward(self, x: Any) -> Any:
            return F.interpolate(x, mode="bilinear", **kwargs)

    return Resize().eval()


@pytest.mark.stack
@pytest.mark.parametrize("shape", [(1, 5, 7, 6), (1, 3, 1, 4), (2, 2, 3, 3)])
def test_a_half_pixel_doubling_becomes_nearest_and_two_pools_with_the_same_values(shape: tuple[int, ...]) -> None:
    import torch

    graph, count, before, after = _rewritten(_resize(scale_factor=2, align_corners=False), *shape)
    assert count == 1
    assert _targets(graph).count("aten.avg_pool2d.default") == 2 and "aten.upsample_nearest2d.vec" in _targets(graph)
    assert "aten.upsample_bilinear2d.vec" not in _targets(graph)
    assert before.shape == after.shape and torch.allclose(before, after, rtol=0, atol=1e-6)


@pytest.mark.stack
@pytest.mark.parametrize("kwargs", [
    {"scale_factor": 2, "align_corners": True},  # corners aligned: not one filter
    {"scale_factor": 3, "align_corners": False},
    {"size": (10, 12), "align_corners": False},  # the height doubles (5 → 10), the width does not (7 → 12)
])
def test_every_other_bilinear_resize_stays(kwargs: dict[str, Any]) -> None:
    import torch

    graph, count, before, after = _rewritten(_resize(**kwargs), 1, 2, 5, 7)
    assert count == 0 and "aten.upsample_bilinear2d.vec" in _targets(graph)
    assert torch.equal(before, after)


@pytest.mark.stack
def test_read_tflites_half_pixel_resize_bilinear_is_rewritten_exactly() -> None:
    import numpy as np
    import torch

    from tests.tflite.graphs import OP, Graph, options
    from zoo._tflite import load, module_from_model

    g = Graph()
    x = g.input([1, 6, 5, 4])
    g.outputs = g.op(OP.RESIZE_BILINEAR, [x, g.const([12, 10], "int32")], [[1, 12, 10, 4]],
                     *options("ResizeBilinearOptions", halfPixelCenters=True))
    module = module_from_model(load(g.to_bytes(), "resize.tflite"))
    graph, count, before, after = _rewritten(module, 1, 6, 5, 4)
    assert count == 1 and "aten.upsample_bilinear2d.vec" not in _targets(graph)
    assert np.allclose(before.numpy(), after.numpy(), rtol=0, atol=1e-6)
    assert isinstance(after, torch.Tensor) and tuple(after.shape) == (1, 12, 10, 4)


@pytest.mark.compile
def test_a_tiny_network_with_a_bilinear_doubling_lowers_whole_on_u55_and_verifies(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
) -> None:
    (result,) = compile_verified(monkeypatch, tmp_path, "tests.upsample_plugin", "upsample-tiny", ["u55-128"])
    ops = [op for graph in result.tosa_graphs for op in tosa_ops(graph) if op != "CONST"]
    assert result.delegation["cpu_ops"] == 0 and result.delegation["partitions"] == 1, result.delegation
    assert ops.count("AVG_POOL2D") == 2 and ops.count("RESIZE") == 1, " ".join(ops)
    assert result.numerics is not None and result.numerics.passed, result.numerics.record
