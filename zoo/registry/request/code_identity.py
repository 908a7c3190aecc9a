"""What of a model's code goes into its build key: the source of the modules that
define its ``build`` and ``example_inputs``, and the distribution of its plugin.

So a change to the model's code builds again without anyone remembering to bump
``ModelSpec.version``. Read from the files on disk, never by importing anything:
the modules are already loaded, since the plugin registered the spec.
"""

from __future__ import annotations

import functools
import hashlib
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from zoo._spec import ModelSpec


def code_identity(spec: ModelSpec) -> dict[str, Any]:
    """``{"modules": {module: "sha256:…"}, "distribution": "NAME VERSION" | None}``.
    A module whose source cannot be read (typed into an interpreter) is recorded as
    ``None``: a change there is not seen, as docs/reproducibility.md says."""
    names = sorted({n for n in (_module_of(spec.build), _module_of(spec.example_inputs)) if n})
    return {"modules": {n: _source_digest(n) for n in names}, "distribution": spec.distribution or None}


def _module_of(fn: Callable[..., Any]) -> str | None:
    while isinstance(fn, functools.partial):
        fn = fn.func
    fn = getattr(fn, "__func__", fn)  # a bound method: its function's module
    name = getattr(fn, "__module__", None) or type(fn).__module__
    return name if isinstance(name, str) else None


def _source_digest(module: str) -> str | None:
    path = getattr(sys.modules.get(module), "__file__", None)
    if not path:
        return None
    try:
        stat = Path(path).stat()
    except OSError:
        return None
    return _digest(path, stat.st_mtime_ns, stat.st_size)


@functools.cache
def _digest(path: str, mtime_ns: int, size: int) -> str | None:
    # The stat is part of the cache key, so an edited file is read again.
    try:
        return "sha256:" + hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError:
        return None
