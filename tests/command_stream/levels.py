"""The NPU-program level a build's check ran, recorded for the tests to rerun or read (it holds the calls, the
program and the TOSA graph)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from tests.conftest import in_shared_cache
from zoo.registry.numerics.npu_program import NpuProgram


@contextmanager
def recording_levels() -> Iterator[list[NpuProgram]]:
    """Every level a check in this process runs meanwhile, in order."""
    from zoo.registry.numerics import reference

    levels: list[NpuProgram] = []

    def recorded(*args: Any, **kwargs: Any) -> NpuProgram:
        levels.append(NpuProgram(*args, **kwargs))
        return levels[-1]

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(reference, "NpuProgram", recorded)
        yield levels


def ops_level(tmp_path_factory: pytest.TempPathFactory, model: str, target: str, precision: str) -> NpuProgram:
    """The level of ``model`` (tests/ops_plugin.py) built with its check in a cache of its own."""
    from zoo import Zoo

    folder = tmp_path_factory.mktemp(model)
    with in_shared_cache(folder / "cache", folder), recording_levels() as levels, \
            pytest.MonkeyPatch.context() as mp:
        mp.setenv("ZOO_PLUGINS", "tests.ops_plugin")
        Zoo().fetch(model, target, precision=precision, verify=True)
    assert len(levels) == 1, "the build was a cache hit: no check ran in this process"
    return levels[0]


def processed_program(level: NpuProgram) -> bytes:
    """The one processed program (the Vela payload's blocks) the level ran."""
    (program,) = {p for _, p, _, _ in level.kept}
    return program
