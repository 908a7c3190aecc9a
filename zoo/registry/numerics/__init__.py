"""The numerical check, run at build time while the lowered program still exists: the public surface.

Ethos-U (``reference.py``): the lowered edge program runs in torch with each
delegate on the TOSA reference model, compared with the fake-quantized torch
model (ExecuTorch's Ethos-U tests: within ``ATOL + RTOL·|x| + QTOL·scale``) and
with the float model (cosine similarity and relative Frobenius error,
ExecuTorch's defaults), plus top-1 agreement and, on labelled data, accuracy.
Portable (``host.py``): the final .pte runs on the host with
``executorch.runtime`` and is compared with the float model. The data each
check runs on is ``data.py`` (a user's labelled folders, ``--eval-dir``, are
``eval_dir.py``); the metrics and acceptance rules ``compare.py``.

Torch-free at import: torch, numpy and the reference model are imported inside functions.
"""

from __future__ import annotations

from zoo.registry.numerics.compare import (
    ACCURACY_DROP_MAX_PP,
    ATOL,
    BUNDLE_CASES,
    COSINE_MIN,
    FROBENIUS_MAX,
    PORTABLE_ATOL,
    PORTABLE_COSINE_MIN,
    PORTABLE_RTOL,
    QTOL,
    RTOL,
    NumericsResult,
)
from zoo.registry.numerics.data import (
    CHECK_VERSION,
    MAX_SAMPLES,
    EvalSet,
    data_identity,
    evaluation_set,
    is_classifier,
)
from zoo.registry.numerics.eval_dir import class_folders, evaluation_from_dir
from zoo.registry.numerics.host import check_portable
from zoo.registry.numerics.reference import captured_native_output, check_ethosu

__all__ = [
    "ACCURACY_DROP_MAX_PP",
    "ATOL",
    "BUNDLE_CASES",
    "CHECK_VERSION",
    "COSINE_MIN",
    "FROBENIUS_MAX",
    "MAX_SAMPLES",
    "PORTABLE_ATOL",
    "PORTABLE_COSINE_MIN",
    "PORTABLE_RTOL",
    "QTOL",
    "RTOL",
    "EvalSet",
    "NumericsResult",
    "captured_native_output",
    "check_ethosu",
    "check_portable",
    "class_folders",
    "data_identity",
    "evaluation_from_dir",
    "evaluation_set",
    "is_classifier",
]
