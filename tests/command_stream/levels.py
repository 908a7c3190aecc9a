"""The NPU-program level a build's check ran, recorded for the tests to rerun or read (it holds the calls, the
program and the TOSA graph)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from tests.conftest import in_shared_cache
from zoo.registry.command_stream.u85 import commands
from zoo.registry.numerics.npu_program import NpuProgram
from zoo.registry.pte.vela_payload import find_payloads


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


def program_ops(processed: bytes) -> list[tuple[str, int, dict[str, int]]]:
    """Each operation of the program: its name (``CONV at byte 0x288``), parameter and the registers it runs with."""
    (payload,) = find_payloads(processed)
    regs: dict[str, int] = {}
    out = []
    for c in commands(payload.data["cmd_data"])[1]:
        if c.name.startswith("NPU_SET_"):
            regs[c.name[8:]] = c.payload if c.payload is not None else c.param
        elif c.name.startswith("NPU_OP_") and c.name not in ("NPU_OP_STOP", "NPU_OP_DMA_WAIT", "NPU_OP_KERNEL_WAIT"):
            out.append((f"{c.name.removeprefix('NPU_OP_')} at byte {c.offset:#x}", c.param, dict(regs)))
    return out


def in_flash(level: NpuProgram, region: int, base: int) -> int:
    """The offset in the processed bytes of ``base`` in region 0 (the payload's weight data, in flash)."""
    assert region & 7 == 0
    processed = processed_program(level)
    (payload,) = find_payloads(processed)
    return processed.index(payload.data["weight_data"]) + base


def changed_bit(level: NpuProgram, at: range) -> NpuProgram:
    """The level on the program with one bit of the first byte in ``at`` changed whose program still runs."""
    processed = processed_program(level)
    for k in at:
        mutated = processed[:k] + bytes([processed[k] ^ 1]) + processed[k + 1:]
        again = level.rerun({processed: mutated}, {})
        if again.error is None:
            return again
    raise AssertionError(f"no changed byte in {at} left a program that runs")
