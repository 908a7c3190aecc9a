"""npu_model_sizes.h for the U85 model (issue 58): its buffers sized from the program's own U85 command stream
(zoo/registry/firmware/npu_sizes_u85.py), not fixed at 70 MiB. The walk's sizes are what the host U85 interpreter
reads and writes whole on the same program (tests/firmware/u85_measure.py), a model built with them computes the
program under the sanitizers, and a program whose buffers the board cannot hold is refused when the project is
written."""

from __future__ import annotations

import dataclasses
import re
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from tests.firmware.test_npu_model_host import HERE, NPU_MODEL_SOURCES, SANITIZE, TEMPLATES, c_run
from tests.firmware.test_npu_model_u85 import _chained, _hand_built, u85_build  # noqa: F401 (a fixture)
from tests.firmware.u85_measure import measured
from zoo import Artifact
from zoo.registry.firmware.boards import BOARDS
from zoo.registry.firmware.npu_sizes import (
    FIXED_BYTES,
    NpuModelSizes,
    npu_model_sizes,
    program_sizes,
)
from zoo.registry.firmware.npu_sizes_u85 import U85Sizes, u85_program_sizes
from zoo.registry.pte.vela_payload import VelaPayload, find_payloads


def _walked(program: VelaPayload) -> U85Sizes:
    return dataclasses.replace(u85_program_sizes(program.data["cmd_data"]), operations=0)


@pytest.mark.parametrize("form", list(_hand_built()))
def test_the_walk_gives_what_the_host_interpreter_reads_on_each_hand_built_operation(form: str) -> None:
    """RESIZE (an IFM of its kernel's extent), MATMUL (two operands), the null pool (its IFM2 and scale records),
    a POOL after a broadcast."""
    program, given = _hand_built()[form]
    _, seen = measured(program, [given])
    assert _walked(program) == seen
    assert program_sizes(program.data["cmd_data"]) == NpuModelSizes()  # the U55/U65 walk adds nothing


def test_a_chained_ofm_takes_a_chaining_buffer_and_a_broadcast_operand_its_own_shape() -> None:
    program = _chained()
    _, seen = measured(program, [bytes(range(0, 240, 10)), bytes(range(255, 135, -5))])
    walked = u85_program_sizes(program.data["cmd_data"])
    assert dataclasses.replace(walked, operations=0) == seen and walked.operations == 3
    assert (walked.map_values, walked.chain_values) == (24, 24)  # 2x3x4 maps; the scalar IFM2 reads 1


def test_the_header_defines_both_models_sizes_and_counts_their_bytes() -> None:
    sizes = NpuModelSizes(ifm_values=10, u85=U85Sizes(weight_values=100, map_values=50, chain_values=7, channels=3,
                                                      operations=2))
    header = sizes.header()
    for line in ("NPU_MODEL_IFM_VALUES 10", "NPU_MODEL_U85_WEIGHT_VALUES 100", "NPU_MODEL_U85_MAP_VALUES 50",
                 "NPU_MODEL_U85_CHAIN_VALUES 7", "NPU_MODEL_U85_CHANNELS 3"):
        assert f"#define {line}\n" in header
    assert sizes.u85_bytes == 9 * 100 + 24 * 50 + 32 * 7 + 13 * 3
    assert sizes.buffer_bytes == 4 * 10 + 4 + 4 + 13 + FIXED_BYTES + sizes.u85_bytes
    assert f"{sizes.buffer_bytes:,} bytes" in header and "2 U85 operations" in header


def test_each_boards_bulk_figure_is_its_linker_scripts() -> None:
    """The BULK region the refusal counts against is the one the board's script gives that name, at its length."""
    for board in BOARDS.values():
        script = (TEMPLATES / f"{board.name}.ld").read_text()
        assert re.search(rf'REGION_ALIAS\("BULK", {board.bulk_region}\)', script), board.name
        found = re.search(rf"^\s*{board.bulk_region}\s*\(\w+\)\s*:\s*ORIGIN = \w+, LENGTH = (\w+)", script, re.M)
        assert found is not None, board.name
        length = found.group(1)
        assert board.bulk_bytes == (int(length[:-1]) << 20 if length.endswith("M") else int(length, 0)), board.name


