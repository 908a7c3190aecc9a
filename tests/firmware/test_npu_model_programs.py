"""npu_model.c, the stand-in's C model of the NPU, on the session's real U55/U65 programs (tests/conftest.py's
builds), built with the host's gcc under ``-fsanitize=address,undefined`` as tests/firmware/test_npu_model_host.py
builds it, its buffers sized from the programs as a firmware project sizes them (zoo/registry/firmware/npu_sizes.py):

- every program computes, bit for bit the host interpreter's outputs on the same input bytes: softmax's
  ELEMENTWISE with scalars, broadcasts and 32-bit MULs, its LUTs, mv2's residual ADDs, mnist's convolutions and pools,
  on the U55 and the U65;
- fuzzed against the host interpreter (issue 58): 200 deterministic mutations of softmax's and mnist's programs
  (each register a command writes set to a neighbouring, extreme or bit-flipped value; random bit flips of command
  words; flipped weight bytes). Each gives the same outputs on both sides, or a refusal on both sides, or a refusal
  of the C model alone at one of its own documented bounds (its buffers, its work bound); never a sanitizer error.
"""

from __future__ import annotations

import dataclasses
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from tests.firmware.test_npu_model_host import HERE, NPU_MODEL_SOURCES, SANITIZE, TEMPLATES, c_run
from zoo import Artifact
from zoo.registry.command_stream import NotInterpreted, StreamError, parse, run
from zoo.registry.firmware.npu_sizes import NpuModelSizes, npu_model_sizes
from zoo.registry.pte.vela_payload import VelaPayload, find_payloads

pytestmark = [pytest.mark.compile, pytest.mark.skipif(shutil.which("gcc") is None, reason="no host gcc")]

PROGRAMS = [("softmax", "u55-128"), ("add", "u55-128"), ("mnist", "u55-128"), ("mv2", "u55-128"), ("add", "imx93")]
"""imx93: the U65-256 of NXP's i.MX93."""
C_ONLY = re.compile(r"not_implemented \d+ .*(more than the model's buffer|more work than the model's bound|its writes "
                    r"would overlap|a window wholly in the padding)")
"""The C model's own bounds (docs/firmware-run.md): where it stops and the host interpreter computes."""
MUTATIONS = 200


@pytest.fixture(scope="module")
def payloads(built: dict[tuple[str, str], Artifact]) -> dict[tuple[str, str], VelaPayload]:
    return {key: find_payloads(built[key].pte.read_bytes())[0] for key in PROGRAMS}


