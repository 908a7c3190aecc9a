"""The float numerics every build runs in, so its bytes do not depend on the host CPU.

PyTorch picks its CPU kernels by the host's instruction set: ATen's vectorized
kernels by ``ATEN_CPU_CAPABILITY`` (AVX-512, AVX2 or the baseline), oneDNN and
MKL by their own dispatch. They add up floats in different orders, so the
calibration ranges, re-estimated BatchNorm statistics and trained weights, and
with them the int8 bytes, followed the CPU: mv2 built other bytes under
``ATEN_CPU_CAPABILITY=default`` than under ``avx2`` on one host.

A build therefore runs with the kernels that have no runtime dispatch:

- ATen's baseline (``default``) kernels;
- oneDNN (mkldnn) and NNPACK switched off, so convolutions take ATen's own path;
- MKL in conditional numerical reproducibility mode ``COMPATIBLE`` (its SSE2
  code paths). That makes its matrix products the same on Intel and AMD, but not
  all of its vector maths: its float32 sqrt, log2, log10, atan, asin, acos and tan
  start from the ``RSQRTPS``/``RCPPS`` instructions, whose bits each CPU maker
  defines differently. Training's Adam takes a square root, so ``scripts/train_mnist.py``
  computes Intel's kernel itself; a model whose float forward pass calls one of these
  may still depend on the CPU maker;
- one thread (reductions sum in one order).

ATen and MKL read their settings once, at their first use in a process, so
:func:`pin` must run before torch computes anything; :func:`established` says
whether it did. This module never imports torch itself.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from zoo._errors import BuildError

MODE: dict[str, Any] = {
    "aten_cpu_capability": "default",
    "mkldnn": False,
    "nnpack": False,
    "mkl_cbwr": "COMPATIBLE",
    "threads": 1,
}
"""What the build key and the manifest record as the numerics mode."""

_ENVIRONMENT = {"ATEN_CPU_CAPABILITY": "default", "MKL_CBWR": "COMPATIBLE"}
_MKL_CBWR_BRANCH = 1  # mkl_cbwr.h: ask for the code branch
_MKL_CBWR_COMPATIBLE = 3


def pin() -> None:
    """Ask for the reproducible kernels. Takes effect only if torch has not computed
    anything in this process yet; a value the caller set is overridden on purpose."""
    os.environ.update(_ENVIRONMENT)


def established() -> str | None:
    """``None`` if this process computes in the reproducible mode (pinning it now if
    torch has not run yet), else what stands in the way."""
    pin()
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    capability = str(torch.backends.cpu.get_cpu_capability())
    if capability != "DEFAULT":
        return f"torch already runs its {capability} kernels in this process"
    branch = _mkl_branch(torch)
    if branch is not None and branch != _MKL_CBWR_COMPATIBLE:
        return f"MKL already runs in its code branch {branch}, not COMPATIBLE ({_MKL_CBWR_COMPATIBLE})"
    return None


@contextlib.contextmanager
def numerics(torch: Any, where: str) -> Iterator[None]:
    """The reproducible mode for a build; raises BuildError if this process cannot have it."""
    problem = established()
    if problem is not None:
        raise BuildError(
            f"{where}: {problem}, so the build would depend on this CPU. Build in a fresh process "
            "(the zoo CLI, --jobs 2, or executor='processes'), or set ATEN_CPU_CAPABILITY=default and "
            "MKL_CBWR=COMPATIBLE before importing torch"
        )
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        # allow_tf32=None leaves TF32 (Intel GPUs only) alone; flags() would set it, and torch warns.
        with torch.backends.mkldnn.flags(enabled=False, allow_tf32=None), torch.backends.nnpack.flags(enabled=False):
            yield
    finally:
        torch.set_num_threads(before)


def _mkl_branch(torch: Any) -> int | None:
    """MKL's code branch, read from the MKL that torch links statically; None without MKL."""
    import ctypes

    library = Path(torch.__file__).parent / "lib" / "libtorch_cpu.so"
    try:
        get = ctypes.CDLL(str(library)).mkl_serv_cbwr_get
    except (OSError, AttributeError):
        return None
    get.restype, get.argtypes = ctypes.c_int, [ctypes.c_int]
    return int(get(_MKL_CBWR_BRANCH))
