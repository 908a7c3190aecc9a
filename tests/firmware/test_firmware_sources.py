"""An artifact's C sources and memory plan through the real assembly, cache and checks
(fake compile): the .s is checked wherever the header is, the memory figures are the
.pte's, and ``--header-style single`` hands out one header."""

from __future__ import annotations

import dataclasses
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.fake_compile import FakeCompile
from tests.firmware.test_c_header import array_bytes
from zoo import Artifact, Zoo
from zoo.registry.pte.pte_structure import read_pte
from zoo.registry.verify.header_check import check_stored_asm
from zoo.registry.verify.structure_check import Expected, check_structure


@pytest.fixture
def add_entry(fake_compile: FakeCompile) -> Artifact:
    return Zoo().fetch("add", "u55-128")


def test_split_artifact_has_a_small_s_and_the_memory_plan(add_entry: Artifact) -> None:
    m = add_entry.manifest
    pte = add_entry.pte.read_bytes()
    assert add_entry.model_asm is not None and m.header["style"] == "split"
    assert array_bytes(add_entry.header) == pte
    assert add_entry.model_asm.stat().st_size < 1024 and add_entry.header.stat().st_size < 8192
    plan = read_pte(pte).plans[0].non_const_buffer_sizes
    assert m.memory is not None and m.memory["planned_buffers"] == list(plan[1:]) and m.memory["flash_bytes"] == len(pte)
    header = add_entry.header.read_text()
    assert f"#define MODEL_PTE_PLANNED_BYTES {sum(plan)}\n" in header
    assert "#define MODEL_PTE_DELEGATE_BYTES " in header and "#define MODEL_PTE_PLANNED_BUFFERS " in header


def test_io_macros_have_counts_codes_bytes_and_float_bits() -> None:
    from zoo.registry.firmware.header_macros import io_macros as macros
    from zoo.registry.firmware.macros import float32_bits

    q = {"name": "x", "dtype": "int8", "shape": [1, 3, 2, 2], "dim_order": [0, 2, 3, 1], "scale": 0.0186,
         "zero_point": -3, "qmin": -128, "qmax": 127}
    f = {**q, "dtype": "float32", "scale": None, "zero_point": None, "qmin": None, "qmax": None}
    out = macros({"mode": "int8", "layout": "nhwc", "inputs": [q, q], "outputs": [f]})
    assert (out["inputs"], out["outputs"]) == (2, 1)
    assert (out["input1_dtype_code"], out["input1_bytes"], out["output0_dtype_code"], out["output0_bytes"]) == (1, 12, 6, 48)
    assert out["input0_scale_bits"] == float32_bits(0.0186) and out["output0_scale_bits"] is None


def test_structure_check_compares_the_memory_plan(add_entry: Artifact) -> None:
    m = add_entry.manifest
    pte = add_entry.pte.read_bytes()
    assert next(c for c in check_structure(pte, Expected.from_manifest(m)) if c.name == "memory").passed
    assert m.memory is not None
    wrong = dataclasses.replace(m, memory={**m.memory, "planned_bytes": m.memory["planned_bytes"] + 16})
    memory = next(c for c in check_structure(pte, Expected.from_manifest(wrong)) if c.name == "memory")
    assert not memory.passed and "planned_bytes is" in memory.detail
    for name in ("method_allocator_bytes", "load_temp_bytes_lp64"):
        wrong = dataclasses.replace(m, memory={**m.memory, name: m.memory[name] + 8})
        memory = next(c for c in check_structure(pte, Expected.from_manifest(wrong)) if c.name == "memory")
        assert not memory.passed and f"{name} is" in memory.detail


def test_the_header_carries_the_allocators_needs(add_entry: Artifact) -> None:
    """The method allocator's figure is the 32-bit replay's; the temp pool holds the largest of the
    Ethos-U scratch, the kernels' load-time metadata and the floor below which the runtime moves that
    metadata into the method allocator (tests/firmware checks them against the runtime)."""
    from zoo.registry.firmware.method_allocator import ILP32, LP64, need
    from zoo.registry.pte.program import read_program

    program = read_program(add_entry.pte.read_bytes())
    small, large = need(program, ILP32), need(program, LP64)
    assert small.method_bytes < large.method_bytes and small.load_temp_bytes < large.load_temp_bytes
    m = add_entry.manifest.memory or {}
    assert (m["method_allocator_bytes"], m["method_allocator_bytes_lp64"]) == (small.method_bytes, large.method_bytes)
    header = add_entry.header.read_text()
    assert f"#define MODEL_PTE_METHOD_ALLOCATOR_BYTES {small.method_bytes}\n" in header
    temp = max(small.load_temp_bytes, m["scratch_bytes"], small.temp_floor_bytes)
    # A TensorMeta (12 bytes on a 32-bit core) and 16 dim-order bytes per argument of the widest kernel call.
    assert m["temp_floor_bytes"] == small.temp_floor_bytes > 0 and small.temp_floor_bytes % (12 + 16) == 0
    assert f"#define MODEL_PTE_TEMP_ALLOCATOR_BYTES {temp}\n" in header


