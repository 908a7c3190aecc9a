"""zoo.read_onnx: export, folding, weights, determinism and its refusals."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import helper

from tests.onnx.graphs import conv_net, floats, ints, model, save, weight
from zoo import SpecError

N = helper.make_node


def _shape_chain() -> onnx.ModelProto:
    """Paddle's pattern: the batch dim read from Shape, gathered, concatenated into a Reshape target."""
    return model([
        N("Shape", ["x"], ["s"], name="shape"),
        N("Gather", ["s", "i"], ["b"], axis=0, name="batch"),
        N("Unsqueeze", ["b", "z"], ["bu"], name="unsqueeze"),
        N("Cast", ["bu"], ["bc"], to=onnx.TensorProto.INT64, name="cast"),
        N("Concat", ["bc", "rest"], ["target"], axis=0, name="concat"),
        N("Reshape", ["x", "target"], ["r"], name="reshape"),
        N("MatMul", ["r", "w"], ["y"], name="fc"),
    ], {"x": ["N", 4, 6]}, ["y"], [onnx.numpy_helper.from_array(np.int64(0), "i"), ints("z", [0]),
                                   ints("rest", [-1]), weight("w", (24, 5), 1)], opset=13,
        output_shapes={"y": ["N", 5]})


@pytest.mark.stack
def test_read_module_exports_and_folds_shape_arithmetic(tmp_path: Path) -> None:
    import torch

    import zoo

    module = zoo.read_onnx(save(_shape_chain(), tmp_path / "chain.onnx"), {"x": (2, 4, 6)})
    ep = torch.export.export(module, (torch.randn(2, 4, 6),), strict=False)
    targets = [str(n.target) for n in ep.graph.nodes if n.op == "call_function"]
    assert targets == ["aten.reshape.default", "aten.linear.default"], targets
    reshape = next(n for n in ep.graph.nodes if str(n.target) == "aten.reshape.default")
    assert reshape.args[1] == [2, 24]
    # The MatMul's weight is a Linear's: a parameter of shape (out, in).
    params = dict(module.named_parameters())
    assert [tuple(p.shape) for p in params.values()] == [(5, 24)]
    assert list(ep.graph_signature.parameters) == list(params)


@pytest.mark.stack
def test_weights_are_parameters_and_buffers() -> None:
    from zoo._onnx import module_from_model

    module = module_from_model(conv_net(), {"x": [1, 3, 16, 16]})
    params = {n: tuple(p.shape) for n, p in module.named_parameters()}
    buffers = {n: tuple(b.shape) for n, b in module.named_buffers()}
    assert params == {"c_w": (8, 3, 3, 3), "c_b": (8,), "c_s": (8,), "c_bb": (8,), "c_fw_gemm1_01": (4, 8),
                      "c_fb_gemm1_0": (4,)}
    assert buffers == {"c_m": (8,), "c_v": (8,)}


@pytest.mark.stack
def test_same_file_gives_the_same_module_and_outputs(tmp_path: Path) -> None:
    import torch

    import zoo

    path = save(conv_net(), tmp_path / "net.onnx")

    def digest() -> str:
        module = zoo.read_onnx(path, {"x": [2, 3, 16, 16]})
        h = hashlib.sha256()
        for name, t in module.state_dict().items():
            h.update(name.encode() + t.numpy().tobytes())
        with torch.no_grad():
            h.update(module(torch.ones(2, 3, 16, 16)).numpy().tobytes())
        return h.hexdigest()

    assert digest() == digest()


def _refusal(m: onnx.ModelProto, tmp_path: Path, shapes: dict[str, list[int]] | None = None) -> str:
    import zoo

    path = save(m, tmp_path / "m.onnx")
    with pytest.raises(SpecError) as info:
        zoo.read_onnx(path, shapes)
    message = str(info.value)
    assert str(path) in message
    return message


@pytest.mark.stack
def test_unknown_operator_is_refused_naming_op_node_and_file(tmp_path: Path) -> None:
    m = model([N("Relu", ["x"], ["r"]), N("Einsum", ["r", "r"], ["y"], equation="ij,ij->ij", name="mix")],
              {"x": [2, 2]}, ["y"])
    message = _refusal(m, tmp_path)
    assert "Einsum node 'mix': operator Einsum is not supported" in message
    assert "Conv" in message and "Resize" in message  # the supported list
    unnamed = model([N("Relu", ["x"], ["r"]), N("Einsum", ["r", "r"], ["y"], equation="ij,ij->ij")],
                    {"x": [2, 2]}, ["y"])
    assert "Einsum node #1 (outputs y)" in _refusal(unnamed, tmp_path)