@pytest.fixture(scope="module")
def model(built: dict[tuple[str, str], Artifact], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The harness with the buffers the session's programs need together, from the header zoo writes for each."""
    sizes = NpuModelSizes()
    for key in PROGRAMS:
        sizes = sizes.larger(npu_model_sizes(built[key].pte.read_bytes()))
    folder = tmp_path_factory.mktemp("npu_model_programs")
    (folder / "npu_model_sizes.h").write_text(sizes.header())
    out = folder / "npu_model_host"
    build = subprocess.run(["gcc", "-std=c11", "-O1", "-g", "-Wall", "-Wextra", "-Werror", *SANITIZE, f"-I{TEMPLATES}",
                            f"-I{folder}", *(str(TEMPLATES / f) for f in NPU_MODEL_SOURCES),
                            str(HERE / "npu_model_host.c"), "-o", str(out)], capture_output=True, text=True)
    assert build.returncode == 0, build.stderr
    return out


def _inputs(program: VelaPayload, seed: int) -> list[bytes]:
    rng = np.random.default_rng(seed)
    return [rng.integers(0, 256, size=i.elements * i.element_size, dtype=np.uint8).tobytes() for i in program.inputs]


def _operations(program: VelaPayload) -> set[str]:
    """What the program runs: each operation's name, ELEMENTWISE with its mode, and LUT where it applies one."""
    ops, activation = set(), 0
    for c in parse(program.data["cmd_data"]).commands:
        if c.name == "NPU_SET_ACTIVATION":
            activation = c.param & 0x1F
        elif c.name.startswith("NPU_OP_") and c.name not in ("NPU_OP_DMA_WAIT", "NPU_OP_KERNEL_WAIT", "NPU_OP_STOP"):
            ops.add(c.name.removeprefix("NPU_OP_") + (f" {c.param}" if c.name == "NPU_OP_ELEMENTWISE" else ""))
            if activation >= 16 and c.name != "NPU_OP_DMA_START":
                ops.add("LUT")
    return ops


def test_the_session_programs_compute_as_on_the_host_interpreter(payloads: dict[tuple[str, str], VelaPayload],
                                                                  model: Path, tmp_path: Path) -> None:
    """Before issue 58 the C model stopped at add's and mv2's first ADD and softmax's first ELEMENTWISE, and mv2's
    3x224x224 input did not fit its fixed buffer."""
    seen: set[str] = set()
    for key, program in payloads.items():
        given = _inputs(program, 58)
        verdict, got = c_run(model, program, given, tmp_path)
        assert verdict.startswith("computed "), (key, verdict)
        assert got == run(program, given), f"{key}: the C model's outputs differ from the host interpreter's"
        seen |= _operations(program)
    assert {"ELEMENTWISE 0", "ELEMENTWISE 1", "ELEMENTWISE 2", "LUT", "CONV", "DEPTHWISE", "POOL"} <= seen, seen


def _mutations(program: VelaPayload, rng: np.random.Generator, count: int) -> list[tuple[str, VelaPayload]]:
    """``count`` mutated copies: three in four change one register write, the rest flip a command word's bit or
    a weight byte."""
    cmd = program.data["cmd_data"]
    header = len(cmd) - 4 * len(parse(cmd).commands) - 4 * sum(c.payload is not None for c in parse(cmd).commands)
    writes = [c for c in parse(cmd).commands if c.name.startswith("NPU_SET_")]
    out = []
    for i in range(count):
        data = bytearray(cmd)
        weights = bytearray(program.data.get("weight_data", b""))
        kind = "register" if i % 4 else ("bit" if i % 8 or not weights else "weight")
        if kind == "register":
            c = writes[int(rng.integers(len(writes)))]
            at = header + c.offset
            if c.payload is None:
                old = c.param
                new = int(rng.choice([0, 1, old + 1, old - 1, old ^ 0x8000, 0xFFFF, old ^ (1 << int(rng.integers(16)))]))
                data[at + 2:at + 4] = (new & 0xFFFF).to_bytes(2, "little")
            else:
                old = c.payload
                new = int(rng.choice([0, old + 1, old - 1, old + 16, 0xFFFFFFFF, old ^ (1 << int(rng.integers(32)))]))
                data[at + 4:at + 8] = (new & 0xFFFFFFFF).to_bytes(4, "little")
            what = f"{c.name} at byte {c.offset:#x}: {old:#x} -> {new & 0xFFFFFFFF:#x}"
        elif kind == "bit":
            at = header + 4 * int(rng.integers((len(cmd) - header) // 4))
            bit = int(rng.integers(32))
            data[at + bit // 8] ^= 1 << (bit % 8)
            what = f"bit {bit} of the word at byte {at - header:#x}"
        else:
            at = int(rng.integers(len(weights)))
            weights[at] ^= 1 << int(rng.integers(8))
            what = f"weight byte {at}"
        out.append((what, dataclasses.replace(program, data={**program.data, "cmd_data": bytes(data),
                                                             "weight_data": bytes(weights)})))
    return out


def test_mutated_programs_give_the_host_interpreters_outputs_or_a_refusal_on_both_sides(
        payloads: dict[tuple[str, str], VelaPayload], model: Path, tmp_path: Path) -> None:
    rng = np.random.default_rng(58)
    outcomes: dict[str, int] = {}
    for key in (("softmax", "u55-128"), ("mnist", "u55-128")):
        program = payloads[key]
        given = _inputs(program, 1)
        clean = run(program, given)
        for what, mutated in _mutations(program, rng, MUTATIONS // 2):
            try:
                want: list[bytes] | None = run(mutated, given)
            except (StreamError, NotInterpreted) as e:
                want, refusal = None, str(e)
            verdict, got = c_run(model, mutated, given, tmp_path, timeout=120)
            if want is None:
                assert not verdict.startswith("computed"), (key, what, refusal, verdict)
                outcome = "refused on both sides"
            elif verdict.startswith("computed"):
                assert got == want, (key, what, verdict)
                outcome = "equal outputs" + (", changed" if want != clean else ", unchanged")
            else:
                assert C_ONLY.match(verdict), (key, what, verdict)
                outcome = "the C model's bound"
            outcomes[outcome] = outcomes.get(outcome, 0) + 1
    assert sum(outcomes.values()) == MUTATIONS
    # The mutations reach every outcome that matters: refusals, and outputs both sides compute differently.
    assert outcomes.get("refused on both sides", 0) >= 20 and outcomes.get("equal outputs, changed", 0) >= 10, outcomes
