"""The numerical check, run at build time while the lowered program still exists: the public surface.

Ethos-U (``reference.py``): the lowered edge program runs in torch with each
delegate on the TOSA reference model, compared with the fake-quantized torch
model (ExecuTorch's Ethos-U tests: within ``ATOL + RTOL·|x| + QTOL·scale``) and
with the float model (cosine similarity and relative Frobenius error,
ExecuTorch's defaults), plus top-1 agreement for models that declare ``zoo.top1`` and, on labelled
data, each metric the model declares (``metrics.py``), float against the program.
Portable (``host.py``): the final .pte runs on the host with
``executorch.runtime`` and is compared with the float model. The data each
check runs on is ``data.py`` (a user's labelled folders, ``--eval-dir``, are
``eval_dir.py``); the metrics and acceptance rules ``compare.py``.

Torch-free at import: torch, numpy and the reference model are imported inside functions.
"""

from __future__ import annotations

from zoo.registry.numerics.compare import (
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
    declares_top1,
    evaluation_set,
)
from zoo.registry.numerics.eval_dir import class_folders, evaluation_from_dir
from zoo.registry.numerics.host import check_portable
from zoo.registry.numerics.metrics import (
    NO_LABELS,
    NO_METRICS,
    Judging,
    Labelled,
    load_labelled,
    owner,
)
from zoo.registry.numerics.reference import captured_native_output, check_ethosu

__all__ = [
    "ATOL",
    "BUNDLE_CASES",
    "CHECK_VERSION",
    "COSINE_MIN",
    "FROBENIUS_MAX",
    "MAX_SAMPLES",
    "NO_LABELS",
    "NO_METRICS",
    "PORTABLE_ATOL",
    "PORTABLE_COSINE_MIN",
    "PORTABLE_RTOL",
    "QTOL",
    "RTOL",
    "EvalSet",
    "Judging",
    "Labelled",
    "NumericsResult",
    "captured_native_output",
    "check_ethosu",
    "check_portable",
    "class_folders",
    "data_identity",
    "declares_top1",
    "evaluation_from_dir",
    "evaluation_set",
    "load_labelled",
    "owner",
]
