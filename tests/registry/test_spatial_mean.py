"""A spatial mean lowers to an average pool (compile/spatial_mean.py, issue 45): the graph
rewrite in torch (stack) and the TOSA of a tiny model ending in ``x.mean([2, 3])`` (compile). The
pin on upstream's DecomposeMeanDimPass is in tests/registry/test_upstream_pins.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.tiny_builds import compile_verified, tosa_ops
from zoo.registry.compile import spatial_mean


def _rewritten(module: Any, *shape: int) -> tuple[Any, int, Any, Any]:
    """``module`` exported, its outputs before and after ``pool_spatial_means``, and the count."""
    import torch

    torch.manual_seed(0)
    x = torch.randn(*shape)
    graph = torch.export.export(module, (x,)).module(check_guards=False)
    before = graph(x)
    count = spatial_mean.pool_spatial_means(graph)
    return graph, count, before, graph(x)


def _targets(graph: Any) -> list[str]:
    return [str(n.target) for n in graph.graph.nodes if n.op == "call_function"]


def _conv_then(head: Any) -> Any:
    import torch

    class Net(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.conv = torch.nn.Conv2d(3, 8, 3)
            self.fc = torch.nn.Linear(8, 4)

        def forward(self, x: Any) -> Any:
            return head(self, self.conv(x))

    return Net().eval()


@pytest.mark.stack
def test_a_global_mean_becomes_the_pool_and_flatten_of_mobilenet_v2s_head() -> None:
    import torch

    graph, count, before, after = _rewritten(_conv_then(lambda net, y: net.fc(y.mean([2, 3]))), 1, 3, 9, 9)
    assert count == 1
    assert _targets(graph) == ["aten.conv2d.default", "aten.adaptive_avg_pool2d.default",
                               "aten.flatten.using_ints", "aten.linear.default"]
    assert torch.equal(before, after)
    pool, flatten = (n for n in graph.graph.nodes if n.op == "call_function" and "conv" not in str(n.target)
                     and "linear" not in str(n.target))
    assert pool.args[1] == [1, 1] and tuple(pool.meta["val"].shape) == (1, 8, 1, 1)
    assert tuple(flatten.meta["val"].shape) == tuple(flatten.meta["tensor_meta"].shape) == (1, 8)
    # The mean's module stack stays, so a recipe naming the module still reaches the pool.
    assert pool.meta["nn_module_stack"] and pool.meta["nn_module_stack"] == flatten.meta["nn_module_stack"]


@pytest.mark.stack
def test_keepdim_and_negative_dims_give_the_pool_alone() -> None:
    import torch

    graph, count, before, after = _rewritten(_conv_then(lambda net, y: y.mean([-1, -2], keepdim=True)), 1, 3, 9, 9)
    assert count == 1
    assert _targets(graph) == ["aten.conv2d.default", "aten.adaptive_avg_pool2d.default"]
    assert torch.equal(before, after) and after.shape == (1, 8, 1, 1)


@pytest.mark.stack
@pytest.mark.parametrize(("head", "shape"), [
    (lambda net, y: y.mean(1), (1, 3, 9, 9)),  # over channels
    (lambda net, y: y.flatten(2).transpose(1, 2).mean(1), (1, 3, 9, 9)),  # a 3-D token mean
    (lambda net, y: y.mean([2, 3], dtype=y.dtype), (1, 3, 9, 9)),  # a dtype
    (lambda net, y: y.mean([1, 2, 3]), (1, 3, 9, 9)),  # channels too
    (lambda net, y: y.mean([2, 3]), (2, 3, 9, 9)),  # a batch U55's pool refuses
], ids=["channels", "tokens", "dtype", "chw", "batch"])
def test_every_other_mean_stays(head: Any, shape: tuple[int, ...]) -> None:
    import torch

    graph, count, before, after = _rewritten(_conv_then(head), *shape)
    assert count == 0
    assert "aten.mean.dim" in _targets(graph) and "aten.adaptive_avg_pool2d.default" not in _targets(graph)
    assert torch.equal(before, after)


@pytest.mark.compile
def test_a_tiny_model_ending_in_a_spatial_mean_lowers_to_avg_pool2d_and_verifies(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
) -> None:
    targets = ["u55-128", "u85-256"]  # one lowering each
    results = compile_verified(monkeypatch, tmp_path, "tests.mean_plugin", "mean-tiny", targets)
    for target, result in zip(targets, results, strict=True):
        ops = [op for graph in result.tosa_graphs for op in tosa_ops(graph) if op != "CONST"]
        assert ops.count("AVG_POOL2D") == 1 and "REDUCE_SUM" not in ops, f"{target}: {' '.join(ops)}"
        assert result.delegation["cpu_ops"] == 0, result.delegation
        assert result.numerics is not None and result.numerics.passed, result.numerics.record

