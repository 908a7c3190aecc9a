"""A firmware project for one artifact: a CMake project in C++17 that builds ExecuTorch's runtime,
its Ethos-U backend and Arm's core driver for the board's Cortex-M, and a main that loads the
program from ``model_pte``, feeds it evaluation samples through the artifact's I/O helpers,
runs it and prints the outputs. Every pool is sized by the header's macros.

The templates are in ``templates/``; what is rendered here is what depends on the artifact:
the board's CPU and memory map, the planned buffers, one block per input, the samples as exact
float literals, the CPU kernel libraries, and the options for Arm's own ``executor_runner``.
Pure text: the samples come in as plain floats, so this module never imports torch.
"""

from __future__ import annotations

import math
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from importlib.resources import files as resources
from pathlib import Path
from typing import Any

from zoo.registry.firmware.macros import c_escaped
from zoo.registry.firmware.method_allocator import ILP32

RUNTIME_RECIPE = "1"
"""Part of the runtime cache's key: bump when runtime.cmake builds other libraries or flags."""
EXECUTORCH_COMMIT = "cff6f4dd32e630945b7188512c1f2b4f102b05ad"
"""The ExecuTorch commit these projects are built and tested against (1.5.0 on its way to release;
its ``schema/program.fbs`` is the 1.5.1 wheel's, which writes zoo's programs)."""
CODE_RESERVE_BYTES = 64 * 1024
"""The CODE (Corstone-300: ITCM) a firmware leaves free for the application around the model: its drivers,
its own logic and signal processing (a keyword spotter's MFCC with CMSIS-DSP, an RTOS). With less left,
the build moves the kernel libraries' code out (code_placement.cmake): ds-cnn-fsdd for portable otherwise
leaves 38,468 B of the 512 KiB ITCM, and mnist 208,572 B. A CMake cache variable, ZOO_CODE_RESERVE."""
DRIVER_COMMIT = "0356707"
CMSIS_COMMIT = "7f62ddc8"


@dataclass(frozen=True)
class BoardLayout:
    name: str
    cpu: str
    """TARGET_CPU for ExecuTorch's build."""
    cpu_flags: str
    cpu_name: str
    cpu_note: str
    npu_base: int | None
    npu_irq: int | None
    sysclk_hz: int
    description: str
    code_region: str
    """The region the board's script aliases as CODE."""
    kernel_regions: str
    """The regions (aliases, in order of preference) the kernel libraries' code may move to when it leaves
    less than CODE_RESERVE_BYTES of CODE; empty where the code runs from flash and nothing copies it."""
    no_move: str = ""
    """Why the kernels never move on this board (with no kernel_regions)."""


BOARDS: dict[str, BoardLayout] = {
    "corstone-300": BoardLayout(
        "corstone-300", "cortex-m55", "-mcpu=cortex-m55", "Cortex-M55", "", 0x48102000, 56, 32_000_000,
        "Arm Corstone-300 (SSE-300, Cortex-M55 with an Ethos-U55 or U65): the FVP Corstone_SSE-300_Ethos-U55/U65 "
        "and the MPS3 AN552 image. QEMU's mps3-an547 has the same memories, without the NPU.",
        "ITCM", "NPU_SRAM BULK"),
    "corstone-320": BoardLayout(
        "corstone-320", "cortex-m85", "-march=armv8.1-m.main+mve.fp+fp.dp", "Cortex-M85",
        "gcc before 13 has no -mcpu=cortex-m85: this builds for Armv8.1-M with MVE and double-precision FP, "
        "the M85's instruction set without its PACBTI or its tuning.", 0x50004000, 16, 32_000_000,
        "Arm Corstone-320 (SSE-320, Cortex-M85 with an Ethos-U85): the FVP Corstone_SSE-320.", "BRAM",
        "NPU_SRAM BULK"),
    "alif-e8": BoardLayout(
        "alif-e8", "cortex-m55", "-mcpu=cortex-m55", "Cortex-M55", "", None, None, 400_000_000,
        "Alif Ensemble E8's M55 cores with their Ethos-U55; memories from Alif's Ensemble device pack. Not run "
        "here: set ZOO_NPU_BASE and ZOO_NPU_IRQ from Alif's board support.", "MRAM", "",
        "the code runs from MRAM, where it is stored, and startup.c copies no code into SRAM"),
}
"""The boards zoo writes a memory map for. A target of another family runs on the Corstone of its NPU."""


