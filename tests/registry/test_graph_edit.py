"""A rewrite of the exported graph is made only where each replaced node keeps its shape and
dtype (compile/graph_edit.py, issue 55): the check itself, and the fifth review's cases with the
patterns' own rule switched off, so that the check alone must refuse them (stack); and the
review's model end to end, which the lowering's own output check refuses (compile)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from zoo.registry.compile import aten_graph, conv_fold, graph_edit, hard_activations


def _relu_net() -> Any:
    import torch

    class Net(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.conv = torch.nn.Conv2d(3, 4, 1)

        def forward(self, x: Any) -> Any:
            return torch.relu(self.conv(x)) + 1

    torch.manual_seed(0)
    x = torch.randn(1, 3, 5, 5)
    return torch.export.export(Net().eval(), (x,)).module(check_guards=False), x


def _at_relu(build: Callable[[graph_edit.Edit, Any], Any]) -> Callable[[graph_edit.Edit, Any], Any]:
    """A rewrite that replaces the graph's relu by what ``build(edit, relu)`` makes."""
    import torch

    def find(edit: graph_edit.Edit, node: Any) -> graph_edit.Replacement | None:
        if node.op != "call_function" or node.target is not torch.ops.aten.relu.default:
            return None
        return graph_edit.Replacement(((node, build(edit, node)),))

    return find


def _call(target: Any, *rest: Any) -> Callable[[graph_edit.Edit, Any], Any]:
    return lambda edit, relu: edit.call(target, (relu.args[0], *rest), before=relu, like=relu)


def _conv_of(weight_shape: tuple[int, ...]) -> Callable[[graph_edit.Edit, Any], Any]:
    """A new convolution of the relu's input, with a new constant weight of ``weight_shape``."""
    import torch

    def build(edit: graph_edit.Edit, relu: Any) -> Any:
        weight = edit.constant(relu, "_test_weight", torch.ones(weight_shape))
        return edit.call(torch.ops.aten.conv2d.default, (relu.args[0], weight), before=relu, like=relu)

    return build


def _refusals() -> dict[str, Callable[[graph_edit.Edit, Any], Any]]:
    import torch

    aten = torch.ops.aten
    return {
        "more-dimensions": _call(aten.unsqueeze.default, 0),
        "fewer-dimensions": _call(aten.squeeze.dim, 0),
        "other-dtype": _call(aten.to.dtype, torch.float64),
        "a-constant-and-another-shape": _conv_of((8, 4, 1, 1)),
        "an-operator-that-refuses-its-arguments": _conv_of((4, 5, 1, 1)),
    }


@pytest.mark.stack
@pytest.mark.parametrize("case", ["more-dimensions", "fewer-dimensions", "other-dtype", "a-constant-and-another-shape",
                                  "an-operator-that-refuses-its-arguments"])
def test_a_replacement_that_changes_the_shape_or_dtype_is_taken_out_again(case: str) -> None:
    import torch

    graph, x = _relu_net()
    code, names, expected = str(graph.graph), [n for n, _ in graph.named_parameters()], graph(x)
    assert graph_edit.rewrite_graph(graph, _at_relu(_refusals()[case])) == 0
    # Left as it was: no node, no constant of the refused edit.
    assert str(graph.graph) == code
    assert [n.target for n in graph.graph.nodes if n.op == "call_function"] == [
        torch.ops.aten.conv2d.default, torch.ops.aten.relu.default, torch.ops.aten.add.Tensor]
    assert [n for n, _ in graph.named_parameters()] == names
    torch.testing.assert_close(graph(x), expected)


@pytest.mark.stack
def test_a_replacement_that_keeps_them_is_made() -> None:
    import torch

    graph, x = _relu_net()
    expected = graph(x)
    assert graph_edit.rewrite_graph(graph, _at_relu(_call(torch.ops.aten.clamp.default, 0.0))) == 1
    targets = [n.target for n in graph.graph.nodes if n.op == "call_function"]
    assert targets == [torch.ops.aten.conv2d.default, torch.ops.aten.clamp.default, torch.ops.aten.add.Tensor]
    clamp = next(n for n in graph.graph.nodes if n.target is torch.ops.aten.clamp.default)
    assert tuple(clamp.meta["val"].shape) == (1, 4, 5, 5)  # the value the edit computed on the example values
    torch.testing.assert_close(graph(x), expected)