@pytest.mark.slow  # builds the model with the sanitizers: 2 to 4 s
@pytest.mark.skipif(shutil.which("gcc") is None, reason="no host gcc")
def test_a_model_built_with_the_walks_sizes_computes_the_program_and_refuses_a_larger_one(tmp_path: Path) -> None:
    """A MATMUL on a model built with its own npu_model_sizes.h: the host's bytes, no sanitizer error; the chained
    program's chained OFM, which the MATMUL has none of, is refused, saying which buffer."""
    from tests.command_stream.test_u85_ops import matmul_program
    from zoo.registry.command_stream.u85 import run as u85_run

    matmul = matmul_program(np.asarray([[1, 0, 0], [0, 1, 0], [0, 0, 1], [2, -1, 3]], dtype=np.int8))
    sizes = u85_program_sizes(matmul.data["cmd_data"])
    assert (sizes.map_values, sizes.chain_values) == (12, 1)  # its IFM2 of 4x3
    (tmp_path / "npu_model_sizes.h").write_text(NpuModelSizes(u85=sizes).header())
    model = tmp_path / "npu_model_host"
    build = subprocess.run(["gcc", "-std=c11", "-O1", "-g", "-Wall", "-Wextra", "-Werror", *SANITIZE, f"-I{TEMPLATES}",
                            f"-I{tmp_path}", *(str(TEMPLATES / f) for f in NPU_MODEL_SOURCES),
                            str(HERE / "npu_model_host.c"), "-o", str(model)], capture_output=True, text=True)
    assert build.returncode == 0, build.stderr
    a = np.asarray([[1, 2, 3], [-4, 5, -6]], dtype=np.int8).tobytes()
    assert c_run(model, matmul, [a], tmp_path) == ("computed 2", u85_run(matmul, [a]))  # its DMA and MATMUL
    verdict, _ = c_run(model, _chained(), [bytes(range(0, 240, 10)), bytes(range(255, 135, -5))], tmp_path)
    assert re.fullmatch(r"not_implemented 0 ELEMENTWISE at byte 0x[0-9a-f]+: a chained OFM of 2x3x4, more than the "
                        r"model's buffer \(NPU_MODEL_U85_CHAIN_VALUES 1\)", verdict), verdict


def _render(art: Artifact, board_bytes: int, tmp_path: Path, board: str = "corstone-300") -> dict[str, bytes]:
    from zoo.registry.firmware.project import Samples, render_project

    macros = art.manifest.header["macros"]
    files = {p.name: p.read_bytes() for p in (art.pte, art.header)}
    inputs = [[[0.0] * int(macros[f"input{i}_elements"]) for i in range(int(macros["inputs"]))]]
    return render_project(stem=art.header.name[:-2], macros=macros, array="model_pte", model_files=files,
                          samples=Samples(inputs, [None]), board=dataclasses.replace(BOARDS[board], bulk_bytes=board_bytes),
                          runtime_cache=tmp_path)


@pytest.mark.compile
@pytest.mark.parametrize("name", ["mnist", "mv2"])
def test_a_u85_builds_sizes_are_what_the_host_interpreter_reads_and_the_board_must_hold_them(
        u85_build: Callable[[str], Artifact], tmp_path: Path, name: str) -> None:  # noqa: F811 (the fixture)
    """mnist and mv2 (random weights) on u85-256: the header's sizes are the host interpreter's on one sample (mv2:
    its fully connected layer's 1,280,000 weights, its first depthwise IFM of 112x112x96, a chained 28x28x96); the
    U85 program in QEMU's Cortex-M55 (the stand-in only) is refused where BULK is one byte short of what the
    project puts there, with each figure; corstone-320, whose real NPU needs none of it, is written with the
    refusal for a build with the stand-in."""
    art = u85_build(name)
    pte = art.pte.read_bytes()
    (program,) = find_payloads(pte)
    rng = np.random.default_rng(58)
    given = [rng.integers(0, 256, size=i.elements * i.element_size, dtype=np.uint8).tobytes() for i in program.inputs]
    _, seen = measured(program, given)
    sizes = npu_model_sizes(pte)
    assert dataclasses.replace(sizes.u85, operations=0) == seen
    assert sizes.u85.operations == {"mnist": 6, "mv2": 65}[name]
    if name == "mv2":
        assert seen == U85Sizes(1_280_000, 112 * 112 * 96, 28 * 28 * 96, 1280)
    project = _render(art, 256 << 20, tmp_path)
    assert project["npu_model_sizes.h"] == sizes.header().encode()
    macros = art.manifest.header["macros"]
    needed = sizes.buffer_bytes + macros["method_allocator_bytes"] + macros["planned_bytes"] + macros["input0_bytes"]
    assert _render(art, needed, tmp_path)["npu_model_sizes.h"] == project["npu_model_sizes.h"]
    with pytest.raises(ValueError, match=rf"does not fit corstone-300 with npu_standin: the stand-in's model of the "
                                         rf"NPU takes {sizes.buffer_bytes:,} bytes .*\(U85: {sizes.u85.map_values:,} map "
                                         rf"values, {sizes.u85.weight_values:,} weights.* holds {needed - 1:,}\. Write the "
                                         r"project for corstone-320"):
        _render(art, needed - 1, tmp_path)
    cmake = _render(art, needed - 1, tmp_path, "corstone-320")["CMakeLists.txt"].decode()
    assert re.search(r'if\(ZOO_NPU_STANDIN AND NOT "[^"]*does not fit corstone-320 with npu_standin', cmake)
    assert 'if(ZOO_NPU_STANDIN AND NOT "" STREQUAL "")' in project["CMakeLists.txt"].decode()
