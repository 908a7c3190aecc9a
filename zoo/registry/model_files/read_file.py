"""What an ``.onnx`` and a ``.tflite`` ``--model-file`` share: a file that one of zoo's readers
read, made a torch module and seeded random samples only when a build asks for them. A listing
thus needs neither torch nor the samples' memory (on a model with a 1 GiB input, each is a
gigabyte or more).
"""

from __future__ import annotations

import hashlib
import importlib.util
import re
from pathlib import Path
from typing import Any

from zoo._errors import MissingExtraError
from zoo._spec import InputSpec

__all__ = ["RANDOM_SAMPLES", "ReadFile", "input_names", "ready", "torch_for"]

RANDOM_SAMPLES = 8


def torch_for(kind: str) -> Any:
    """torch, or a MissingExtraError for ``--model-file with {kind}``."""
    try:
        import torch
    except ImportError:
        raise MissingExtraError(f"--model-file with {kind}") from None
    return torch


def ready(kind: str) -> None:
    """Before a file is read: the build's numerics pinned, and torch there (found, not imported:
    a listing needs no torch)."""
    from zoo.registry.request import reproducible
    reproducible.pin()
    if importlib.util.find_spec("torch") is None:
        torch_for(kind)


def input_names(names: list[str]) -> list[str]:
    """The inputs' names in the spec: the file's own where they are identifiers, else ``input_<k>``."""
    return [n if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", n) else f"input_{k}" for k, n in enumerate(names)]


class ReadFile:
    """What ``model_file`` makes a ModelSpec of. A subclass builds the module (``_build``) and
    names its file's kind for MissingExtraError (``kind``)."""

    kind = "a model file"
    axes = "nchw"
    """The axes of the module's 4-D inputs and outputs (``ModelSpec.axes``)."""

    def __init__(self, path: Path, inputs: tuple[InputSpec, ...], identity: str, description: str,
                 loader: str, reader_identity: str) -> None:
        self.path = path
        self.inputs = inputs
        self.identity = identity
        # The weights identity names the file; the version also names the code that mapped it:
        # this module, the loader's (``loader``, its path) and the reader's.
        code = Path(__file__).read_bytes() + Path(loader).read_bytes() + reader_identity.encode()
        self.version = hashlib.sha256((identity + hashlib.sha256(code).hexdigest()).encode()).hexdigest()[:16]
        self.description = description
        self._module: Any = None
        self._samples: list[tuple[Any, ...]] | None = None
        self._samples_digest: str | None = None

    def _build(self) -> Any:
        raise NotImplementedError

    def module(self) -> Any:
        if self._module is None:
            torch_for(self.kind)
            self._module = self._build()
        return self._module

    def samples(self) -> list[tuple[Any, ...]]:
        """RANDOM_SAMPLES standard-normal input tuples from a generator seeded 0."""
        if self._samples is None:
            torch = torch_for(self.kind)
            generator = torch.Generator().manual_seed(0)
            self._samples = [tuple(torch.randn(i.shape, generator=generator).to(getattr(torch, i.dtype))
                                   for i in self.inputs)
                             for _ in range(RANDOM_SAMPLES)]
        return self._samples

    def samples_digest(self) -> str:
        if self._samples_digest is None:
            from zoo.registry.compile import digest_samples

            self._samples_digest = digest_samples(self.samples())
        return self._samples_digest
