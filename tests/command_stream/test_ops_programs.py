"""tests/ops_plugin.py's ops-mix on u55-128, one build: Regor's ELEMENTWISE MAX, MIN and ABS, a padded
AVERAGE pool (count_include_pad=False), a 2x nearest-neighbour upscale, a dilated convolution, a transposed
one (IFM_UPSCALE ZEROS) and convolutions into 32-bit OFMs in one program. Its NPU-program level must be
bit-exact with the TOSA reference model, and a changed register of each of those operations must show."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.command_stream.bundles import Bundled, bundled, changed
from tests.conftest import in_shared_cache
from zoo import Artifact
from zoo.registry.command_stream import StreamError, program_of, run
from zoo.registry.command_stream.stream import Command
from zoo.registry.pte.vela_payload import VelaPayload

pytestmark = pytest.mark.compile

MIN, MAX, ABS = 3, 4, 6
AVERAGE = 1
PADS = tuple(f"NPU_SET_IFM_PAD_{side}" for side in ("TOP", "LEFT", "BOTTOM", "RIGHT"))


@pytest.fixture(scope="module")
def mix(shared_cache: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Artifact, Bundled]:
    """The one build (about 20 s once torch is loaded): int8 I/O, so the bundle's bytes are the delegate's."""
    from zoo import Zoo

    with in_shared_cache(shared_cache, tmp_path_factory.mktemp("ops-mix-build")), pytest.MonkeyPatch.context() as mp:
        mp.setenv("ZOO_PLUGINS", "tests.ops_plugin")
        art: Artifact = Zoo().fetch("ops-mix", "u55-128", verify=True, io="int8", bundle=True)
    return art, bundled(art, (3 * 16 * 16, 8 * 32 * 32))


def test_the_npu_program_level_is_bit_exact_on_8_samples(mix: tuple[Artifact, Bundled]) -> None:
    art, bundle = mix
    record: dict[str, Any] = (art.manifest.verification or {})["numerics"]["npu_program"]
    assert (record["outcome"], record["samples"], record["delegate_calls"]) == ("passed", 8, 8), record
    for i, (given, expected) in enumerate(bundle.cases):
        (got,) = run(bundle.payload, [given])
        assert got == expected, f"case {i}: the interpreter differs from the TOSA reference model"


def _ops(payload: VelaPayload) -> list[tuple[Command, dict[str, Command]]]:
    """Each operation with the last write of every register before it."""
    regs: dict[str, Command] = {}
    out = []
    for c in program_of(payload).commands:
        if c.name.startswith("NPU_SET_"):
            regs[c.name] = c
        else:
            out.append((c, dict(regs)))
    return out


def _elementwise(mode: int) -> Callable[[Command, dict[str, Command]], bool]:
    return lambda op, regs: op.name == "NPU_OP_ELEMENTWISE" and op.param == mode


def _padded_average(op: Command, regs: dict[str, Command]) -> bool:
    return op.name == "NPU_OP_POOL" and op.param == AVERAGE and any(regs[p].param for p in PADS)


def _upscaled(mode: int) -> Callable[[Command, dict[str, Command]], bool]:
    return lambda op, regs: op.name in ("NPU_OP_POOL", "NPU_OP_CONV") and regs["NPU_SET_IFM_UPSCALE"].param == mode


def _dilated(op: Command, regs: dict[str, Command]) -> bool:
    return op.name == "NPU_OP_CONV" and bool(regs["NPU_SET_KERNEL_STRIDE"].param & 0x18)


def _wide_conv(op: Command, regs: dict[str, Command]) -> bool:
    return op.name == "NPU_OP_CONV" and (regs["NPU_SET_OFM_PRECISION"].param >> 1) & 3 == 2


# (the operation, the command to change: the op itself or a register it reads, the new 16-bit parameter from the old)
CHANGES: dict[str, tuple[Callable[[Command, dict[str, Command]], bool], str | None, Callable[[int], int]]] = {
    "MAX as MIN": (_elementwise(MAX), None, lambda p: MIN),
    "MIN as MAX": (_elementwise(MIN), None, lambda p: MAX),
    "ABS's OFM_SCALE shift one less": (_elementwise(ABS), "NPU_SET_OFM_SCALE", lambda p: p - 1),
    "the padded AVERAGE's IFM zero point one more": (_padded_average, "NPU_SET_IFM_ZERO_POINT", lambda p: (p + 1) & 0xFFFF),
    "NEAREST upscale off": (_upscaled(1), "NPU_SET_IFM_UPSCALE", lambda p: 0),
    "ZEROS upscale off": (_upscaled(2), "NPU_SET_IFM_UPSCALE", lambda p: 0),
    "dilation off": (_dilated, "NPU_SET_KERNEL_STRIDE", lambda p: p & ~0x18),
    "32-bit OFM as 8-bit": (_wide_conv, "NPU_SET_OFM_PRECISION", lambda p: p & ~0x6),
}


@pytest.mark.parametrize("name", list(CHANGES))
def test_a_changed_register_fails_the_comparison(mix: tuple[Artifact, Bundled], name: str) -> None:
    """Each case runs the changed program: a differing output or a program that no longer runs fails."""
    _, bundle = mix
    which, register, change = CHANGES[name]
    op, regs = next((op, regs) for op, regs in _ops(bundle.payload) if which(op, regs))
    target = op if register is None else regs[register]
    program = program_of(bundle.payload)
    header = len(bundle.payload.data["cmd_data"]) - (program.commands[-1].offset + 4)
    new = change(target.param)
    assert new != target.param

    def edit(data: bytearray) -> None:
        data[header + target.offset + 2:header + target.offset + 4] = new.to_bytes(2, "little")

    mutated = changed(bundle.payload, "cmd_data", edit)
    failed = 0
    for given, expected in bundle.cases:
        try:
            failed += run(mutated, [given])[0] != expected
        except StreamError:
            failed += 1
    assert failed == len(bundle.cases), f"{name}: {failed} of {len(bundle.cases)} cases fail"