def board_for(target_name: str, accelerator: str | None, board: str | None) -> BoardLayout:
    """The board a firmware is laid out for: ``board`` if given, the target's own preset, else the
    Corstone that carries its NPU (the U85's Corstone-320, the rest Corstone-300)."""
    name = board or (target_name if target_name in BOARDS else None)
    if name is None:
        name = "corstone-320" if accelerator and accelerator.startswith("ethos-u85") else "corstone-300"
    if name not in BOARDS:
        raise ValueError(f"zoo has no memory map for board {name!r}; it has {', '.join(BOARDS)}")
    layout = BOARDS[name]
    if accelerator and accelerator.startswith("ethos-u85") != (name == "corstone-320"):
        raise ValueError(f"{accelerator} does not sit on {name}: use "
                         f"{'corstone-320' if accelerator.startswith('ethos-u85') else 'corstone-300'}")
    return layout


@dataclass(frozen=True)
class Samples:
    """Evaluation samples as the firmware feeds them: per sample, per input, its float values
    (the model's own float input, before the I/O helper), and an integer label or None."""

    inputs: list[list[list[float]]]
    labels: list[int | None]


def render_project(*, stem: str, macros: Mapping[str, Any], array: str, model_files: Mapping[str, bytes],
                   samples: Samples, board: BoardLayout, runtime_cache: Path,
                   python: str | None = None) -> dict[str, bytes]:
    """Every file of the project by its path inside the project folder."""
    prefix = array.upper()
    delegates = int(macros.get("delegates") or 0)
    inputs = int(macros["inputs"])
    if any(len(s) != inputs for s in samples.inputs):
        raise ValueError(f"each sample must give {inputs} input(s)")
    values = {
        "MODEL": str(macros["model"]), "TARGET": str(macros["target"]), "STEM": stem, "BOARD": board.name,
        "CPU_NAME": board.cpu_name, "CPU_NOTE": board.cpu_note or "The CPU's own -mcpu.", "TARGET_CPU": board.cpu,
        "CPU_FLAGS": board.cpu_flags, "NPU_IRQ": str(board.npu_irq) if board.npu_irq is not None else "",
        "NPU_BASE": f"0x{board.npu_base:08x}u" if board.npu_base is not None else "",
        "NPU_CONFIG": str(macros["target"]), "DELEGATES": "ON" if delegates else "OFF",
        "KERNEL_LIBS": str(macros.get("cpu_kernel_libs") or ""), "SYSCLK_HZ": str(board.sysclk_hz),
        "RUNTIME_CACHE": runtime_cache.as_posix(), "PYTHON": Path(python or sys.executable).as_posix(),
        "RUNTIME_RECIPE": RUNTIME_RECIPE, "CODE_RESERVE": str(CODE_RESERVE_BYTES), "CODE_REGION": board.code_region,
        "KERNEL_REGIONS": board.kernel_regions, "NO_MOVE": board.no_move,
        "EXECUTORCH_COMMIT": EXECUTORCH_COMMIT, "HEADER": f"{stem}.h", "IO_HEADER": f"{stem}_io.h",
        "PLANNED_POOLS": _planned_pools(prefix, int(macros.get("planned_buffers") or 0)),
        "FEED": "\n".join(_feed(array, prefix, i) for i in range(inputs)),
        "DECODE": _decode(array, macros),
    }
    out = {f"model/{name}": data for name, data in model_files.items()}
    for name in ("CMakeLists.txt", "runtime.cmake", "toolchain.cmake", "code_placement.cmake", "main.cpp", "startup.c",
                 "zoo_sections.ld", f"{board.name}.ld"):
        out[name] = _render(name, values)
    if delegates:
        for name in ("npu_standin.c", "npu_standin.h"):
            out[name] = _template(name)
    out["zoo_inputs.h"], out["zoo_inputs.c"] = _inputs(stem, prefix, samples, inputs)
    out["arm_executor_runner.cmake"] = arm_runner_options(macros, inputs).encode()
    out["README.md"] = _readme(values, board, delegates).encode()
    return out


def _template(name: str) -> bytes:
    return (resources("zoo.registry.firmware") / "templates" / name).read_bytes()


_CMAKE_FILES = frozenset({"CMakeLists.txt", "runtime.cmake", "toolchain.cmake", "code_placement.cmake"})
_CMAKE_CODE = frozenset({"KERNEL_LIBS", "CPU_FLAGS", "DELEGATES", "KERNEL_REGIONS"})
"""Values a CMake file takes as code (a list, flags, a boolean), not inside a quoted argument."""
_WHAT = {"RUNTIME_CACHE": "the runtime cache (ZOO_CACHE_DIR)", "PYTHON": "the Python (sys.executable)"}


