"""A constant scale or shift next to a convolution folds into it (compile/conv_fold.py,
issue 45): the graph rewrite in torch (stack), and the TOSA of a tiny model written as
PaddleOCR's ONNX files are (compile)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.tiny_builds import compile_verified, tosa_ops
from zoo.registry.compile import conv_fold


def _folded(make: Callable[[], Any], shape: tuple[int, ...] = (1, 4, 6, 6)) -> tuple[list[str], int, Any, Any, Any]:
    """``make()`` exported; its calls after the fold, the count, its outputs before and after, and the graph."""
    import torch

    torch.manual_seed(0)
    module = make().eval()
    x = torch.randn(*shape)
    graph = torch.export.export(module, (x,)).module(check_guards=False)
    before = graph(x)
    count = conv_fold.fold_into_convolutions(graph)
    after = graph(x)
    calls = [str(n.target).removeprefix("aten.") for n in graph.graph.nodes if n.op == "call_function"]
    return calls, count, before, after, graph


def _net(forward: Callable[[Any, Any], Any], **layers: Any) -> Callable[[], Any]:
    import torch

    class Net(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            for name, layer in layers.items():
                setattr(self, name, layer)
            self.register_buffer("scale", torch.linspace(0.5, 2.0, 8).reshape(1, 8, 1, 1))
            self.register_buffer("shift", torch.linspace(-1.0, 1.0, 8).reshape(8, 1, 1))

        def forward(self, x: Any) -> Any:
            return forward(self, x)

    return Net


@pytest.mark.stack
def test_scalar_and_per_channel_steps_after_a_convolution_fold_into_it() -> None:
    import torch

    make = _net(lambda n, x: ((n.conv(x) * 0.9432 + 0.5) * n.scale - n.shift) / 2.0,
                conv=torch.nn.Conv2d(4, 8, 3, padding=1, bias=False))
    calls, count, before, after, graph = _folded(make)
    assert count == 5
    assert calls == ["conv2d.default"]
    torch.testing.assert_close(after, before)
    # The replaced weight is gone: an exported program would carry it.
    names = [name for name, _ in graph.named_parameters()]
    assert len(names) == 2 and all(name.startswith("_zoo_folded_") for name in names), names
    # The folded weights stay trainable, as the convolution's were, for quantization-aware training.
    assert all(parameter.requires_grad for parameter in graph.parameters())


@pytest.mark.stack
def test_a_transposed_convolutions_separate_bias_folds_so_its_batchnorm_can() -> None:
    import torch

    def forward(n: Any, x: Any) -> Any:
        return n.bn(n.up(x) + n.shift) * n.scale

    make = _net(forward, up=torch.nn.ConvTranspose2d(4, 8, 2, stride=2, bias=False), bn=torch.nn.BatchNorm2d(8))
    calls, count, before, after, _ = _folded(make)
    assert count == 1  # the add; the multiplication follows the BatchNorm, which upstream's pass folds later
    assert calls == ["conv_transpose2d.input", "batch_norm.default", "mul.Tensor"]
    torch.testing.assert_close(after, before)


@pytest.mark.stack
def test_a_grouped_transposed_convolution_scales_each_output_channel() -> None:
    import torch

    make = _net(lambda n, x: n.up(x) * n.scale, up=torch.nn.ConvTranspose2d(4, 8, 3, stride=2, groups=2))
    calls, count, before, after, _ = _folded(make)
    assert (count, calls) == (1, ["conv_transpose2d.input"])
    torch.testing.assert_close(after, before)


@pytest.mark.stack
def test_a_scalar_step_before_unpadded_convolutions_folds_into_each() -> None:
    import torch

    def forward(n: Any, x: Any) -> Any:
        y = torch.nn.functional.hardswish(x) * 0.4763 - 0.0076
        return n.a(y) + n.b(y)

    make = _net(forward, a=torch.nn.Conv2d(4, 8, 1), b=torch.nn.Conv2d(4, 8, 1, groups=4, bias=False))
    calls, count, before, after, _ = _folded(make)
    assert count == 1
    assert calls == ["hardswish.default", "conv2d.default", "conv2d.default", "add.Tensor"]
    torch.testing.assert_close(after, before)


@pytest.mark.stack
@pytest.mark.parametrize("forward", [
    lambda n, x: n.padded(x * 0.5 + 1.0),  # a padded border would see the shift
    lambda n, x: (lambda y: y * 2.0 + y.mean())(n.conv(x)),  # nothing else may read the convolution
    lambda n, x: n.conv(x) * n.conv(x),  # not a constant
    lambda n, x: n.conv(x) * torch_ones(1, 8, 6, 6),  # varies along more than the channels
    lambda n, x: (lambda y: n.conv(y) + y.sum())(x * 3.0),  # the step is read by more than convolutions
], ids=["padded", "read-twice", "tensor", "spatial-constant", "shared-step"])
def test_everything_else_stays(forward: Callable[[Any, Any], Any]) -> None:
    import torch

    make = _net(forward, conv=torch.nn.Conv2d(4, 8, 1), padded=torch.nn.Conv2d(4, 8, 3, padding=1))
    _, count, before, after, _ = _folded(make)
    assert count == 0
    torch.testing.assert_close(after, before)


@pytest.mark.stack
def test_a_one_element_constant_with_more_dimensions_than_the_input_does_not_fold() -> None:
    """Issue 55: ``conv2d(x * k)`` with an unbatched ``x`` (C, H, W) and ``k`` of shape (1, 1, 1, 1):
    the product is batched, so the convolution's output is (1, 4, 6, 6). Folding ``k`` into the
    weights gave the convolution the 3-D ``x``, and a (4, 6, 6) output."""
    import torch

    k = torch.full((1, 1, 1, 1), 0.5)
    make = _net(lambda n, x: n.conv(x * k), conv=torch.nn.Conv2d(4, 8, 1))
    calls, count, before, after, graph = _folded(make, shape=(4, 6, 6))
    assert count == 0
    assert calls == ["mul.Tensor", "conv2d.default"]
    output = graph.graph.output_node().args[0][0]
    assert tuple(after.shape) == tuple(before.shape) == tuple(output.meta["val"].shape) == (1, 8, 6, 6)
    torch.testing.assert_close(after, before)
    # A one-element constant with no more dimensions than the input is a scalar, and still folds.
    make = _net(lambda n, x: n.conv(x * k), conv=torch.nn.Conv2d(4, 8, 1))
    calls, count, before, after, _ = _folded(make, shape=(1, 4, 6, 6))
    assert (count, calls) == (1, ["conv2d.default"])
    torch.testing.assert_close(after, before)


def torch_ones(*shape: int) -> Any:
    import torch

    return torch.ones(*shape)


@pytest.mark.compile
def test_a_tiny_model_written_as_paddleocrs_lowers_to_tables_and_no_affine_steps(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
) -> None:
    (result,) = compile_verified(monkeypatch, tmp_path, "tests.paddle_plugin", "paddle-tiny", ["u55-128"])
    ops = [op for graph in result.tosa_graphs for op in tosa_ops(graph) if op not in ("CONST", "CONST_SHAPE")]
    # Two hard-swishes and the SE's hard-sigmoid are TABLEs; the learned scales and shifts and the
    # transposed convolution's bias and BatchNorm are in the convolutions' weights. The one MUL is
    # the SE's product of two tensors, the one ADD the residual.
    assert ops.count("TABLE") == 3, " ".join(ops)
    assert ops.count("MUL") == 1 and ops.count("ADD") == 1 and "SUB" not in ops, " ".join(ops)
    assert result.delegation["cpu_ops"] == 0, result.delegation
    assert result.numerics is not None and result.numerics.passed, result.numerics.record
