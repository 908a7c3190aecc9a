"""``--model-file model.onnx``: an ONNX graph, read by ``zoo._onnx``, as a ModelSpec.

Input shapes are fixed: the file's own static dims, and for dynamic ones a sidecar JSON
next to the file (``model.onnx.json``: ``{"inputs": {"x": [1, 3, 48, 320]}}``). Without
``--calibration-dir`` the model calibrates on seeded random inputs.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from zoo._errors import SpecError
from zoo._spec import InputSpec

RANDOM_SAMPLES = 8
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


def _reader_digest() -> str:
    """This loader's source and the reader's: a change to either builds ONNX model files again."""
    from zoo._onnx import reader_identity

    return hashlib.sha256(Path(__file__).read_bytes() + reader_identity().encode()).hexdigest()


@dataclass(frozen=True)
class OnnxFile:
    """What ``model_file`` makes a ModelSpec of: the read module and what describes it."""

    module: Any
    inputs: tuple[InputSpec, ...]
    samples: list[tuple[Any, ...]]
    samples_digest: str
    identity: str
    version: str
    description: str


def load_onnx_file(path: Path) -> OnnxFile:
    from zoo.registry import reproducible

    reproducible.pin()
    try:
        import onnx
        import torch
    except ImportError:
        from zoo._errors import MissingExtraError

        raise MissingExtraError("--model-file with an .onnx file") from None
    from zoo._onnx import graph_inputs, load_model, module_from_model
    from zoo.registry.compile import digest_samples

    data = path.read_bytes()
    proto = load_model(data, f"model file {path}")
    inputs = graph_inputs(proto)
    declared, sidecar_bytes = declared_shapes(path, inputs)
    for name, _, elem in inputs:
        if elem not in _DTYPES:
            raise SpecError(f"model file {path}: input {name!r} has ONNX element type "
                            f"{onnx.TensorProto.DataType.Name(elem)}; zoo --model-file takes float inputs only")
    module = module_from_model(proto, declared, where=f"model file {path}")
    shapes = [tuple(int(d) for d in declared.get(n, dims)) for n, dims, _ in inputs]
    dtypes = [getattr(torch, _DTYPES[e]) for _, _, e in inputs]

    identity = hashlib.sha256(data + b"\0sidecar\0" + sidecar_bytes).hexdigest()
    torch.manual_seed(0)
    samples = [tuple(torch.randn(s).to(t) for s, t in zip(shapes, dtypes, strict=True)) for _ in range(RANDOM_SAMPLES)]
    names = [n if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", n) else f"input_{i}" for i, (n, _, _) in enumerate(inputs)]
    return OnnxFile(
        module=module,
        inputs=tuple(InputSpec(n, s, _DTYPES[e]) for n, s, (_, _, e) in zip(names, shapes, inputs, strict=True)),
        samples=samples,
        samples_digest=digest_samples(samples),
        identity=identity,
        # The weights identity names the file; the version also names the reader that mapped it.
        version=hashlib.sha256((identity + _reader_digest()).encode()).hexdigest()[:16],
        description=(proto.doc_string or f"ONNX model {path.name}").strip().splitlines()[0],
    )