_C_FILES = frozenset({"main.cpp"})
_C_TEXT = frozenset({"MODEL", "TARGET", "BOARD", "CPU_NAME"})
"""Values main.cpp takes as text, in a string literal or a ``//`` comment; the rest of its values are
code zoo writes (the pools, inputs and decoding) or the headers' file names."""
_C_FILE_NAMES = frozenset({"HEADER", "IO_HEADER"})


def _render(name: str, values: Mapping[str, str]) -> bytes:
    text = _template(name).decode()
    if name in _CMAKE_FILES:
        values = {key: _cmake_value(key, value) for key, value in values.items() if f"@{key}@" in text}
    elif name in _C_FILES:
        values = {key: _c_value(key, value) for key, value in values.items() if f"@{key}@" in text}
    left = sorted({key for key in re.findall(r"@([A-Z_]+)@", text) if key not in values})
    if left:
        raise ValueError(f"{name}: no value for {', '.join(f'@{key}@' for key in left)}")
    # One pass: a value holding "@FEED@" stays text, never a place for the next value.
    return re.sub(r"@([A-Z_]+)@", lambda m: values[m[1]], text).encode()


def _cmake_value(key: str, value: str) -> str:
    """``value`` as the text of a CMake quoted argument (``\\"`` and ``\\$``, so that no ``${...}`` is read),
    or as code for the values in _CMAKE_CODE; ValueError for what neither can hold."""
    what = _WHAT.get(key, key)
    if re.search(r"[\x00-\x1f\x7f]", value):
        raise ValueError(f"{what} {value!r} holds a newline or another control character, which a CMake file "
                         f"cannot take: use a {'path' if key in _WHAT else 'name'} without one")
    if key in _CMAKE_CODE:
        if not re.fullmatch(r"[A-Za-z0-9_.+=\- ]*", value):
            raise ValueError(f"{key} {value!r} is not a list of plain names or flags, so it cannot go into CMake")
        return value
    if ";" in value or "\\" in value:
        raise ValueError(f"{what} {value!r} holds a ';' or a backslash, which CMake reads as a list separator or "
                         "turns into '/' in a path: use a path without one")
    return value.replace('"', '\\"').replace("$", "\\$")


def _c_value(key: str, value: str) -> str:
    """``value`` as C source: text escaped for a string literal (no quote, backslash, newline, trigraph or
    byte outside printable ASCII is left as it is), a header's name checked for ``#include "..."``."""
    if key in _C_TEXT:
        return c_escaped(value)
    if key in _C_FILE_NAMES and not re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9_.+-]*", value):
        raise ValueError(f"header name {value!r} cannot go into #include \"...\": use letters, digits, '_', '.', "
                         "'+' and '-'")
    return value


def _planned_pools(prefix: str, count: int) -> str:
    lines = [f"static uint8_t planned{i}[{prefix}_PLANNED_BUFFER{i}_BYTES] ZOO_SECTION(\".bss.zoo_planned\");"
             for i in range(count)]
    spans = ", ".join(f"{{planned{i}, sizeof planned{i}}}" for i in range(count))
    lines.append(f"static Span<uint8_t> planned_spans[{max(count, 1)}] = {{{spans}}};")
    return "\n".join(lines)


def _feed(array: str, prefix: str, i: int) -> str:
    """Input ``i`` of sample ``s``: through the I/O helper into its buffer, then set as the method's input."""
    return f"""    {{
      static {array}_input{i}_t in{i}[{prefix}_INPUT{i}_ELEMENTS] ZOO_SECTION(".bss.zoo_input_buffers");
      {array}_quantize_input{i}(zoo_input{i}[s], in{i});
      Result<executorch::runtime::TensorInfo> info = meta->input_tensor_meta({i});
      if (!info.ok()) return fail("input_tensor_meta {i}", info.error());
      if (info->nbytes() != {prefix}_INPUT{i}_BYTES) return fail("input {i}: the program's size is not the header's", Error::InvalidArgument);
      TensorImpl impl(info->scalar_type(), info->sizes().size(), const_cast<TensorImpl::SizesType*>(info->sizes().data()),
                      in{i}, const_cast<TensorImpl::DimOrderType*>(info->dim_order().data()));
      Error e = method->set_input(EValue(Tensor(&impl)), {i});
      if (e != Error::Ok) return fail("set_input {i}", e);
    }}"""


