"""A compile step that lowers nothing: it hands out real compile results of
the built-in ``add`` (u55-128 and portable), made once by
``scripts/make_fake_compile_data.py``. The fast test tier builds through the
real resolver, executor, assembly, checks and cache with it, in milliseconds.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from zoo import BuildError

DATA = Path(__file__).parent / "data" / "fake_compile"
TARGETS = {"ethos-u55-128": "u55-128", None: "portable"}


@dataclass
class FakeCompile:
    """Stands in for ``zoo.registry.compile.compile_targets``; records each call."""

    calls: list[tuple[str, list[str]]] = field(default_factory=list)
    fail: BuildError | None = None
    """Raise this instead of compiling."""
    fail_on: dict[str, BuildError] = field(default_factory=dict)
    """Raise this when the unit has a target of this name (e.g. ``portable``)."""
    stand_ins: tuple[str, ...] = ("add",)
    """Models built as ``add`` is: a test's own plugin that declares add's inputs."""
    on_call: Any = None
    """Called with no arguments at each compile, where a plugin's ``build`` would run."""

    def __call__(self, spec: Any, targets: Sequence[Any], *, weights: str | None = None, calibration: Any = None,
                 progress: Any = None, verify: Sequence[bool] | None = None, evaluation: Any = None,
                 boundary: Any = None, precision: Any = None) -> list[Any]:
        from zoo.registry.compile import CompileResult
        from zoo.registry.compile.blame import _stage
        from zoo.registry.pte.pte_structure import read_pte
        from zoo.registry.request import io_boundary

        self.calls.append((spec.name, [t.name for t in targets]))
        if self.on_call is not None:
            self.on_call()
        if self.fail is not None:
            raise self.fail
        for t in targets:
            if t.name in self.fail_on:
                raise self.fail_on[t.name]
        out = []
        for t in targets:
            stored = TARGETS.get(t.accelerator)
            if boundary is not None and boundary.integer:
                raise BuildError(f"the fake compile only has float I/O, not --io {boundary.mode}")
            if precision is not None and precision.name != "int8":
                raise BuildError(f"the fake compile only has int8 programs, not --precision {precision.name}")
            if spec.name not in self.stand_ins or stored is None or (t.accelerator and (t.memory_mode, t.sram_budget) != ("Shared_Sram", None)):
                raise BuildError(f"the fake compile only has add for u55-128 and portable, not {spec.name} for {t.name}")
            fields = json.loads((DATA / f"add_{stored}.json").read_text())
            pte = (DATA / f"add_{stored}.pte").read_bytes()
            # The boundary as the real compile records it, read from the stored program, at its stage.
            with _stage(f"{spec.name} → {t.name}", "serialize"):
                io = io_boundary.record(io_boundary.DEFAULT, read_pte(pte), spec)
            out.append(CompileResult(pte=pte, tosa_graphs=[], io=io, **fields))
        return out