def test_a_changed_s_fails_its_check(add_entry: Artifact) -> None:
    assert add_entry.model_asm is not None
    record = add_entry.manifest.file("pte")
    assert record is not None
    asm = add_entry.model_asm.read_bytes()
    size = len(add_entry.pte.read_bytes())
    assert check_stored_asm(record.name, size, asm, add_entry.model_asm.name, add_entry.manifest).passed
    other = asm.replace(b'.incbin "add_u55-128.pte"', b'.incbin "other.pte"')
    bad = check_stored_asm(record.name, size, other, add_entry.model_asm.name, add_entry.manifest)
    assert not bad.passed and "line 9 is '    .incbin \"other.pte\"'" in bad.detail


def test_cache_verify_finds_a_changed_s(add_entry: Artifact) -> None:
    from zoo.registry.verify.verification import verify_entry

    entry = Zoo().cache.get(add_entry.key)
    assert entry is not None
    asm = entry.file("model_asm")
    assert asm is not None
    assert [c.passed for c in verify_entry(entry).checks if c.name == "model_asm"] == [True]
    asm.chmod(0o644)
    asm.write_bytes(asm.read_bytes().replace(b".balign 16", b".balign 4 "))
    assert [c.passed for c in verify_entry(entry).checks if c.name == "model_asm"] == [False]


def test_single_style_hands_out_one_header_with_the_array(fake_compile: FakeCompile, tmp_path: Path) -> None:
    tmp_path = tmp_path / "fw"
    art = Zoo().fetch("add", "u55-128", out_dir=tmp_path, header_style="single", header_array="add_pte")
    assert art.model_asm is None and sorted(p.name for p in tmp_path.iterdir()) == [
        "add_u55-128.h", "add_u55-128.pte", "add_u55-128_io.c", "add_u55-128_io.h", "manifest.json"]
    assert array_bytes(art.header, "add_pte") == art.pte.read_bytes()
    assert "#ifdef ADD_PTE_DEFINE\n" in art.header.read_text()
    if shutil.which("gcc") is None:
        return
    (tmp_path / "a.c").write_text('#define ADD_PTE_DEFINE\n#include "add_u55-128.h"\n')
    (tmp_path / "b.c").write_text('#include "add_u55-128.h"\nint main(void) { return add_pte[4] != 0x45 || add_pte_len != ADD_PTE_LEN; }\n')
    build = subprocess.run(["gcc", "-std=c11", "-Wall", "-Wextra", "-Werror", "a.c", "b.c", "-o", "p"], cwd=tmp_path,
                           capture_output=True, text=True)
    assert build.returncode == 0, build.stderr
    assert subprocess.run([str(tmp_path / "p")]).returncode == 0  # byte 4 of a .pte is 'E' of ET12


