"""``--model-file model.tflite``: a TFLite flatbuffer, read by ``zoo._tflite``, as a ModelSpec.

A ``.tflite`` fixes its input shapes, so no sidecar is needed. Without ``--calibration-dir``
the model calibrates on seeded random inputs. An int8 or uint8 file is read with its weights
dequantized and is quantized again by zoo's recipes: a notice says so when it is built.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from zoo._errors import SpecError
from zoo._spec import InputSpec
from zoo.registry.events import stderr_notice
from zoo.registry.model_files.read_file import ReadFile, input_names, ready


class TfliteFile(ReadFile):
    """The parsed file (torch-free), and the module and random samples, made the first time a
    build asks for them."""

    kind = "a .tflite file"
    axes = "nhwc"  # zoo.read_tflite's module takes and gives TFLite's shapes

    def __init__(self, path: Path, model: Any, inputs: tuple[InputSpec, ...], identity: str,
                 quantized: bool) -> None:
        from zoo._tflite import tflite_reader_identity

        kind = " (an int8 file: its weights read dequantized, quantized again by zoo)" if quantized else ""
        super().__init__(path, inputs, identity, f"TFLite model {path.name}{kind}", __file__, tflite_reader_identity())
        self.quantized = quantized
        self._model = model

    def _build(self) -> Any:
        from zoo._tflite import module_from_model

        if self.quantized:
            stderr_notice(f"{self.path.name} is a quantized TFLite file: zoo reads its weights dequantized and "
                          "quantizes the model again with its own recipe, so the program's int8 outputs are "
                          "zoo's, not the file's (docs/tflite.md)")
        return module_from_model(self._model)


def load_tflite_file(path: Path) -> TfliteFile:
    """Read and check ``path``; neither torch nor the inputs' memory is needed here."""
    ready(TfliteFile.kind)
    from zoo._tflite import inputs_of, is_quantized, load

    where = f"model file {path}"
    data = path.read_bytes()
    model = load(data, where)
    inputs = inputs_of(model)
    for i, t in zip(model.inputs, inputs, strict=True):
        tensor = model.tensors[i]
        if tensor.type != 0 and not t.quantized:
            raise SpecError(f"{where}: input {t.name!r} is {tensor.type_name}; zoo --model-file takes float32 "
                            "inputs, and int8 or uint8 ones with quantization parameters")
    names = input_names([t.name for t in inputs])
    return TfliteFile(
        path=path,
        model=model,
        inputs=tuple(InputSpec(n, t.shape, "float32") for n, t in zip(names, inputs, strict=True)),
        identity=hashlib.sha256(data).hexdigest(),
        quantized=is_quantized(model),
    )
