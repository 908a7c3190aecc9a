"""``--model-file model.onnx``: an ONNX graph, read by ``zoo._onnx``, as a ModelSpec.

Input shapes are fixed: the file's own static dims, and for dynamic ones a sidecar JSON
next to the file (``model.onnx.json``: ``{"inputs": {"x": [1, 3, 48, 320]}}``). Without
``--calibration-dir`` the model calibrates on seeded random inputs.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from zoo._errors import MissingExtraError, SpecError
from zoo._spec import InputSpec
from zoo.registry.model_files.read_file import ReadFile, input_names, ready

_DTYPES = {1: "float32", 10: "float16", 11: "float64"}


def sidecar_of(path: Path) -> Path:
    return path.with_name(path.name + ".json")


def _example_json(inputs: list[tuple[str, tuple[int | str, ...], int]]) -> str:
    return json.dumps({"inputs": {n: [d if isinstance(d, int) else 1 for d in dims] for n, dims, _ in inputs}})


def declared_shapes(path: Path, inputs: list[tuple[str, tuple[int | str, ...], int]]) -> tuple[dict[str, list[int]], bytes]:
    """The sidecar's input shapes (checked against the file's inputs) and its bytes."""
    from zoo._onnx import shape_problems

    sidecar = sidecar_of(path)
    if not sidecar.is_file():
        dynamic = [(n, d) for n, d, _ in inputs if not all(isinstance(v, int) for v in d)]
        if dynamic:
            shown = "; ".join(f"{n!r} is [{', '.join(map(str, d))}]" for n, d in dynamic)
            raise SpecError(f"model file {path}: dynamic input dims need fixed values ({shown}). "
                            f"Declare them in {sidecar}, e.g.: {_example_json(inputs)}")
        return {}, b""
    raw = sidecar.read_bytes()
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise SpecError(f"sidecar {sidecar}: not valid JSON ({exc}); write e.g. {_example_json(inputs)}") from None
    if not isinstance(data, dict) or set(data) != {"inputs"} or not isinstance(data["inputs"], dict):
        raise SpecError(f"sidecar {sidecar}: expected exactly one key, \"inputs\", mapping each input's name "
                        f"to its shape; write e.g. {_example_json(inputs)}")
    declared: dict[str, Any] = data["inputs"]
    problems = shape_problems(inputs, declared)
    undeclared = [n for n, d, _ in inputs if n not in declared and not all(isinstance(v, int) for v in d)]
    problems += [f"{n!r} has dynamic dims and is not declared" for n in undeclared]
    if problems:
        raise SpecError(f"sidecar {sidecar}: " + "; ".join(problems) + f". Write e.g. {_example_json(inputs)}")
    return declared, raw


class OnnxFile(ReadFile):
    """What describes the read model, from its fields alone; the module is planned the first time
    a build asks for it."""

    kind = "an .onnx file"

    def __init__(self, path: Path, proto: Any, shapes: dict[str, tuple[int, ...]], elem_types: dict[str, int],
                 inputs: tuple[InputSpec, ...], identity: str, description: str) -> None:
        from zoo._onnx import reader_identity

        super().__init__(path, inputs, identity, description, __file__, reader_identity())
        self._proto = proto
        self._shapes = shapes
        self._elem_types = elem_types

    def _build(self) -> Any:
        """The graph planned into a torch module, on zero inputs of the fixed shapes."""
        from zoo._onnx.build import build

        return build(self._proto, self._shapes, self._elem_types, f"model file {self.path}")


def load_onnx_file(path: Path) -> OnnxFile:
    """Read and check ``path`` and its sidecar. Neither torch nor the inputs' memory is needed
    here: the module and the samples are made when asked for (``OnnxFile.module``, ``samples``)."""
    ready(OnnxFile.kind)
    try:
        import onnx
    except ImportError:
        raise MissingExtraError(f"--model-file with {OnnxFile.kind}") from None
    from zoo._onnx import checked_shapes, graph_inputs, load_model

    where = f"model file {path}"
    data = path.read_bytes()
    proto = load_model(data, where)
    inputs = graph_inputs(proto)
    declared, sidecar_bytes = declared_shapes(path, inputs)
    for name, _, elem in inputs:
        if elem not in _DTYPES:
            raise SpecError(f"{where}: input {name!r} has ONNX element type "
                            f"{onnx.TensorProto.DataType.Name(elem)}; zoo --model-file takes float inputs only")
    shapes = checked_shapes(proto, declared, where)
    names = input_names([n for n, _, _ in inputs])
    return OnnxFile(
        path=path,
        proto=proto,
        shapes=shapes,
        elem_types={n: e for n, _, e in inputs},
        inputs=tuple(InputSpec(shown, shapes[n], _DTYPES[e]) for shown, (n, _, e) in zip(names, inputs, strict=True)),
        identity=hashlib.sha256(data + b"\0sidecar\0" + sidecar_bytes).hexdigest(),
        description=(proto.doc_string or f"ONNX model {path.name}").strip().splitlines()[0],
    )
