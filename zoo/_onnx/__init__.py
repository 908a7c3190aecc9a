"""Read an ONNX graph into a ``torch.nn.Module`` that ``torch.export.export`` accepts.

ExecuTorch has no ONNX front end: this maps each ONNX operator to torch (one function per
operator, ``table.py``), folds what fixed input shapes decide at load time, and keeps
weights as parameters so that PT2E quantizes them per channel. torch and onnx load only
inside the functions here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from zoo._errors import SpecError

Dims = tuple[int | str, ...]


def graph_inputs(model: Any) -> list[tuple[str, Dims, int]]:
    """Each real input of an ONNX model: its name, its dims (an int, or a name or "?" when
    dynamic) and its ONNX element type. Initializers listed as inputs are left out."""
    weights = {t.name for t in model.graph.initializer}
    out = []
    for value in model.graph.input:
        if value.name in weights:
            continue
        tensor = value.type.tensor_type
        dims = tuple(d.dim_value if d.HasField("dim_value") and d.dim_value > 0 else (d.dim_param or "?")
                     for d in tensor.shape.dim)
        out.append((value.name, dims, int(tensor.elem_type)))
    return out


def shape_problems(inputs: Sequence[tuple[str, Dims, int]], declared: Mapping[str, Sequence[int]]) -> list[str]:
    """What is wrong with ``declared`` input shapes for these inputs (empty when nothing is)."""
    known = {name: dims for name, dims, _ in inputs}
    problems = [f"{name!r} is not an input of the model (its inputs: {', '.join(map(repr, known))})"
                for name in declared if name not in known]
    for name, shape in declared.items():
        if name not in known:
            continue
        dims = known[name]
        if not isinstance(shape, Sequence) or isinstance(shape, str) or \
                not all(isinstance(d, int) and not isinstance(d, bool) for d in shape):
            problems.append(f"{name!r}: {shape!r} is not a list of integers")
        elif len(shape) != len(dims):
            problems.append(f"{name!r}: {list(shape)} has {len(shape)} dims, the input has rank {len(dims)} {_show(dims)}")
        elif any(d <= 0 for d in shape):
            problems.append(f"{name!r}: {list(shape)} has a dim that is not positive")
        else:
            clash = [i for i, (d, f) in enumerate(zip(shape, dims, strict=True)) if isinstance(f, int) and d != f]
            if clash:
                problems.append(f"{name!r}: {list(shape)} contradicts the file's static dims {_show(dims)} "
                                f"at axis {', '.join(map(str, clash))}")
    return problems


def _show(dims: Dims) -> str:
    return "[" + ", ".join(str(d) for d in dims) + "]"


def fixed_shapes(inputs: Sequence[tuple[str, Dims, int]], declared: Mapping[str, Sequence[int]]) -> dict[str, tuple[int, ...]]:
    """Every input's shape: the declared one, else the file's own when it is fully static.
    Raises SpecError naming the inputs with dynamic dims that nothing declares."""
    shapes: dict[str, tuple[int, ...]] = {}
    undeclared = []
    for name, dims, _ in inputs:
        if name in declared:
            shapes[name] = tuple(int(d) for d in declared[name])
        elif all(isinstance(d, int) for d in dims):
            shapes[name] = tuple(int(d) for d in dims)
        else:
            undeclared.append((name, dims))
    if undeclared:
        raise SpecError("dynamic input dims need fixed values: " + "; ".join(f"{n!r} is {_show(d)}" for n, d in undeclared))
    return shapes


def read_onnx(path: str | Path, input_shapes: Mapping[str, Sequence[int]] | None = None) -> Any:
    """Read the ONNX file at ``path`` into a ``torch.nn.Module`` in eval mode.

    ``input_shapes`` fixes each input's shape (e.g. ``{"x": (1, 3, 48, 320)}``); an input
    whose dims the file fixes may be left out. Everything the shapes decide is computed here,
    so the module's export holds only tensor operations. Raises ``zoo.SpecError`` for an
    operator or attribute zoo cannot map, naming the node and the file, and for a tensor whose
    data is kept outside the file or a name the graph defines twice: only the file's bytes are
    read, so its sha256 covers the module."""
    path = Path(path).expanduser()
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise SpecError(f"{path}: cannot be read as an ONNX model: {exc}") from None
    return module_from_model(load_model(data, str(path)), input_shapes or {}, where=str(path))


def load_model(data: bytes, where: str) -> Any:
    """The ``onnx.ModelProto`` in ``data``, checked (``check.py``). Nothing beside these bytes is
    read: a tensor kept in an external file is refused, so the file's sha256 covers the model."""
    import onnx

    from zoo._onnx.check import check_model

    try:
        model = onnx.load_from_string(data)
    except Exception as exc:  # onnx raises its parser's own error types
        raise SpecError(f"{where}: cannot be read as an ONNX model: {exc}") from None
    check_model(model, where)
    return model


def module_from_model(model: Any, input_shapes: Mapping[str, Sequence[int]], where: str = "ONNX model") -> Any:
    """``read_onnx`` for a loaded ``onnx.ModelProto``: checked again, since it may come from anywhere."""
    from zoo._onnx.build import build

    return build(model, checked_shapes(model, input_shapes, where), {n: t for n, _, t in graph_inputs(model)}, where)


def checked_shapes(model: Any, input_shapes: Mapping[str, Sequence[int]], where: str) -> dict[str, tuple[int, ...]]:
    """Every input's fixed shape, after the checks that read only the model's fields (``check.py``,
    and ``input_shapes`` against its inputs); the operators are read by ``module_from_model``.
    Needs neither torch nor the inputs' memory, so a listing can call it on any model."""
    from zoo._onnx.check import check_model

    check_model(model, where)
    inputs = graph_inputs(model)
    problems = shape_problems(inputs, input_shapes)
    if problems:
        raise SpecError(f"{where}: input_shapes: " + "; ".join(problems))
    try:
        return fixed_shapes(inputs, input_shapes)
    except SpecError as exc:
        raise SpecError(f"{where}: {exc}; pass input_shapes, e.g. "
                        f"{ {n: [d if isinstance(d, int) else 1 for d in dims] for n, dims, _ in inputs} }") from None


def reader_identity() -> str:
    """``onnx-reader sha256:…`` of this package's source. A plugin that builds with ``read_onnx``
    puts it in its weights' identity, so that a change to an operator mapping builds again."""
    import hashlib

    h = hashlib.sha256()
    for source in sorted(Path(__file__).parent.glob("*.py")):
        h.update(source.name.encode() + b"\0" + source.read_bytes())
    return f"onnx-reader sha256:{h.hexdigest()}"


def supported_operators() -> list[str]:
    from zoo._onnx.table import TABLE

    return sorted(TABLE)