def test_a_firmware_project_is_rendered_from_the_headers_figures(add_entry: Artifact, tmp_path: Path) -> None:
    """Every pool and option comes from the header's macros, no number typed by hand; the samples are exact."""
    from zoo.registry.firmware.boards import BOARDS, board_for
    from zoo.registry.firmware.npu_sizes import npu_model_sizes
    from zoo.registry.firmware.project import Samples, arm_runner_options, render_project

    macros = add_entry.manifest.header["macros"]
    files = {p.name: p.read_bytes() for p in (add_entry.pte, add_entry.header)}
    project = render_project(stem="add_u55-128", macros=macros, array="model_pte", model_files=files,
                             samples=Samples([[[0.1], [-2.5]], [[float("inf")], [1e-40]]], [None, 3]),
                             board=board_for("ethos-u55-128", "ethos-u55-128", None), runtime_cache=tmp_path)
    assert {"CMakeLists.txt", "main.cpp", "corstone-300.ld", "npu_standin.c", "model/add_u55-128.pte"} <= set(project)
    # The stand-in's model of the NPU is sized from the program: add's one ELEMENTWISE (issue 58).
    sizes = npu_model_sizes(add_entry.pte.read_bytes())
    assert project["npu_model_sizes.h"] == sizes.header().encode() and sizes.operations == 1
    assert not any(b"@" + k.encode() + b"@" in v for v in project.values() for k in ("STEM", "BOARD", "FEED"))
    main = project["main.cpp"].decode()
    assert "static uint8_t planned0[MODEL_PTE_PLANNED_BUFFER0_BYTES]" in main
    assert "method_pool[MODEL_PTE_METHOD_ALLOCATOR_BYTES]" in main and "temp_pool[MODEL_PTE_TEMP_ALLOCATOR_BYTES]" in main
    inputs = project["zoo_inputs.c"].decode()
    assert "0x1.999999999999ap-4f" in inputs and "INFINITY" in inputs and "{-1, 3}" in inputs
    runner = arm_runner_options(macros, 2)
    pool = -(-macros["planned_buffer0_bytes"] // 16) * 16 + macros["method_allocator_bytes"] + 32  # two 16-byte EValues
    assert f"set(ET_ARM_BAREMETAL_METHOD_ALLOCATOR_POOL_SIZE {pool} " in runner
    assert f"set(ET_ARM_BAREMETAL_SCRATCH_TEMP_ALLOCATOR_POOL_SIZE {macros['temp_allocator_bytes']} " in runner
    assert "# The NPU's scratch and the kernels' metadata while the method loads" in runner
    assert "# No NPU: the kernels' metadata while the method loads" in arm_runner_options({**macros, "delegates": 0}, 2)
    assert board_for("ethos-u85-256", "ethos-u85-256", None) is BOARDS["corstone-320"]
    with pytest.raises(ValueError, match="ethos-u55-128 does not sit on corstone-320: use corstone-300"):
        board_for("ethos-u55-128", "ethos-u55-128", "corstone-320")
    # Asked for by name, a U85 program goes into the Corstone-300's firmware for QEMU (stand-in only).
    assert board_for("ethos-u85-256", "ethos-u85-256", "corstone-300") is BOARDS["corstone-300"]


def _add_project(art: Artifact, runtime_cache: Path, python: str | None = None, *, target: str = "ethos-u55-128",
                 board: str = "corstone-300", top1: bool = False, label: int | None = None) -> dict[str, bytes]:
    from zoo.registry.firmware.boards import BOARDS
    from zoo.registry.firmware.project import Samples, render_project

    files = {p.name: p.read_bytes() for p in (art.pte, art.header)}
    return render_project(stem="add_u55-128", macros={**art.manifest.header["macros"], "target": target},
                          array="model_pte", model_files=files, samples=Samples([[[0.5], [1.5]]], [label], top1=top1),
                          board=BOARDS[board], runtime_cache=runtime_cache, python=python)


@pytest.mark.skipif(shutil.which("cmake") is None, reason="cmake is not installed")
def test_paths_go_into_the_cmake_files_as_quoted_arguments_cmake_reads_back(add_entry: Artifact, tmp_path: Path) -> None:
    """A path with a quote or a ``${...}`` is the same path in CMake, never code (cmake -P runs
    the project's own lines that set it)."""
    cache = tmp_path / 'my "zoo" ${HOME} $ENV{PATH} ) file(WRITE pwned 1'
    python = '/opt/py "3"/bin/python3 ${CMAKE_COMMAND}'
    lines = [line for line in _add_project(add_entry, cache, python)["CMakeLists.txt"].decode().splitlines()
             if line.startswith(("set(ZOO_RUNTIME_CACHE ", "set(PYTHON_EXECUTABLE "))]
    assert len(lines) == 2
    script = tmp_path / "read.cmake"
    script.write_text("\n".join([*lines, 'file(WRITE "${OUT}" "${ZOO_RUNTIME_CACHE}\\n${PYTHON_EXECUTABLE}")', ""]))
    run = subprocess.run(["cmake", f"-DOUT={tmp_path / 'out.txt'}", "-P", str(script)], cwd=tmp_path,
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert (tmp_path / "out.txt").read_text() == f"{cache}\n{python}" and not (tmp_path / "pwned").exists()

    for bad, what in ((tmp_path / "a\nb", "newline"), (tmp_path / "a;b", "list separator"),
                      (tmp_path / "a\\b", "backslash")):
        with pytest.raises(ValueError, match=f"the runtime cache .*{what}"):
            _add_project(add_entry, bad)


@pytest.mark.parametrize(("target", "board", "qemu", "fvp"), [
    ("ethos-u55-128", "corstone-300", True, "FVP_Corstone_SSE-300_Ethos-U55 -C ethosu.num_macs=128 "),
    ("ethos-u55-64", "corstone-300", True, "FVP_Corstone_SSE-300_Ethos-U55 -C ethosu.num_macs=64 "),
    ("ethos-u65-512", "corstone-300", True, "FVP_Corstone_SSE-300_Ethos-U65 -C ethosu.num_macs=512 "),
    ("portable", "corstone-300", True, "FVP_Corstone_SSE-300_Ethos-U55 -C ethosu.num_macs=128 "),
    ("ethos-u85-256", "corstone-320", False, "FVP_Corstone_SSE-320 -C mps4_board.subsystem.ethosu.num_macs=256 "),
    ("ethos-u55-128", "alif-e8", False, None),
])
def test_the_readme_runs_each_board_where_it_runs(add_entry: Artifact, tmp_path: Path, target: str, board: str,
                                                  qemu: bool, fvp: str | None) -> None:
    """QEMU's mps3-an547 runs the Corstone-300 only (the Corstone-320's image locks up there); each Corstone
    runs in the FVP of its NPU with its MACs; the Alif E8 in neither."""
    readme = _add_project(add_entry, tmp_path, target=target, board=board)["README.md"].decode()
    run = readme[readme.index("## Run"):]
    assert ("qemu-system-arm -M mps3-an547" in run) is qemu
    assert ("FVP_" in run) is (fvp is not None) and (fvp is None or fvp in run), run
    if board == "corstone-320":
        assert "SSE-300" not in run and "mps4_board.subsystem.cpu0.semihosting-enable=1" in run
    if fvp is None:
        assert "No emulator models alif-e8" in run


@pytest.mark.parametrize(("target", "board", "moves"), [
    ("ethos-u55-128", "corstone-300", "go to SRAM (`NPU_SRAM`) or, if it cannot hold them, DDR (`BULK`) instead"),
    ("ethos-u85-256", "corstone-320", "go to SRAM (`NPU_SRAM`) or, if it cannot hold them, DDR (`BULK`) instead"),
    ("ethos-u55-128", "alif-e8", "the kernels stay in MRAM whatever is left: the code runs from MRAM"),
])
def test_the_readme_says_where_the_kernels_go_when_the_code_leaves_the_application_too_little(
        add_entry: Artifact, tmp_path: Path, target: str, board: str, moves: str) -> None:
    project = _add_project(add_entry, tmp_path, target=target, board=board)
    readme = project["README.md"].decode()
    assert "### Code" in readme, readme[readme.index("## Build"):readme.index("## Run")]
    from zoo.registry.firmware.boards import BOARDS, CODE_RESERVE_BYTES

    code = readme[readme.index("### Code"):readme.index("## Run")]
    assert f"keeps {CODE_RESERVE_BYTES // 1024} KiB of {BOARDS[board].code_region} for your application" in code
    assert moves in code and ("zoo_code_placement.ld" in code) is (board != "alif-e8"), code
    assert f'set(ZOO_CODE_RESERVE "{CODE_RESERVE_BYTES}" CACHE STRING' in project["CMakeLists.txt"].decode()


def test_the_readme_builds_the_stand_in_for_qemu_and_the_driver_for_the_fvp(add_entry: Artifact, tmp_path: Path) -> None:
    """Followed literally, the README's QEMU run is of a stand-in build (QEMU has no NPU: the real driver's
    ethosu_init fails there, and main then says so); the FVP's is of the real driver's."""
    project = _add_project(add_entry, tmp_path)
    readme = project["README.md"].decode()
    build, run = readme[readme.index("## Build"):readme.index("## Run")], readme[readme.index("## Run"):]
    assert "cmake -S . -B build-qemu " in build and "-DZOO_NPU_STANDIN=ON\ncmake --build build-qemu\n" in build
    assert "-kernel build-qemu/firmware.elf" in run and "-a build/firmware.elf" in run
    main = project["main.cpp"].decode()
    failed = main.index('"FAIL ethosu_init at 0x%08x\\n"')
    assert "QEMU has no NPU: to run there, build with -DZOO_NPU_STANDIN=ON" in main[failed:failed + 400]
    u85 = _add_project(add_entry, tmp_path, target="ethos-u85-256", board="corstone-320")["README.md"].decode()
    assert "ZOO_NPU_STANDIN" not in u85 and "build-qemu" not in u85


def test_a_u85_program_for_the_corstone_300_says_it_runs_on_the_stand_in_and_builds_only_with_it(
        add_entry: Artifact, tmp_path: Path) -> None:
    """QEMU has no Cortex-M85: a U85 program laid out for the Corstone-300 runs in the Cortex-M55 machine on the
    stand-in's model. Its CMake refuses a build without the stand-in, its main says what runs first, its README
    says so and builds and runs it in QEMU only; the Corstone-320 project's README points to it."""
    from zoo.registry.firmware.readme import U85_IN_QEMU

    project = _add_project(add_entry, tmp_path, target="ethos-u85-256", board="corstone-300")
    cmake = project["CMakeLists.txt"].decode()
    assert "if(ON AND NOT ZOO_NPU_STANDIN)" in cmake and "add -DZOO_NPU_STANDIN=ON" in cmake
    assert f'std::printf("zoo: %s\\n", "{U85_IN_QEMU}");' in project["main.cpp"].decode()
    readme = " ".join(project["README.md"].decode().split())
    build, run = readme[readme.index("## Build"):readme.index("## Run")], readme[readme.index("## Run"):]
    assert f"This project is {U85_IN_QEMU}." in build and "-DZOO_NPU_STANDIN=ON cmake --build build-qemu" in build
    assert "cmake -S . -B build " not in build
    assert "-kernel build-qemu/firmware.elf" in run and "FVP_" not in run and "Not on an FVP" in run
    u55 = _add_project(add_entry, tmp_path)
    assert "if(OFF AND NOT ZOO_NPU_STANDIN)" in u55["CMakeLists.txt"].decode()
    assert 'if (sizeof "" > 1)' in u55["main.cpp"].decode() and U85_IN_QEMU not in u55["README.md"].decode()
    board = " ".join(_add_project(add_entry, tmp_path, target="ethos-u85-256", board="corstone-320")["README.md"]
                     .decode().split())
    assert f"`zoo firmware ... --board corstone-300` writes the project that runs this U85 program in QEMU instead: " \
           f"{U85_IN_QEMU}." in board


@pytest.mark.stack  # zoo firmware reads add's samples for the program through torch
def test_zoo_firmware_says_how_to_run_a_delegated_program_in_qemu(fake_compile: FakeCompile, tmp_path: Path) -> None:
    from click.testing import CliRunner

    from zoo.cli import main

    run = CliRunner().invoke(main, ["firmware", "add", "-t", "u55-128", "-o", str(tmp_path / "fw")])
    assert run.exit_code == 0, run.output
    assert "QEMU has no NPU: to run it there, add -DZOO_NPU_STANDIN=ON, which links npu_standin" in run.stderr


@pytest.mark.stack  # zoo firmware reads add's samples for the program through torch
def test_zoo_firmware_asks_the_default_remote_only_when_the_cache_misses(fake_compile: FakeCompile, tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 43 saw the Hub's "cannot reach" line on every offline zoo firmware: each was a first build. The
    command fetches as zoo fetch does, so a project of a cached build neither asks the remote nor says so."""
    from click.testing import CliRunner

    from zoo.cli import main
    from zoo.registry.remotes.default import DefaultRemote

    probes: list[str] = []
    probe = DefaultRemote._probe
    monkeypatch.setattr(DefaultRemote, "_probe", lambda self: (probes.append(self.url), probe(self))[1])

    def firmware(*args: str) -> str:
        run = CliRunner().invoke(main, ["firmware", "add", *args])
        assert run.exit_code == 0, run.output
        return run.stderr

    said = firmware("-t", "u55-128", "-o", str(tmp_path / "miss"))
    assert len(probes) == 1 and said.count("cannot reach") == 1 and "; skipping this remote" in said
    said = firmware("-t", "u55-128", "-o", str(tmp_path / "hit"))
    assert len(probes) == 1 and "cannot reach" not in said and "ethos-u-zoo" not in said
    said = firmware("-t", "portable", "-o", str(tmp_path / "offline"), "--offline")
    assert len(probes) == 1 and "cannot reach" not in said


def _preprocessed(main: str, tmp_path: Path, **defines: int) -> str:
    """main.cpp through the host's C preprocessor, its #includes left out: what a build with ``defines`` compiles."""
    source = tmp_path / "main.cpp"
    source.write_text("\n".join(line for line in main.splitlines() if not line.startswith("#include")))
    run = subprocess.run(["g++", "-E", "-P", *(f"-D{k}={v}" for k, v in defines.items()), str(source)],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    return run.stdout


@pytest.mark.skipif(shutil.which("g++") is None, reason="no host g++")
def test_outputs_say_whether_the_stand_ins_model_computed_them_and_only_computed_ones_are_scored(
        add_entry: Artifact, tmp_path: Path) -> None:
    """With the stand-in, each sample's lines carry the mark of what npu_model did on that sample's calls: computed
    (by zoo's model of the NPU, not the NPU) or not computed; the top-1 line (of a model judged by top-1, as if add
    were) only when every sample was computed."""
    main = _add_project(add_entry, tmp_path, top1=True, label=1)["main.cpp"].decode()
    standin = _preprocessed(main, tmp_path, ZOO_NPU_STANDIN=1, MODEL_PTE_DELEGATES=1)
    assert "(1 && 1 > 0) ? \" [npu stand-in: computed by zoo's model of the NPU, not the NPU]\"" in standin
    assert 'not_computed_mark = (1 && 1 > 0) ? " [npu stand-in: not computed]"' in standin
    assert "npu_mark = npu_standin_not_computed() == skipped ? computed_mark : not_computed_mark;" in standin
    assert 'std::printf("%s\\n", npu_mark);' in standin and "zoo_labels[s], b - a, npu_mark);" in standin
    assert "outputs not computed (npu_standin stands in for the NPU), so no accuracy" in standin
    assert "top-1 %u of %u labelled%s" in standin and "if (not_computed) {" in standin
    real = _preprocessed(main, tmp_path, ZOO_NPU_STANDIN=0, MODEL_PTE_DELEGATES=1)
    assert 'not_computed_mark = (0 && 1 > 0) ? " [npu stand-in: not computed]" : ""' in real
    assert "npu_standin_not_computed" not in real and "top-1 %u of %u labelled" in real



def test_a_classifier_without_labels_prints_each_samples_class_and_no_top_1(add_entry: Artifact,
                                                                             tmp_path: Path) -> None:
    """A model judged by top-1 whose samples have no label (mv2 on its calibration images) prints output 0's class
    per sample and says there is no top-1 to count, never "top-1 0 of 0 labelled"; one label brings the count back."""
    bare = _add_project(add_entry, tmp_path, top1=True)["main.cpp"].decode()
    a_line = 'std::printf("A %u %u label %d ticks %" PRIu64 "%s\\n", s, (unsigned)arg, zoo_labels[s], b - a, npu_mark);'
    assert "model_pte_argmax_output0(" in bare and a_line in bare, bare[-2500:]
    assert "top-1 %u" not in bare and "labelled +=" not in bare and "correct +=" not in bare, bare[-2500:]
    assert ('"samples %u, no sample has a label, so no top-1: each A line gives output 0\'s class%s; execute %" PRIu64 '
            '" ticks per run at %u Hz\\n", ZOO_SAMPLES,\n                ZOO_STANDIN_DELEGATES') in bare, bare[-2500:]
    labelled = _add_project(add_entry, tmp_path, top1=True, label=1)["main.cpp"].decode()
    assert a_line in labelled and "labelled += zoo_labels[s] >= 0;" in labelled
    assert '"samples %u, top-1 %u of %u labelled%s; execute %" PRIu64 " ticks per run at %u Hz\\n", ZOO_SAMPLES,\n' \
        "                correct, labelled, ZOO_STANDIN_DELEGATES" in labelled and "no sample has a label" not in labelled

VENDOR = Path(__file__).resolve().parents[2].parent / "shared" / "vendor" / "executorch"
HOSTILE = 'x"y é ??/ */ @FEED@ int pwned = 1 //'
"""A quote, non-ASCII, a trigraph (``??/`` is a backslash to a compiler that reads them), a comment's end and
another value's placeholder. A backslash, a ';' or a newline the CMake files refuse first."""


@pytest.mark.skipif(shutil.which("arm-none-eabi-g++") is None or not VENDOR.is_dir(),
                    reason="needs arm-none-eabi-g++ and ExecuTorch's sources (../shared/vendor)")
@pytest.mark.slow  # g++ reads main.cpp with ExecuTorch's headers: 0.6 to 0.8 s of its own
def test_names_in_main_cpp_are_c_text_whatever_they_hold(add_entry: Artifact, tmp_path: Path) -> None:
    """The model and target names main.cpp names in a comment, from a manifest a remote may have written, and
    the board's, compile as the text they are (``-trigraphs``: the strictest reading)."""
    from zoo.registry.firmware.boards import BOARDS
    from zoo.registry.firmware.project import Samples, render_project

    art = add_entry
    files = {p.name: p.read_bytes() for p in (art.pte, art.header, art.model_asm, art.io_header, art.io_source)
             if p is not None}
    board = dataclasses.replace(BOARDS["corstone-300"], cpu_name=f"cpu{HOSTILE}")
    macros = {**art.manifest.header["macros"], "model": f"m{HOSTILE}", "target": f"t{HOSTILE}"}
    project = render_project(stem="add_u55-128", macros=macros, array="model_pte", model_files=files,
                             samples=Samples([[[0.5], [1.5]]], [None]), board=board, runtime_cache=tmp_path / "rt")
    for name, data in project.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(data)
    main = project["main.cpp"].decode("ascii")  # non-ASCII is escaped
    assert [i for i, line in enumerate(main.splitlines()) if "pwned" in line] == [0]  # the comment's line alone
    check = subprocess.run(
        ["arm-none-eabi-g++", "-std=gnu++17", "-trigraphs", "-fsyntax-only", "-Wall", "-Wextra", "-Werror",
         "-mcpu=cortex-m55", "-mthumb", "-mfloat-abi=hard", "-fno-rtti", "-fno-exceptions", "-Wno-psabi",
         "-DC10_USING_CUSTOM_GENERATED_MACROS", "-DZOO_NPU_STANDIN=1", "-DZOO_NPU_IRQ=56", "-DZOO_SYSCLK_HZ=32000000u",
         "-I.", "-Imodel", "-isystem", str(VENDOR.parent), "-isystem", str(VENDOR / "runtime/core/portable_type/c10"),
         "main.cpp"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert check.returncode == 0, check.stderr[-3000:]
    with pytest.raises(ValueError, match=r"MODEL 'm\\n' holds a newline .* use a name without one"):
        render_project(stem="add_u55-128", macros={**macros, "model": "m\n"}, array="model_pte", model_files=files,
                       samples=Samples([[[0.5], [1.5]]], [None]), board=board, runtime_cache=tmp_path / "rt")


@pytest.mark.skipif(shutil.which("gcc") is None, reason="no host gcc")
def test_a_c_escaped_string_reads_back_as_its_bytes(tmp_path: Path) -> None:
    """What the firmware prints of a name is the name's UTF-8 bytes, newline and controls included."""
    from zoo.registry.firmware.macros import c_escaped

    text = f"{HOSTILE}\\\n\t\x01\x7f7 ü??=\u202e"
    (tmp_path / "say.c").write_text(f'#include <stdio.h>\nint main(void) {{ fputs("{c_escaped(text)}", stdout); }}\n',
                                    encoding="ascii")
    build = subprocess.run(["gcc", "-trigraphs", "-Wall", "-Werror", "say.c", "-o", "say"], cwd=tmp_path,
                           capture_output=True, text=True)
    assert build.returncode == 0, build.stderr
    assert subprocess.run([str(tmp_path / "say")], capture_output=True, timeout=60).stdout == text.encode()


@pytest.mark.skipif(shutil.which("g++") is None, reason="no host g++")
def test_the_tick_counter_never_loses_a_wrap_whose_interrupt_is_late(add_entry: Artifact, tmp_path: Path) -> None:
    """main.cpp's ticks() on the host (tests/firmware/ticks_harness.cpp), with the SysTick interrupt taken
    0 to 12 register accesses after the wrap, or not at all during the call: QEMU takes it only between
    translated blocks, and a tick count that read the reloaded VAL with the old wrap count went back
    by 2^24 (``load_method: 18446744073693135561 ticks``). And held past the next wrap, which is then lost
    in the one pending bit (QEMU under load printed ``load_method: 18446744073692933159 ticks``): the
    counts never go back, and between calls less than a period apart they are exact (issue 55)."""
    main = _add_project(add_entry, tmp_path)["main.cpp"].decode()
    block = main[main.index("// --- Time: SysTick"):main.index("// --- ExecuTorch's platform layer")]
    harness = (Path(__file__).parent / "ticks_harness.cpp").read_text().replace("// @TICKS@", block)
    (tmp_path / "ticks.cpp").write_text(harness)
    build = subprocess.run(["g++", "-std=c++17", "-O2", "-Wall", "-Wextra", "-Werror", "ticks.cpp", "-o", "ticks"],
                           cwd=tmp_path, capture_output=True, text=True)
    assert build.returncode == 0, build.stderr
    run = subprocess.run([str(tmp_path / "ticks")], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0 and re.fullmatch(r"ok 0 of \d+\n", run.stdout), run.stdout + run.stderr


@pytest.mark.skipif(any(shutil.which(t) is None for t in ("cmake", "ninja", "arm-none-eabi-gcc")),
                    reason="needs cmake, ninja and arm-none-eabi-gcc")
@pytest.mark.slow
def test_a_failed_runtime_configure_shows_its_log_and_the_usual_causes(add_entry: Artifact, tmp_path: Path) -> None:
    """A source tree whose configure fails (here a fake ExecuTorch with its own error): the project's configure
    prints the end of configure.log and what usually causes it, not only the log's name."""
    et, driver = tmp_path / "src" / "executorch", tmp_path / "src" / "driver"
    (et / "runtime" / "executor").mkdir(parents=True)
    (et / "runtime" / "executor" / "program.h").write_text("")
    (et / "CMakePresets.json").write_text('{"version": 6, "configurePresets": [{"name": "arm-baremetal"}]}')
    (et / "CMakeLists.txt").write_text('cmake_minimum_required(VERSION 3.24)\nproject(fake NONE)\n'
                                       'message(FATAL_ERROR "cannot write into the fake source tree")\n')
    (driver / "include").mkdir(parents=True)
    (driver / "include" / "ethosu_driver.h").write_text("")
    folder = tmp_path / "fw"
    for name, data in _add_project(add_entry, tmp_path / "runtime").items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(data)
    run = subprocess.run(["cmake", "-S", str(folder), "-B", str(folder / "build"), "-G", "Ninja",
                          f"-DEXECUTORCH_SOURCE_DIR={et}", f"-DETHOS_U_DRIVER_DIR={driver}", f"-DCMSIS_DIR={driver}"],
                         capture_output=True, text=True, timeout=300)
    said = " ".join(run.stderr.split())  # CMake reflows a message's lines
    assert run.returncode != 0 and "configuring ExecuTorch's runtime failed. The end of" in said, run.stderr[-3000:]
    assert "cannot write into the fake source tree" in said and f"EXECUTORCH_SOURCE_DIR ({et}) is read-only" in said


def test_the_machines_paths_are_defaults_the_readme_says_how_to_override(add_entry: Artifact, tmp_path: Path) -> None:
    project = _add_project(add_entry, tmp_path / "runtime", "/opt/py/bin/python3")
    cmake = project["CMakeLists.txt"].decode()
    assert f'set(ZOO_RUNTIME_CACHE "{tmp_path}/runtime" CACHE PATH' in cmake
    assert 'set(PYTHON_EXECUTABLE "/opt/py/bin/python3" CACHE FILEPATH' in cmake
    readme = " ".join(project["README.md"].decode().split())
    assert "elsewhere, add `-DZOO_RUNTIME_CACHE=...` and `-DPYTHON_EXECUTABLE=...`" in readme
    # Those two lines are the only place the project names a path outside itself, so moving it, or the
    # sources (-DEXECUTORCH_SOURCE_DIR=...), takes -D options and no edit.
    absolute = [(name, line) for name, data in project.items() if name != "README.md" and not name.startswith("model/")
                for line in data.decode(errors="replace").splitlines() if str(tmp_path) in line or "/opt/py" in line]
    assert [line.split()[0] for _, line in absolute] == ["set(ZOO_RUNTIME_CACHE", "set(PYTHON_EXECUTABLE"], absolute


@pytest.mark.skipif(shutil.which("arm-none-eabi-gcc") is None, reason="no arm-none-eabi-gcc")
def test_the_firmware_links_without_newlibs_executable_stack_warning(add_entry: Artifact, tmp_path: Path) -> None:
    """ld warns that newlib's objects (rdimon's, in the firmware) lack .note.GNU-stack as soon as one input has
    it: an executable stack means nothing on a bare-metal core, and the project's -z noexecstack says so."""
    cmake = _add_project(add_entry, tmp_path)["CMakeLists.txt"].decode()
    link = cmake[cmake.index("target_link_options(${_image}"):]
    assert '"LINKER:-z,noexecstack")' in link[:link.index(")\n") + 2]
    (tmp_path / "a.c").write_text('#include <stdlib.h>\nvoid _start(void) { _Exit(0); }\n'
                                  '__asm__(".section .note.GNU-stack,\\"\\",%progbits");\n')
    flags = ["arm-none-eabi-gcc", "-mcpu=cortex-m55", "-mthumb", "-mfloat-abi=hard", "--specs=rdimon.specs",
             "-nostartfiles", "a.c", "-o", "a.elf"]
    plain = subprocess.run(flags, cwd=tmp_path, capture_output=True, text=True)
    assert plain.returncode == 0 and "missing .note.GNU-stack section implies executable stack" in plain.stderr
    quiet = subprocess.run([*flags, "-Wl,-z,noexecstack"], cwd=tmp_path, capture_output=True, text=True)
    assert quiet.returncode == 0 and "warning" not in quiet.stderr, quiet.stderr
