"""Read a TFLite flatbuffer into a ``torch.nn.Module`` that ``torch.export.export`` accepts.

ExecuTorch has no TFLite front end, and zoo never depends on TensorFlow: ``schema.py`` reads
the file with zoo's bounded flatbuffer reader (``zoo._flatbuffer``), ``weights.py`` decodes its
constants (float16, sparse, int8 dequantized), and ``build.py`` maps each operator to torch
(``ops.py``, ``ops_nn.py``). The module's inputs and outputs have TFLite's shapes (NHWC images); inside,
images are channels-first. torch loads only inside the functions here.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from zoo._errors import SpecError

__all__ = ["TfliteInput", "load", "module_from_model", "read_tflite", "supported_operators", "tflite_reader_identity"]


@dataclass(frozen=True)
class TfliteInput:
    name: str
    shape: tuple[int, ...]
    quantized: bool  # an int8 or uint8 input, read as its real value


def load(data: bytes, where: str) -> Any:
    """The checked ``schema.Model`` in ``data``; torch-free."""
    from zoo._tflite.schema import parse

    return parse(data, where)


def inputs_of(model: Any) -> list[TfliteInput]:
    return [TfliteInput(model.tensors[i].name, model.tensors[i].shape, model.tensors[i].quantized)
            for i in model.inputs]


def is_quantized(model: Any) -> bool:
    """Whether the file computes in integers (int8 or uint8 weights or activations)."""
    return any(t.quantized and t.type in (3, 9) for t in model.tensors)


def read_tflite(path: str | Path) -> Any:
    """Read the ``.tflite`` file at ``path`` into a ``torch.nn.Module`` in eval mode.

    The module takes and returns tensors of the shapes TFLite's interpreter gives (NHWC images),
    in float32: an int8 or uint8 file's weights are dequantized, and its inputs and outputs are
    their real values (zoo's recipes quantize the module again). Raises ``zoo.SpecError`` for a
    damaged file, an operator zoo does not read (named, with its index), more than one subgraph
    or control flow, and a buffer outside the file: only the file's bytes are read, so its
    sha256 covers the module."""
    path = Path(path).expanduser()
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise SpecError(f"{path}: cannot be read as a TFLite model: {exc}") from None
    return module_from_model(load(data, str(path)))


def module_from_model(model: Any) -> Any:
    from zoo._tflite.build import build
    from zoo._tflite.ops import TABLE_OPS
    from zoo._tflite.ops_nn import TABLE_NN

    return build(model, {**TABLE_OPS, **TABLE_NN})


def tflite_reader_identity() -> str:
    """``tflite-reader sha256:…`` of this package's source and of the flatbuffer reader it stands on:
    a plugin that builds with ``read_tflite`` puts it in its weights' identity, so that a change to
    the reader builds again."""
    h = hashlib.sha256()
    here = Path(__file__).parent
    for source in [*sorted(here.glob("*.py")), here.parent / "_flatbuffer.py"]:
        h.update(source.name.encode() + b"\0" + source.read_bytes())
    return f"tflite-reader sha256:{h.hexdigest()}"


def supported_operators() -> list[str]:
    from zoo._tflite.schema import CUSTOM_SUPPORTED, SUPPORTED

    return sorted(SUPPORTED | CUSTOM_SUPPORTED)
