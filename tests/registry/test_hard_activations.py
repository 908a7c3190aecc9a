"""Hard-swish, hard-sigmoid and SiLU written as arithmetic become the aten operator each is
(compile/hard_activations.py, issue 45): the graph rewrite in torch (stack). The TOSA of a
tiny model written so is in tests/registry/test_conv_fold.py."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from zoo.registry.compile import hard_activations


def _rewritten(body: Callable[[Any], Any], shape: tuple[int, ...] = (1, 4, 6, 6)) -> tuple[list[str], int, Any, Any]:
    """A module computing ``body`` after a convolution, exported; its calls after the rewrite,
    the count, and its outputs before and after."""
    import torch

    class Net(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.conv = torch.nn.Conv2d(shape[1], 4, 1)

        def forward(self, x: Any) -> Any:
            return body(self.conv(x))

    torch.manual_seed(0)
    x = torch.randn(*shape) * 4
    graph = torch.export.export(Net().eval(), (x,)).module(check_guards=False)
    before = graph(x)
    count = hard_activations.fuse_hard_activations(graph)
    after = graph(x)
    calls = [str(n.target).removeprefix("aten.") for n in graph.graph.nodes if n.op == "call_function"]
    return calls, count, before, after


def _relu6(y: Any) -> Any:
    import torch

    return torch.nn.functional.relu6(y)


@pytest.mark.stack
@pytest.mark.parametrize("body", [
    lambda y: y * (y + 3).clamp(0, 6) / 6,  # PaddleOCR's ONNX: Add, Clip, Mul, Div
    lambda y: (y + 3).clamp(0, 6) * y * (1 / 6),
    lambda y: y * (_relu6(y + 3) / 6),
    lambda y: y * _relu6(3 + y).mul(1 / 6),
], ids=["paddle", "product-then-sixth", "relu6-sixth-first", "scalar-first"])
def test_hard_swish_written_out_becomes_hardswish(body: Callable[[Any], Any]) -> None:
    import torch

    calls, count, before, after = _rewritten(body)
    assert count == 1
    assert calls == ["conv2d.default", "hardswish.default"]
    torch.testing.assert_close(after, before)


@pytest.mark.stack
def test_paddles_hard_sigmoid_becomes_hardsigmoid_of_a_scaled_input() -> None:
    import torch

    calls, count, before, after = _rewritten(lambda y: (y * 0.2 + 0.5).clamp(0, 1))
    assert count == 1
    assert calls == ["conv2d.default", "mul.Tensor", "hardsigmoid.default"]  # 6 * 0.2 x + (6 * 0.5 - 3)
    torch.testing.assert_close(after, before)


@pytest.mark.stack
def test_torchs_own_hard_sigmoid_formula_and_silu_become_their_operators() -> None:
    import torch

    calls, count, before, after = _rewritten(lambda y: (y + 3).clamp(0, 6) / 6 + y * torch.sigmoid(y))
    assert count == 2
    assert calls == ["conv2d.default", "hardsigmoid.default", "silu.default", "add.Tensor"]
    torch.testing.assert_close(after, before)


@pytest.mark.stack
@pytest.mark.parametrize("body", [
    lambda y: y * (y + 3).clamp(0, 6) / 5,  # not a sixth
    lambda y: y * (y + 2).clamp(0, 6) / 6,  # not + 3
    lambda y: y.clamp(0, 1),  # a plain clamp Vela fuses stays
    lambda y: (lambda c: c * y / 6 + c)((y + 3).clamp(0, 6)),  # the clamp is read twice
    lambda y: torch_sigmoid(y) * (y + 1),  # SiLU of another tensor
], ids=["fifth", "plus-two", "plain-clamp", "shared-clamp", "other-silu"])
def test_everything_else_stays(body: Callable[[Any], Any]) -> None:
    import torch

    calls, count, before, after = _rewritten(body)
    assert count == 0
    assert not {"hardswish.default", "hardsigmoid.default", "silu.default"} & set(calls)
    torch.testing.assert_close(after, before)


def torch_sigmoid(y: Any) -> Any:
    import torch

    return torch.sigmoid(y)


def _one_element(value: float, dims: int) -> Any:
    import torch

    return torch.full((1,) * dims, value)


@pytest.mark.stack
@pytest.mark.parametrize("case", ["hard-sigmoid", "hard-swish", "hard-sigmoid-formula", "hard-swish-over-a-constant-six"])
def test_a_one_element_constant_with_more_dimensions_keeps_its_broadcast(case: str) -> None:
    """Issue 55: ``k`` of shape (1, 1, 1, 1, 1) makes the 4-D feature map a 5-D output. The rewrite
    took it for the number 0.2 (or 3, or 6) and gave back a 4-D one."""
    import torch

    k = _one_element({"hard-sigmoid": 0.2, "hard-swish-over-a-constant-six": 6.0}.get(case, 3.0), 5)
    body = {
        "hard-sigmoid": lambda y: (y * k + 0.5).clamp(0, 1),
        "hard-swish": lambda y: y * (y + k).clamp(0, 6) / 6,
        "hard-sigmoid-formula": lambda y: (y + k).clamp(0, 6) / 6,
        "hard-swish-over-a-constant-six": lambda y: y * (y + 3).clamp(0, 6) / k,
    }[case]
    calls, count, before, after = _rewritten(body)
    assert tuple(after.shape) == tuple(before.shape) == (1, 1, 4, 6, 6)
    torch.testing.assert_close(after, before)
    if case == "hard-sigmoid":
        # The broadcasting multiply stays an operator; only the shift and the clamp become the
        # hard-sigmoid, of 6 (x * k): the same 5-D function.
        assert count == 1
        assert calls == ["conv2d.default", "mul.Tensor", "mul.Tensor", "hardsigmoid.default"]
    else:
        assert count == 0
        assert not {"hardswish.default", "hardsigmoid.default"} & set(calls)
