"""What of a model's code goes into its build key: the source of the modules that
define its ``build`` and ``example_inputs`` and of ``ModelSpec.code``'s functions, the
modules of their own package that these functions reach, and the distribution of its plugin.

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
from types import CodeType, ModuleType
from typing import Any

from zoo._spec import ModelSpec


def code_identity(spec: ModelSpec) -> dict[str, Any]:
    """``{"modules": {module: "sha256:…"}, "distribution": "NAME VERSION" | None}``.
    A module whose source cannot be read (typed into an interpreter) is recorded as
    ``None``: a change there is not seen, as docs/reproducibility.md says."""
    names = set[str]()
    followed: list[Callable[..., Any]] = [spec.build, spec.example_inputs, *spec.code]
    for fn in followed:
        names |= _reached(fn)
    return {"modules": {n: _source_digest(n) for n in sorted(names)}, "distribution": spec.distribution or None}


def _reached(fn: Callable[..., Any]) -> set[str]:
    """``fn``'s module and the modules of its package (``zoo_sensors`` for ``zoo_sensors.har``)
    that it names: the functions named are followed, through a module's attributes too
    (``net.conv1d_classifier_class``), so a network whose layers live in a sibling module is
    covered by that module's source."""
    root = _module_of(fn)
    if root is None:
        return set()
    if root == "zoo" or (root.startswith("zoo.") and not root.startswith("zoo.plugins.")):
        return {root}  # zoo's own machinery (a ShippedClassifier's methods): its module is in the key, zoo's pipeline version the rest
    package = root.rpartition(".")[0] or root
    found, seen, todo = {root}, set[int](), [fn]
    while todo:
        f = _unwrap(todo.pop())
        code, scope = getattr(f, "__code__", None), getattr(f, "__globals__", None)
        if id(f) in seen or not isinstance(code, CodeType) or not isinstance(scope, dict):
            continue
        seen.add(id(f))
        names = _names(code)
        for value in [scope[n] for n in names if n in scope]:
            module = value.__name__ if isinstance(value, ModuleType) else _module_of(value)
            if module is None or (module != package and not module.startswith(package + ".")):
                continue
            found.add(module)
            if isinstance(value, ModuleType):
                todo += [a for n in names if callable(a := vars(value).get(n))]
            elif callable(value):
                todo.append(value)
    return found


def _names(code: CodeType) -> set[str]:
    """The global and attribute names ``code`` uses, with those of the functions defined in it."""
    return set(code.co_names).union(*(_names(c) for c in code.co_consts if isinstance(c, CodeType)))


def _unwrap(fn: Any) -> Any:
    while True:
        inner = fn.func if isinstance(fn, functools.partial) else getattr(fn, "__func__", None)
        inner = inner or getattr(fn, "__wrapped__", None)  # functools.cache's wrapper
        if inner is None:
            return fn
        fn = inner


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