def _constant(value: float, dims: int) -> Any:
    """A one-element constant of ``dims`` dimensions, made before the export, which lifts it as a constant."""
    import torch

    return torch.full((1,) * dims, value)


def _reviews_cases() -> dict[str, tuple[Callable[[Any], Any], tuple[int, ...], Callable[[Any], int]]]:
    """The fifth review's cases: a module's body after a convolution (before it, for the fold into
    a convolution's input), the input shape, and the rewrite."""
    fuse, fold = hard_activations.fuse_hard_activations, conv_fold.fold_into_convolutions
    k, three, six, half = _constant(0.2, 5), _constant(3.0, 5), _constant(6.0, 5), _constant(0.5, 4)
    return {
        "hard-sigmoid": (lambda y: (y * k + 0.5).clamp(0, 1), (1, 4, 6, 6), fuse),
        "hard-swish": (lambda y: y * (y + three).clamp(0, 6) / 6, (1, 4, 6, 6), fuse),
        "hard-swish-over-a-constant-six": (lambda y: y * (y + 3).clamp(0, 6) / six, (1, 4, 6, 6), fuse),
        "unbatched-conv": (lambda x: x * half, (4, 6, 6), fold),
    }


def _exported(body: Callable[[Any], Any], shape: tuple[int, ...], before: bool) -> tuple[Any, Any, Any]:
    """A module computing ``body`` after a 1×1 convolution (or before it), exported: the graph, an
    input and the eager module's output."""
    import torch

    class Net(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.conv = torch.nn.Conv2d(4, 4, 1)

        def forward(self, x: Any) -> Any:
            return self.conv(body(x)) if before else body(self.conv(x))

    torch.manual_seed(0)
    module, x = Net().eval(), torch.randn(*shape)
    return torch.export.export(module, (x,)).module(check_guards=False), x, module(x)


@pytest.mark.stack
@pytest.mark.parametrize("case", ["hard-sigmoid", "hard-swish", "hard-swish-over-a-constant-six", "unbatched-conv"])
def test_the_check_alone_refuses_the_reviews_broadcasting_constants(case: str, monkeypatch: pytest.MonkeyPatch) -> None:
    import torch

    # The reader as it was: any one-element constant is a number, whatever it broadcasts to.
    monkeypatch.setattr(aten_graph, "_same_as", lambda node, source: aten_graph.tensor_value(source) is not None)
    body, shape, rewrite = _reviews_cases()[case]
    graph, x, eager = _exported(body, shape, before=case == "unbatched-conv")
    assert rewrite(graph) == 0
    output = graph.graph.output_node().args[0][0]
    assert tuple(output.meta["val"].shape) == tuple(graph(x).shape) == tuple(eager.shape)
    torch.testing.assert_close(graph(x), eager)


BROADCASTING_MODEL = '''
"""Issue 55: a convolution's output scaled by a one-element constant of five dimensions."""
import torch


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3, padding=1)
        self.register_buffer("k", torch.full((1, 1, 1, 1, 1), 0.2))

    def forward(self, x):
        return (self.conv(x) * self.k + 0.5).clamp(0, 1)


torch.manual_seed(0)
ModelUnderTest = Net().eval()
ModelInputs = (torch.randn(1, 3, 6, 6),)
'''


@pytest.mark.compile
def test_a_program_of_another_output_shape_is_never_handed_out(tmp_path: Path) -> None:
    """The fifth review's model: ``zoo fetch --verify`` handed out a .pte whose output was
    [1, 4, 6, 6], the float model's (1, 1, 4, 6, 6), and said it was bit-exact. zoo's rewrite
    no longer drops the dimension, but ExecuTorch's own FoldScalarMulIntoConvPass does: the
    build refuses it after lowering, before Vela, with or without ``--verify``."""
    from tests.conftest import run_zoo

    (tmp_path / "m.py").write_text(BROADCASTING_MODEL)
    proc = run_zoo("--model-file", "m.py", "fetch", "m", "-t", "u55-128", "--verify", "-o", "out", cwd=tmp_path)
    assert proc.returncode != 0, proc.stdout
    assert ("the lowered program's output 0 is [1, 4, 6, 6] float32 where the exported model's is [1, 1, 4, 6, 6] "
            "float32: it does not compute the model's function") in proc.stderr, proc.stderr
    assert "FoldScalarMulIntoConvPass" in proc.stderr
    assert not list(tmp_path.rglob("*.pte"))
