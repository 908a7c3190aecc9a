"""``--model-file model.tflite``: a TFLite flatbuffer, read by ``zoo._tflite``, as a ModelSpec.

A ``.tflite`` fixes its input shapes, so no sidecar is needed. Without ``--calibration-dir``
the model calibrates on seeded random inputs. An int8 or uint8 file is read with its weights
dequantized and is quantized again by zoo's recipes: a notice says so when it is built.
"""

from __future__ import annotations

import hashlib
import importlib.util
import re
from pathlib import Path
from typing import Any

from zoo._errors import MissingExtraError, SpecError
from zoo._spec import InputSpec
from zoo.registry.events import stderr_notice

RANDOM_SAMPLES = 8


def _reader_digest() -> str:
    """This loader's source and the reader's: a change to either builds TFLite model files again."""
    from zoo._tflite import tflite_reader_identity

    return hashlib.sha256(Path(__file__).read_bytes() + tflite_reader_identity().encode()).hexdigest()


class TfliteFile:
    """What ``model_file`` makes a ModelSpec of: the parsed file (torch-free), and the module and
    random samples, made the first time a build asks for them."""

    def __init__(self, path: Path, model: Any, inputs: tuple[InputSpec, ...], identity: str,
                 quantized: bool) -> None:
        self.path = path
        self.inputs = inputs
        self.identity = identity
        # The weights identity names the file; the version also names the reader that mapped it.
        self.version = hashlib.sha256((identity + _reader_digest()).encode()).hexdigest()[:16]
        self.quantized = quantized
        kind = " (an int8 file: its weights read dequantized, quantized again by zoo)" if quantized else ""
        self.description = f"TFLite model {path.name}{kind}"
        self._model = model
        self._module: Any = None
        self._samples: list[tuple[Any, ...]] | None = None
        self._samples_digest: str | None = None

    def module(self) -> Any:
        if self._module is None:
            _torch()
            from zoo._tflite import module_from_model

            if self.quantized:
                stderr_notice(f"{self.path.name} is a quantized TFLite file: zoo reads its weights dequantized and "
                              "quantizes the model again with its own recipe, so the program's int8 outputs are "
                              "zoo's, not the file's (docs/tflite.md)")
            self._module = module_from_model(self._model)
        return self._module

    def samples(self) -> list[tuple[Any, ...]]:
        """RANDOM_SAMPLES standard-normal input tuples from a generator seeded 0."""
        if self._samples is None:
            torch = _torch()
            generator = torch.Generator().manual_seed(0)
            self._samples = [tuple(torch.randn(i.shape, generator=generator) for i in self.inputs)
                             for _ in range(RANDOM_SAMPLES)]
        return self._samples

    def samples_digest(self) -> str:
        if self._samples_digest is None:
            from zoo.registry.compile import digest_samples

            self._samples_digest = digest_samples(self.samples())
        return self._samples_digest


def _torch() -> Any:
    try:
        import torch
    except ImportError:
        raise MissingExtraError("--model-file with a .tflite file") from None
    return torch


def load_tflite_file(path: Path) -> TfliteFile:
    """Read and check ``path``; neither torch nor the inputs' memory is needed here."""
    from zoo.registry.request import reproducible
    reproducible.pin()
    if importlib.util.find_spec("torch") is None:  # found, not imported: a listing needs no torch
        _torch()
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
    names = [t.name if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", t.name) else f"input_{k}"
             for k, t in enumerate(inputs)]
    return TfliteFile(
        path=path,
        model=model,
        inputs=tuple(InputSpec(n, t.shape, "float32") for n, t in zip(names, inputs, strict=True)),
        identity=hashlib.sha256(data).hexdigest(),
        quantized=is_quantized(model),
    )