@pytest.mark.stack
def test_custom_domain_operator_is_refused(tmp_path: Path) -> None:
    graph = helper.make_graph([N("Relu", ["x"], ["y"], domain="com.example", name="custom")], "g",
                              [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [1])],
                              [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [1])])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.example", 1)])
    assert "operator com.example::Relu is not supported" in _refusal(m, tmp_path)


@pytest.mark.stack
def test_unsupported_attribute_is_refused_naming_node_and_attribute(tmp_path: Path) -> None:
    m = model([N("Resize", ["x", "roi", "sc"], ["y"], mode="cubic", name="up")], {"x": [1, 1, 4, 4]}, ["y"],
              [floats("roi", []), floats("sc", [1, 1, 2, 2])])
    assert "Resize node 'up': attribute mode='cubic' is not supported" in _refusal(m, tmp_path)
    linear = model([N("Resize", ["x", "roi", "sc"], ["y"], mode="linear", name="up",
                      coordinate_transformation_mode="asymmetric")], {"x": [1, 1, 4, 4]}, ["y"],
                   [floats("roi", []), floats("sc", [1, 1, 2, 2])])
    assert "coordinate_transformation_mode='asymmetric'" in _refusal(linear, tmp_path)


@pytest.mark.stack
def test_dynamic_dims_without_shapes_and_bad_shapes_are_refused(tmp_path: Path) -> None:
    message = _refusal(conv_net(), tmp_path)
    assert "'x' is [N, 3, 16, 16]" in message and "input_shapes" in message
    assert "contradicts the file's static dims" in _refusal(conv_net(), tmp_path, {"x": [1, 3, 16, 17]})
    assert "'y' is not an input" in _refusal(conv_net(), tmp_path, {"x": [1, 3, 16, 16], "y": [1]})


@pytest.mark.stack
def test_reading_the_model_file_gives_a_spec_with_random_calibration(tmp_path: Path) -> None:
    from zoo.registry.model_files.py_file import spec_from_model_file

    path = save(conv_net(), tmp_path / "Small Net.onnx")
    (tmp_path / "Small Net.onnx.json").write_text('{"inputs": {"x": [1, 3, 16, 16]}}')
    spec = spec_from_model_file(path)
    assert spec.name == "small_net" and spec.inputs[0].shape == (1, 3, 16, 16)
    assert "random" in spec.calibration.description and spec.calibration.size == 8
    identity = spec.weights[0].identity()
    assert identity == hashlib.sha256(path.read_bytes() + b"\0sidecar\0" +
                                      (tmp_path / "Small Net.onnx.json").read_bytes()).hexdigest()
    (tmp_path / "Small Net.onnx.json").write_text('{"inputs": {"x": [2, 3, 16, 16]}}')
    assert spec_from_model_file(path).weights[0].identity() != identity


@pytest.mark.stack
def test_the_random_calibration_draws_each_input_in_order_in_its_own_float_type(tmp_path: Path) -> None:
    import torch

    from zoo.registry.model_files.py_file import spec_from_model_file

    graph = helper.make_graph(
        [N("Relu", ["x"], ["y"]), N("Relu", ["z"], ["w"])], "two", [
            helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT16, [1, 4]),
            helper.make_tensor_value_info("z", onnx.TensorProto.DOUBLE, [2, 3])], [
            helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT16, [1, 4]),
            helper.make_tensor_value_info("w", onnx.TensorProto.DOUBLE, [2, 3])])
    path = save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), tmp_path / "two.onnx")
    samples = spec_from_model_file(path).calibration.load()
    generator = torch.Generator().manual_seed(0)
    for sample in samples:
        assert [t.dtype for t in sample] == [torch.float16, torch.float64]
        assert torch.equal(sample[0], torch.randn((1, 4), generator=generator).to(torch.float16))
        assert torch.equal(sample[1], torch.randn((2, 3), generator=generator).to(torch.float64))


def test_the_docs_example_is_conv_net_with_its_declaration() -> None:
    """docs/plugins.md builds examples/conv_net.onnx: tests/onnx/graphs.py's conv_net, with a sidecar."""
    import json

    from tests.conftest import ROOT

    shipped = onnx.load(str(ROOT / "examples" / "conv_net.onnx"))
    onnx.checker.check_model(shipped, full_check=True)
    made = conv_net()
    assert [(n.op_type, n.name) for n in shipped.graph.node] == [(n.op_type, n.name) for n in made.graph.node]
    assert {t.name: list(t.dims) for t in shipped.graph.initializer} == \
        {t.name: list(t.dims) for t in made.graph.initializer}
    declared = json.loads((ROOT / "examples" / "conv_net.onnx.json").read_text())
    assert declared == {"inputs": {"x": [1, 3, 16, 16]}}
