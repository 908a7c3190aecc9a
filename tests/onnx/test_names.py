"""A name an ONNX graph defines twice is refused, as onnx.checker refuses it, instead of the last one winning."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import helper

from tests.onnx.graphs import floats, save, unchecked
from zoo import SpecError
from zoo._onnx.check import check_model

N = helper.make_node
W = floats("W", np.ones((1, 2)))
W2 = floats("W", np.full((1, 2), 2.0))

REFUSED = {
    "two nodes write y": (unchecked([N("Relu", ["x"], ["y"], name="a"), N("Sigmoid", ["x"], ["y"], name="b")], ["x"]),
                          "Sigmoid node 'b' writes 'y', which the output of Relu node 'a' already defines"),
    "two initializers W": (unchecked([N("Add", ["x", "W"], ["y"], name="add")], ["x"], [W, W2]),
                           "an initializer 'W' is defined twice"),
    "a node writes an initializer": (
        unchecked([N("Relu", ["x"], ["W"], name="r"), N("Add", ["x", "W"], ["y"], name="add")], ["x"], [W]),
        "Relu node 'r' writes 'W', which an initializer already defines"),
    "a node writes a graph input": (
        unchecked([N("Relu", ["x"], ["x"]), N("Relu", ["x"], ["y"], name="out")], ["x"]),
        "Relu node #0 (outputs x) writes 'x', which a graph input already defines"),
    "two graph inputs x": (unchecked([N("Relu", ["x"], ["y"])], ["x", "x"]), "a graph input 'x' is defined twice"),
}


def _branch(nodes: list[onnx.NodeProto]) -> onnx.GraphProto:
    return helper.make_graph(nodes, "branch", [], [helper.make_tensor_value_info("o", onnx.TensorProto.FLOAT, [1, 2])])


def _if(then: list[onnx.NodeProto]) -> onnx.ModelProto:
    return unchecked([N("Constant", [], ["c"], value=onnx.numpy_helper.from_array(np.array(True))),
                      N("If", ["c"], ["y"], name="choose", then_branch=_branch(then),
                        else_branch=_branch([N("Relu", ["x"], ["o"])]))], ["x"])


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_duplicate_names_are_refused_naming_them_as_onnx_checker_does(case: str) -> None:
    m, said = REFUSED[case]
    with pytest.raises(onnx.checker.ValidationError):
        onnx.checker.check_model(m)
    with pytest.raises(SpecError) as info:
        check_model(m, "net.onnx")
    assert str(info.value).startswith(f"net.onnx: {said}"), str(info.value)
    assert "onnx.checker refuses this too" in str(info.value)


def test_names_in_subgraphs_follow_the_checker() -> None:
    shadows = _if([N("Relu", ["x"], ["x"], name="inner"), N("Relu", ["x"], ["o"])])
    with pytest.raises(onnx.checker.ValidationError):
        onnx.checker.check_model(shadows)
    with pytest.raises(SpecError) as info:
        check_model(shadows, "net.onnx")
    assert "Relu node 'inner' (in subgraph then_branch of If node 'choose') writes 'x', which a graph input" \
        in str(info.value)
    # A branch may name a value as a later node of the outer graph does; the checker allows it.
    later = _if([N("Relu", ["x"], ["y"]), N("Relu", ["x"], ["o"])])
    onnx.checker.check_model(later)
    check_model(later, "net.onnx")


def test_an_initializer_may_share_a_graph_inputs_name() -> None:
    m = unchecked([N("Add", ["x", "W"], ["y"])], ["x", "W"], [W])
    onnx.checker.check_model(m)
    check_model(m, "net.onnx")


@pytest.mark.stack
@pytest.mark.parametrize("case", sorted(REFUSED))
def test_read_onnx_refuses_duplicate_names(case: str, tmp_path: Path) -> None:
    import zoo

    m, said = REFUSED[case]
    path = save(m, tmp_path / "m.onnx")
    with pytest.raises(SpecError) as info:
        zoo.read_onnx(path)
    assert str(info.value).startswith(f"{path}: {said}"), str(info.value)
