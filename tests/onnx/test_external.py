"""ONNX tensors whose data lives outside the model file are refused wherever zoo reads a model:
onnx would read them from the working folder (or beside the file), outside the model's identity."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import helper, numpy_helper

from tests.conftest import run_zoo
from tests.onnx.graphs import external, floats, save, unchecked
from zoo import SpecError
from zoo._onnx.check import check_model

N = helper.make_node
SECRET = np.array([[7.0, 9.0]], dtype=np.float32)
REFUSED = "keeps its data in an external file ('secret.bin')"
ADVICE = "onnx.save(onnx.load(path), new_path, save_as_external_data=False)"


def _constant_net(value: onnx.TensorProto) -> onnx.ModelProto:
    return unchecked([N("Constant", [], ["k"], value=value, name="leak"), N("Add", ["x", "k"], ["y"], name="add")],
                     ["x"])


def _secret_constant(folder: Path) -> onnx.ModelProto:
    """A Constant whose value names secret.bin in ``folder``, the way onnx.save writes external data."""
    return _constant_net(external(floats("k", SECRET), folder / "secret.bin"))


def _in_subgraph(folder: Path) -> onnx.ModelProto:
    def branch(value: onnx.TensorProto) -> onnx.GraphProto:
        return helper.make_graph([N("Constant", [], ["o"], value=value, name="inner")], "branch", [],
                                 [helper.make_tensor_value_info("o", onnx.TensorProto.FLOAT, [1, 2])])

    return unchecked([N("Constant", [], ["c"], value=numpy_helper.from_array(np.array(True)), name="cond"),
                      N("If", ["c"], ["k"], name="choose", then_branch=branch(external(floats("s", SECRET),
                                                                                       folder / "secret.bin")),
                        else_branch=branch(floats("e", np.zeros((1, 2))))),
                      N("Add", ["x", "k"], ["y"], name="add")], ["x"])


def test_every_place_a_tensor_sits_is_checked(tmp_path: Path) -> None:
    secret = external(floats("k", SECRET), tmp_path / "secret.bin")
    indices = numpy_helper.from_array(np.array([0], dtype=np.int64), "i")
    sparse = helper.make_sparse_tensor(secret, indices, [1, 2])
    cases = {
        "Constant node 'leak': attribute 'value'": _constant_net(secret),
        "Constant node 'leak': attribute 'sparse_value'":
            unchecked([N("Constant", [], ["k"], sparse_value=sparse, name="leak"), N("Add", ["x", "k"], ["y"])], ["x"]),
        "Constant node 'inner' (in subgraph then_branch of If node 'choose'): attribute 'value'":
            _in_subgraph(tmp_path),
        "initializer 'k'": unchecked([N("Add", ["x", "k"], ["y"])], ["x"], [secret]),
    }
    sparse_model = unchecked([N("Add", ["x", "k"], ["y"])], ["x"])
    sparse_model.graph.sparse_initializer.append(sparse)
    cases["sparse initializer 'k'"] = sparse_model
    for owner, m in cases.items():
        with pytest.raises(SpecError) as info:
            check_model(m, "net.onnx")
        assert str(info.value).startswith(f"net.onnx: {owner} {REFUSED}; "), str(info.value)
        assert ADVICE in str(info.value)


def test_weights_kept_inside_pass() -> None:
    check_model(_constant_net(floats("k", SECRET)), "net.onnx")


@pytest.mark.stack
def test_model_file_with_a_constant_read_from_the_working_folder_is_refused(tmp_path: Path) -> None:
    """The file's Constant names secret.bin, which sits in the working folder (the test's tmp_path),
    not beside the file: listing, showing or building the model must not read it into a .pte."""
    (tmp_path / "models").mkdir()
    path = save(_secret_constant(tmp_path), tmp_path / "models" / "m.onnx")
    refusal = f"model file {path}: Constant node 'leak': attribute 'value' {REFUSED}"
    listed = run_zoo("--model-file", str(path), "list")
    # list skips a model file it cannot read, as it skips a broken plugin, and says why.
    rows = [line for line in listed.stdout.splitlines() if line.split()[:1] == ["m"]]
    assert not rows, rows
    assert refusal in listed.stderr, listed.stderr
    for command in (["info", "m"], ["fetch", "m", "-t", "u55-128", "-o", "out"]):
        proc = run_zoo("--model-file", str(path), *command)
        assert proc.returncode != 0, f"zoo {command[0]} read secret.bin:\n{proc.stdout}"
        assert refusal in proc.stderr, proc.stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.stack
def test_model_file_identity_covers_every_byte_it_builds(tmp_path: Path) -> None:
    """The weights' identity is the file's sha256 and the sidecar's: a model whose Constant lives in
    another file would build the same identity from other bytes, so it gets none."""
    from zoo.registry.model_files.py_file import spec_from_model_file

    path = save(_secret_constant(tmp_path), tmp_path / "m.onnx")
    with pytest.raises(SpecError) as info:
        spec_from_model_file(path)
    assert f"Constant node 'leak': attribute 'value' {REFUSED}" in str(info.value)


@pytest.mark.stack
def test_model_file_with_external_data_in_a_subgraph_is_refused_for_it(tmp_path: Path) -> None:
    from zoo.registry.model_files.py_file import spec_from_model_file

    path = save(_in_subgraph(tmp_path), tmp_path / "m.onnx")
    with pytest.raises(SpecError) as info:
        spec_from_model_file(path)
    assert f"Constant node 'inner' (in subgraph then_branch of If node 'choose'): attribute 'value' {REFUSED}" \
        in str(info.value)


@pytest.mark.stack
def test_read_onnx_refuses_weights_beside_the_file(tmp_path: Path) -> None:
    """What a pack reads with zoo.read_onnx is covered by its identity (the file's sha256) only
    when every weight is inside the file."""
    import zoo

    m = unchecked([N("Add", ["x", "w"], ["y"], name="add")], ["x"], [floats("w", SECRET)])
    path = tmp_path / "m.onnx"
    onnx.save(m, str(path), save_as_external_data=True, location="m.onnx.data", size_threshold=0)
    assert (tmp_path / "m.onnx.data").is_file()
    with pytest.raises(SpecError) as info:
        zoo.read_onnx(path)
    assert str(info.value).startswith(f"{path}: initializer 'w' keeps its data in an external file ('m.onnx.data'); ")
    for m, owner in ((_secret_constant(tmp_path), "Constant node 'leak'"),
                     (_in_subgraph(tmp_path), "Constant node 'inner' (in subgraph then_branch of If node 'choose')")):
        with pytest.raises(SpecError) as info:
            zoo.read_onnx(save(m, path))
        assert f"{owner}: attribute 'value' {REFUSED}" in str(info.value)
