"""``benchmarks/u85_streams.py`` as a module, for the tests (benchmarks/ is not a package)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("u85_streams", ROOT / "benchmarks" / "u85_streams.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["u85_streams"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


u85 = _load()