def _decode(array: str, macros: Mapping[str, Any]) -> str:
    """Output 0's arg-max by the helper (torch's rule), against the sample's label."""
    if str(macros.get("output0_dtype")) not in ("float32", "int8", "uint8", "int16"):
        return '    std::printf("A %u - label %d%s\\n", s, zoo_labels[s], not_computed);'
    return f"""    {{
      size_t arg = {array}_argmax_output0(method->get_output(0).toTensor().const_data_ptr<{array}_output0_t>());
      labelled += zoo_labels[s] >= 0;
      correct += zoo_labels[s] >= 0 && (int)arg == zoo_labels[s];
      std::printf("A %u %u label %d ticks %" PRIu64 "%s\\n", s, (unsigned)arg, zoo_labels[s], b - a, not_computed);
    }}"""


def _float(value: float) -> str:
    """An exact C float literal (hexadecimal: no decimal rounding can move it)."""
    if math.isnan(value):
        return "NAN"
    if math.isinf(value):
        return "INFINITY" if value > 0 else "-INFINITY"
    return f"{value.hex()}f"


def _inputs(stem: str, prefix: str, samples: Samples, inputs: int) -> tuple[bytes, bytes]:
    count = len(samples.inputs)
    header = [f"/* The evaluation samples main.cpp feeds {stem}: generated by zoo. */", "#ifndef ZOO_INPUTS_H_",
              "#define ZOO_INPUTS_H_", f'#include "{stem}.h"', f"#define ZOO_SAMPLES {count}u", "#ifdef __cplusplus",
              'extern "C" {', "#endif"]
    header += [f"extern const float zoo_input{i}[ZOO_SAMPLES][{prefix}_INPUT{i}_ELEMENTS];" for i in range(inputs)]
    header += ["extern const int zoo_labels[ZOO_SAMPLES]; /* -1: no integer label */", "#ifdef __cplusplus", "}",
               "#endif", "#endif", ""]
    source = ["/* Generated by zoo: the samples as the model's float inputs, before the I/O helpers. */",
              "#include <math.h>", '#include "zoo_inputs.h"', ""]
    for i in range(inputs):
        rows = ",\n".join("  {" + ", ".join(_float(v) for v in sample[i]) + "}" for sample in samples.inputs)
        source.append(f'__attribute__((section("zoo_inputs_sec"), aligned(16)))\n'
                      f"const float zoo_input{i}[ZOO_SAMPLES][{prefix}_INPUT{i}_ELEMENTS] = {{\n{rows}\n}};")
    labels = ", ".join(str(label if label is not None else -1) for label in samples.labels)
    source += [f"const int zoo_labels[ZOO_SAMPLES] = {{{labels}}};", ""]
    return "\n".join(header).encode(), "\n".join(source).encode()


