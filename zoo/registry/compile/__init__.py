"""Compile one model for one or several targets into canonical ``.pte`` bytes.

``targets.py`` drives a build: ``export.py`` exports and quantizes,
``lower.py`` lowers for Ethos-U (``portable.py`` for the host CPU),
``retarget.py`` reruns Vela for another target of the same TOSA
specification, ``serialize.py`` gives the canonical bytes, ``delegation.py``
the CPU/NPU split and ``blame.py`` says where a failure happened.

Importing the package does not import torch or ExecuTorch.
"""

from __future__ import annotations

from zoo.registry.compile.export import digest_samples
from zoo.registry.compile.pipeline import STAGES, compile_model, compile_targets
from zoo.registry.compile.result import CompileResult
from zoo.registry.compile.serialize import canonical, operator_table, serialize

__all__ = [
    "STAGES",
    "CompileResult",
    "canonical",
    "compile_model",
    "compile_targets",
    "digest_samples",
    "operator_table",
    "serialize",
]
