"""The allocators' needs zoo records (``zoo/registry/firmware/method_allocator.py``) against ExecuTorch's own runtime.

- Each type size and alignment the replay counts is what ``g++`` (64-bit) and
  ``arm-none-eabi-g++`` for a Cortex-M55 (32-bit) compute from ExecuTorch's headers.
- ``load_method.cpp`` loads real programs with the wheel's ``libexecutorch.so`` and its
  kernel libraries, and prints what the method allocator kept and the temp allocator's
  peak; the 64-bit replay must equal both byte for byte. The programs cover two inputs,
  float and int8 I/O, Ethos-U delegates, and a portable program of CPU kernels (with its
  int lists, booleans and doubles).

No ExecuTorch runtime runs on a Cortex-M here; the 32-bit figure rests on the same replay
with the 32-bit type sizes checked above.
"""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from zoo import Artifact
from zoo.registry.firmware.c_header import DEFINE
from zoo.registry.firmware.method_allocator import ILP32, LP64, Abi, need
from zoo.registry.pte.program import read_program

HERE = Path(__file__).parent
DATA = HERE.parent / "data" / "fake_compile"
# The order of zoo_runtime_types[] in runtime_types.cpp.
RUNTIME_TYPES = ("pointer", "EValue", "TensorImpl", "Tensor", "FreeableBuffer", "CompileSpec", "TensorMeta",
                 "BoxedEvalueList", "BoxedEvalueList", "BoxedEvalueList", "OptionalTensor", "ArrayRef", "Span",
                 "pointer", "int64")
COMPILERS = {"lp64": ["g++"], "ilp32": ["arm-none-eabi-g++", "-mcpu=cortex-m55", "-mthumb", "-mfloat-abi=hard"]}


def _executorch() -> Path:
    spec = importlib.util.find_spec("executorch")
    assert spec is not None and spec.submodule_search_locations
    return Path(next(iter(spec.submodule_search_locations)))


def _flags() -> list[str]:
    et = _executorch()
    # As the wheel's executorch-config.cmake asks of a consumer (EXECUTORCH_COMPILE_DEFINITIONS).
    return ["-std=c++17", "-O1", "-DC10_USING_CUSTOM_GENERATED_MACROS", "-DET_EVENT_TRACER_ENABLED",
            f"-I{et / 'include'}", f"-I{et / 'include/executorch/runtime/core/portable_type/c10'}"]


def _missing(tool: str) -> bool:
    return shutil.which(tool) is None


def _cannot_compile(compiler: list[str]) -> str | None:
    if _missing(compiler[0]):
        return f"{compiler[0]} is not installed (make setup installs it as root)"
    probe = subprocess.run([*compiler, "-x", "c++", "-E", "-"], input="#include <optional>\n",
                           capture_output=True, text=True)
    if probe.returncode != 0:
        return f"{compiler[0]} has no C++ library (make setup installs libstdc++-arm-none-eabi-newlib as root)"
    return None


@pytest.mark.slow
@pytest.mark.parametrize("abi", [ILP32, LP64], ids=lambda a: a.name)
def test_type_layouts_are_the_headers(abi: Abi, tmp_path: Path) -> None:
    compiler = COMPILERS[abi.name]
    if reason := _cannot_compile(compiler):
        pytest.skip(reason)
    asm = tmp_path / "types.s"
    subprocess.run([*compiler, *_flags(), "-S", str(HERE / "runtime_types.cpp"), "-o", str(asm)], check=True)
    text = asm.read_text()
    block = text[text.index("zoo_runtime_types:"):]
    numbers = [int(n) for n in re.findall(r"^\s*\.(?:long|word|4byte)\s+(\d+)", block, re.M)][:2 * len(RUNTIME_TYPES)]
    found = {(name, (numbers[2 * i], numbers[2 * i + 1])) for i, name in enumerate(RUNTIME_TYPES)}
    assert found == {(name, abi.types[name]) for name in RUNTIME_TYPES}


@pytest.fixture(scope="module")
def load_method(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if _missing("g++"):
        pytest.skip("g++ is not installed (make setup installs it as root)")
    lib = _executorch() / "lib"
    out = tmp_path_factory.mktemp("load-method") / "load_method"
    # The kernel libraries only register kernels, so the linker must keep them.
    subprocess.run(["g++", *_flags(), str(HERE / "load_method.cpp"), "-o", str(out), f"-L{lib}",
                    "-Wl,--no-as-needed", "-lexecutorch_kernels_optimized", "-lexecutorch_kernels_quantized",
                    "-lexecutorch", f"-Wl,-rpath,{lib}"], check=True)
    return out


def _measured(load_method: Path, pte: Path, temp_pool: int | None = None) -> dict[str, int]:
    extra = [str(temp_pool)] if temp_pool is not None else []
    proc = subprocess.run([str(load_method), str(pte), *extra], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    result: dict[str, int] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def _replayed(pte: Path, abi: Abi) -> dict[str, int]:
    found = need(read_program(pte.read_bytes()), abi)
    return {"method_bytes": found.method_bytes, "load_temp_bytes": found.load_temp_bytes}


@pytest.mark.slow
@pytest.mark.parametrize("name", ["add_u55-128", "add_portable"])
def test_replay_is_the_runtimes_on_stored_programs(load_method: Path, name: str) -> None:
    pte = DATA / f"{name}.pte"
    assert _measured(load_method, pte) == _replayed(pte, LP64)


@pytest.mark.slow
def test_below_the_temp_floor_the_runtime_spends_the_method_allocator(load_method: Path) -> None:
    """The runtime's own test (Method::resolve_operator): a temp pool smaller than a TensorMeta and
    16 dim-order bytes per argument of a kernel call sends that kernel's metadata to the method allocator."""
    pte = DATA / "add_portable.pte"
    floor = need(read_program(pte.read_bytes()), LP64).temp_floor_bytes
    assert floor > 0
    assert _measured(load_method, pte, floor) == _replayed(pte, LP64)
    below = _measured(load_method, pte, floor - 1)
    assert below["method_bytes"] > _replayed(pte, LP64)["method_bytes"]


@pytest.mark.compile
def test_replay_is_the_runtimes_on_built_artifacts(load_method: Path, built: dict[tuple[str, str], Artifact],
                                                   mnist_io_builds: dict[str, Artifact]) -> None:
    arts = {f"{m} {t}": built[(m, t)] for m, t in (("mnist", "u55-128"), ("mnist", "portable"),
                                                   ("mv2", "u55-128"), ("mv2", "portable"), ("add", "u85-256"))}
    arts["mnist int8"] = mnist_io_builds["mnist int8"]
    for name, art in arts.items():
        measured = _measured(load_method, art.pte)
        assert measured == _replayed(art.pte, LP64), name
        memory = art.manifest.memory or {}
        assert (memory["method_allocator_bytes_lp64"], memory["load_temp_bytes_lp64"]) == tuple(measured.values()), name
        small = _replayed(art.pte, ILP32)
        assert memory["method_allocator_bytes"] == small["method_bytes"] < measured["method_bytes"], name
        macros = dict(DEFINE.findall(art.header.read_text()))
        assert macros["MODEL_PTE_METHOD_ALLOCATOR_BYTES"] == str(small["method_bytes"]), name
        temp = max(small["load_temp_bytes"], memory.get("scratch_bytes") or 0, need(read_program(art.pte.read_bytes()), ILP32).temp_floor_bytes)
        assert macros["MODEL_PTE_TEMP_ALLOCATOR_BYTES"] == str(temp), name