def _align16(n: int) -> int:
    return -(-n // 16) * 16


def arm_runner_options(macros: Mapping[str, Any], inputs: int) -> str:
    """The pool sizes for ExecuTorch's own Arm ``executor_runner`` (examples/arm/executor_runner),
    from the header's figures: ``cmake -C arm_executor_runner.cmake ...``."""
    planned = [int(macros.get(f"planned_buffer{i}_bytes") or 0) for i in range(int(macros.get("planned_buffers") or 0))]
    method = macros.get("method_allocator_bytes")
    evalue = ILP32.types["EValue"][0]
    lines = ["# ExecuTorch's Arm executor_runner, sized for this artifact by zoo (cmake -C this-file ...).",
             f"# {macros.get('model')} for {macros.get('target')}, sha256 {macros.get('sha256')}."]
    if method is not None:
        pool = sum(_align16(p) for p in planned) + int(method) + _align16(evalue * inputs)
        lines += ["# The runner takes the planned buffers (16-byte aligned), then load_method's objects, then the",
                  "# inputs' EValue list from one pool: the sum of the header's figures.",
                  f"set(ET_ARM_BAREMETAL_METHOD_ALLOCATOR_POOL_SIZE {pool} CACHE STRING \"\")"]
    temp = macros.get("temp_allocator_bytes")
    if temp is not None:
        what = "The NPU's scratch and the kernels'" if int(macros.get("delegates") or 0) else "No NPU: the kernels'"
        lines += [f"# {what} metadata while the method loads (TEMP_ALLOCATOR_BYTES).",
                  f"set(ET_ARM_BAREMETAL_SCRATCH_TEMP_ALLOCATOR_POOL_SIZE {int(temp)} CACHE STRING \"\")"]
    arena = macros.get("arena_cache_bytes")
    if arena is not None:
        lines += ["# Dedicated_Sram: the fast scratch in the NPU's SRAM is Vela's arena cache (ARENA_CACHE_BYTES).",
                  f"set(ET_ARM_BAREMETAL_FAST_SCRATCH_TEMP_ALLOCATOR_POOL_SIZE {int(arena)} CACHE STRING \"\")"]
    return "\n".join(lines) + "\n"


def _readme(values: Mapping[str, str], board: BoardLayout, delegates: int) -> str:
    return f"""# {values['MODEL']} for {values['TARGET']} on {board.name}

Generated by `zoo firmware`. {board.description}

{board.cpu_note}

## Sources (once)

```sh
git clone https://github.com/pytorch/executorch && git -C executorch checkout {EXECUTORCH_COMMIT} \\
  && git -C executorch submodule update --init --recursive
git clone https://github.com/zephyrproject-rtos/hal_ethos_u ethos-u-core-driver && git -C ethos-u-core-driver checkout {DRIVER_COMMIT}
git clone https://github.com/ARM-software/CMSIS_6 && git -C CMSIS_6 checkout {CMSIS_COMMIT}
```

The runtime must read the program: these are the sources zoo is tested with (ExecuTorch's
`schema/program.fbs` there is the 1.5.1 wheel's, which wrote this `.pte`).

## Build

{_build_section(board, delegates)}

The first configure builds ExecuTorch's runtime for this CPU into `{values['RUNTIME_CACHE']}` (about 5
minutes on 2 idle cores, more on a busy machine); later projects with the same sources and toolchain reuse it. That folder and the Python for
ExecuTorch's codegen (`{values['PYTHON']}`, which needs torch) are the paths of the machine that ran
`zoo firmware`, as defaults: elsewhere, add `-DZOO_RUNTIME_CACHE=...` and `-DPYTHON_EXECUTABLE=...`.

{_code_section(board)}

## Run

{_run_section(board, values['NPU_CONFIG'], delegates)}

`arm_executor_runner.cmake` sizes the pools of ExecuTorch's own Arm runner for this program.
"""


def _code_section(board: BoardLayout) -> str:
    """Where the kernel libraries' code goes, and how the build decides it (code_placement.cmake)."""
    region = board.code_region
    rule = (f"The build keeps {CODE_RESERVE_BYTES // 1024} KiB of {region} for your application "
            f"(`-DZOO_CODE_RESERVE=N` bytes changes it). It links twice: `zoo_code_measure.elf` measures the "
            f"code with ExecuTorch's kernel libraries in {region}, then `firmware.elf` is the image. ")
    if not board.kernel_regions:
        return (f"### Code\n\n{rule}On {board.name} the kernels stay in {region} whatever is left: {board.no_move}. "
                "The build says what is left.")
    aliases = dict(re.findall(r'^REGION_ALIAS\("(\w+)", *(\w+)\);', _template(f"{board.name}.ld").decode(), re.M))
    moves = [f"{aliases.get(alias, alias)} (`{alias}`)" for alias in board.kernel_regions.split()]
    return (f"### Code\n\n{rule}When the code leaves less than the reserve, the kernel libraries' code and "
            f"constants (`.text` and `.rodata` of `libportable_kernels.a`, `libquantized_kernels.a` and "
            f"`libkernels_util_all_deps.a`) go to {' or, if it cannot hold them, '.join(moves)} instead. The build prints which and why, and writes it into `build/zoo_link/zoo_code_placement.ld` "
            f"(the `.zoo_kernels` section, which `zoo_sections.ld` includes); `build/firmware.map` shows where it "
            f"went. By hand, edit `zoo_sections.ld`: an output section before `.text` takes the input sections it "
            f"names, e.g. `.my_code : {{ *libmine.a:*(.text* .rodata*) }} > {board.kernel_regions.split()[0]}`.")


def in_qemu(board: BoardLayout) -> bool:
    """Whether QEMU's mps3-an547 (the Corstone-300's Cortex-M55 and memories, no NPU) runs this board's image."""
    return board.name == "corstone-300"


STANDIN = ("npu_standin, a stand-in for the Ethos-U driver that checks what the backend hands the NPU and computes "
           "nothing")


def _cmake_lines(build: str, extra: str = "") -> str:
    return (f"```sh\ncmake -S . -B {build} -G Ninja -DEXECUTORCH_SOURCE_DIR=$PWD/executorch \\\n"
            f"  -DETHOS_U_DRIVER_DIR=$PWD/ethos-u-core-driver -DCMSIS_DIR=$PWD/CMSIS_6{extra}\n"
            f"cmake --build {build}\n```")


def _build_section(board: BoardLayout, delegates: int) -> str:
    if not delegates:
        return f"{_cmake_lines('build')}\n\nEverything runs on the CPU."
    real = f"{_cmake_lines('build')}\n\nThis links Arm's Ethos-U core driver, for the FVP or the board."
    if not in_qemu(board):
        return real
    return (f"For QEMU, which has no NPU: `-DZOO_NPU_STANDIN=ON` links {STANDIN} (so the delegated outputs are "
            "not the model's). Without it Arm's driver finds no NPU there and the run stops at `FAIL ethosu_init`."
            "\n\n"
            f"{_cmake_lines('build-qemu', ' -DZOO_NPU_STANDIN=ON')}\n\n{real}")


def _num_macs(accelerator: str, default: int) -> int:
    """The MACs of ``ethos-u55-128`` and its kind; ``default`` for a CPU-only program (the FVP still needs one)."""
    tail = accelerator.rsplit("-", 1)[-1]
    return int(tail) if accelerator.startswith("ethos-u") and tail.isdigit() else default


_FVP_OPTIONS = {
    "corstone-300": "  -C cpu0.semihosting-enable=1 -C mps3_board.visualisation.disable-visualisation=1 \\\n"
                    "  -C mps3_board.telnetterminal0.start_telnet=0 -C mps3_board.uart0.out_file=- \\\n"
                    "  -a build/firmware.elf --timelimit 120",
    "corstone-320": "  -C mps4_board.subsystem.cpu0.semihosting-enable=1 \\\n"
                    "  -C mps4_board.visualisation.disable-visualisation=1 -C vis_hdlcd.disable_visualisation=1 \\\n"
                    "  -C mps4_board.telnetterminal0.start_telnet=0 -C mps4_board.uart0.out_file=- \\\n"
                    "  -a build/firmware.elf --timelimit 120",
}
"""Arm's Corstone FVPs, with the options of ExecuTorch's backends/arm/scripts/run_fvp.sh; output by semihosting."""
QEMU_RUN = ("qemu-system-arm -M mps3-an547 -nographic -semihosting-config enable=on,target=native "
            "-kernel {build}/firmware.elf")


def _fvp(board: str, accelerator: str) -> str | None:
    """The FVP command for ``board`` with ``accelerator`` (``portable``: the NPU idles), or None."""
    if board == "corstone-300":
        model = "FVP_Corstone_SSE-300_Ethos-U65" if accelerator.startswith("ethos-u65") else \
            "FVP_Corstone_SSE-300_Ethos-U55"
        return f"{model} -C ethosu.num_macs={_num_macs(accelerator, 128)} \\\n{_FVP_OPTIONS[board]}"
    if board == "corstone-320":
        return (f"FVP_Corstone_SSE-320 -C mps4_board.subsystem.ethosu.num_macs={_num_macs(accelerator, 128)} \\\n"
                f"{_FVP_OPTIONS[board]}")
    return None


def _run_section(board: BoardLayout, accelerator: str, delegates: int) -> str:
    """How this board's image runs: QEMU only where it models the board, the FVP of its NPU, else the board."""
    fvp = _fvp(board.name, accelerator)
    if fvp is None:
        return (f"No emulator models {board.name} (QEMU's `mps3-an547` is a Corstone-300, and Arm has no FVP of "
                "it): run the image on the board, with a debugger attached for the semihosting output.")
    parts = []
    if in_qemu(board):
        standin = " and npu_standin, built above" if delegates else ""
        parts.append(f"In QEMU (its `mps3-an547` is the Corstone-300's Cortex-M55 and memories, without the NPU"
                     f"{standin}):\n\n```sh\n{QEMU_RUN.format(build='build-qemu' if delegates else 'build')}\n```")
    else:
        parts.append(f"Not in QEMU: its `mps3-an547` is a Corstone-300, without the memories this image is linked "
                     f"for {board.name} (it locks up there).")
    parts.append(f"In Arm's Corstone FVP (from Arm's site; `num_macs` is the NPU's):\n\n```sh\n{fvp}\n```")
    return "\n\n".join(parts)
