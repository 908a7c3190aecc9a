"""A firmware project for one artifact: a CMake project in C++17 that builds ExecuTorch's runtime,
its Ethos-U backend and Arm's core driver for the board's Cortex-M, and a main that loads the
program from ``model_pte``, feeds it evaluation samples through the artifact's I/O helpers,
runs it and prints the outputs. Every pool is sized by the header's macros.

The templates are in ``templates/``; what is rendered here is what depends on the artifact:
the board's CPU and memory map, the planned buffers, one block per input, the samples as exact
float literals, the CPU kernel libraries, and the options for Arm's own ``executor_runner``.
Pure text: the samples come in as plain floats, so this module never imports torch. The boards'
memory maps and the pinned sources are ``boards.py``'s, the README's prose ``readme.py``'s.
"""

from __future__ import annotations

import math
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from zoo.registry.firmware.boards import (
    CODE_RESERVE_BYTES,
    EXECUTORCH_COMMIT,
    BoardLayout,
    template,
    u85_in_qemu,
)
from zoo.registry.firmware.macros import c_escaped
from zoo.registry.firmware.method_allocator import ILP32
from zoo.registry.firmware.npu_sizes import NpuModelSizes, npu_model_sizes
from zoo.registry.firmware.readme import U85_IN_QEMU, readme
from zoo.registry.firmware.sensor_io import has_sensor

__all__ = ["NPU_MODEL_FILES", "RUNTIME_RECIPE", "Samples", "arm_runner_options", "render_project"]

RUNTIME_RECIPE = "2"
"""Part of the runtime cache's key: bump when runtime.cmake builds other libraries or flags."""


@dataclass(frozen=True)
class Samples:
    """Evaluation samples as the firmware feeds them: per sample, per input, its float values
    (the model's own float input, before the I/O helper), and an integer label or None.
    ``raw[i]``: input ``i``'s values are instead its sensor's raw window, ``raw[t * CHANNELS + c]``
    in the declared units, which main.cpp feeds through ``<array>_normalise_input<i>``."""

    inputs: list[list[list[float]]]
    labels: list[int | None]
    raw: tuple[bool, ...] = ()
    """One flag per input (empty: none raw)."""
    top1: bool = False
    """The model is judged by zoo's ``top1`` (its spec declares it), so the labels are classes: main.cpp prints
    output 0's arg-max against each and counts the top-1 where a sample has a label. Otherwise it prints neither,
    only the outputs."""

    def is_raw(self, i: int) -> bool:
        return i < len(self.raw) and self.raw[i]

    @property
    def labelled(self) -> bool:
        """Some sample has an integer label, so a top-1 can be counted over them."""
        return any(label is not None for label in self.labels)


def render_project(*, stem: str, macros: Mapping[str, Any], array: str, model_files: Mapping[str, bytes],
                   samples: Samples, board: BoardLayout, runtime_cache: Path,
                   python: str | None = None) -> dict[str, bytes]:
    """Every file of the project by its path inside the project folder."""
    prefix = array.upper()
    delegates = int(macros.get("delegates") or 0)
    inputs = int(macros["inputs"])
    standin_only = u85_in_qemu(str(macros["target"]), board)
    sizes = npu_model_sizes(next(data for name, data in model_files.items() if name.endswith(".pte"))) \
        if delegates else NpuModelSizes()
    too_large = _standin_too_large(sizes, macros, board, standin_only)
    if too_large and standin_only:
        raise ValueError(too_large)
    if any(len(s) != inputs for s in samples.inputs):
        raise ValueError(f"each sample must give {inputs} input(s)")
    if len(samples.raw) > inputs:
        raise ValueError(f"the samples flag {len(samples.raw)} input(s) as raw, and the program has {inputs}")
    for i in range(inputs):
        if samples.is_raw(i) and not has_sensor(macros, i):
            raise ValueError(f"input {i}'s samples are a sensor's raw windows, but the input declares no sensor to "
                             "normalise them: give the model's float inputs instead")
    lengths = {i: _raw_lengths(macros, samples, i) for i in range(inputs) if samples.is_raw(i)}
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
        "FEED": "\n".join(_feed(array, prefix, i, samples.is_raw(i), _from_window(macros, i), i in lengths and
                                 lengths[i] is not None) for i in range(inputs)),
        "DECODE": _decode(array, macros, samples.top1, samples.labelled),
        "SCORE": _score(samples.top1, samples.labelled),
        "STANDIN_ONLY": "ON" if standin_only else "OFF", "STANDIN_TOO_LARGE": too_large,
        "NPU_NOTE": U85_IN_QEMU if standin_only and delegates else "",
        "SENSOR": "".join(_sensor(array, prefix, macros, i) for i in range(inputs) if has_sensor(macros, i)),
    }
    out = {f"model/{name}": data for name, data in model_files.items()}
    for name in ("CMakeLists.txt", "runtime.cmake", "toolchain.cmake", "code_placement.cmake", "main.cpp", "startup.c",
                 "zoo_sections.ld", f"{board.name}.ld"):
        out[name] = _render(name, values)
    if delegates:
        for name in ("npu_standin.c", "npu_standin.h", *NPU_MODEL_FILES):
            out[name] = template(name)
        out["npu_model_sizes.h"] = sizes.header().encode()
    out["zoo_inputs.h"], out["zoo_inputs.c"] = _inputs(stem, prefix, samples, inputs, macros, lengths)
    out["arm_executor_runner.cmake"] = arm_runner_options(macros, inputs).encode()
    out["README.md"] = readme(values, board, delegates).encode()
    return out


def _standin_too_large(sizes: NpuModelSizes, macros: Mapping[str, Any], board: BoardLayout, standin_only: bool) -> str:
    """Why the board's BULK memory cannot hold what a build with the stand-in puts there (npu_model's buffers, sized
    from the program, besides the method pool and the planned and input buffers), or "" where it can."""
    others = int(macros.get("method_allocator_bytes") or 0) + int(macros.get("planned_bytes") or 0) + sum(
        int(macros.get(f"input{i}_bytes") or 0) for i in range(int(macros["inputs"])))
    if sizes.buffer_bytes + others <= board.bulk_bytes:
        return ""
    u = sizes.u85
    largest = [f"U55/U65: {sizes.ifm_values:,} IFM values, {sizes.weight_values:,} weights, {sizes.ofm_values:,} OFM "
               f"values, {sizes.channels:,} channels"] if sizes.operations else []
    if u.operations:
        largest.append(f"U85: {u.map_values:,} map values, {u.weight_values:,} weights, {u.chain_values:,} chained "
                       f"values, {u.channels:,} channels")
    return (f"{macros['model']} for {macros['target']} does not fit {board.name} with npu_standin: the stand-in's "
            f"model of the NPU takes {sizes.buffer_bytes:,} bytes of buffers for this program's largest operations "
            f"({', and '.join(largest)}), and the method pool, planned and input buffers {others:,} "
            f"more, but its BULK memory ({board.bulk_region}) holds {board.bulk_bytes:,}. "
            + ("Write the project for corstone-320, whose Ethos-U85 runs the program itself (not in QEMU), or pick a "
               "smaller model or input" if standin_only else
               "Build it for the board's own NPU (without -DZOO_NPU_STANDIN=ON), or pick a smaller model or input"))


NPU_MODEL_FILES = ("npu_model.h", "npu_model_core.h", "npu_model_core.c", "npu_model_u55.h", "npu_model.c",
                   "npu_model_maps.c", "npu_model_conv.c", "npu_model_pool.c", "npu_model_elementwise.c", "npu_mlw.c",
                   "npu_model_u85.h", "npu_model_u85_parts.h", "npu_model_u85.c", "npu_model_u85_maps.c",
                   "npu_model_u85_conv.c", "npu_model_u85_pool.c", "npu_model_u85_elementwise.c", "npu_model_u85_matmul.c",
                   "npu_model_u85_resize.c", "npu_mlw_u85.c")
"""npu_model, the stand-in's C model of the NPU: its headers and sources (CMakeLists.txt compiles the .c files)."""

_CMAKE_FILES = frozenset({"CMakeLists.txt", "runtime.cmake", "toolchain.cmake", "code_placement.cmake"})
_CMAKE_CODE = frozenset({"KERNEL_LIBS", "CPU_FLAGS", "DELEGATES", "KERNEL_REGIONS", "STANDIN_ONLY"})
"""Values a CMake file takes as code (a list, flags, a boolean), not inside a quoted argument."""
_WHAT = {"RUNTIME_CACHE": "the runtime cache (ZOO_CACHE_DIR)", "PYTHON": "the Python (sys.executable)"}


_C_FILES = frozenset({"main.cpp"})
_C_TEXT = frozenset({"MODEL", "TARGET", "BOARD", "CPU_NAME", "NPU_NOTE"})
"""Values main.cpp takes as text, in a string literal or a ``//`` comment; the rest of its values are
code zoo writes (the pools, inputs and decoding) or the headers' file names."""
_C_FILE_NAMES = frozenset({"HEADER", "IO_HEADER"})


def _render(name: str, values: Mapping[str, str]) -> bytes:
    text = template(name).decode()
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


def _from_window(macros: Mapping[str, Any], i: int) -> bool:
    return macros.get(f"input{i}_sensor_from_window") == 1


def _raw_lengths(macros: Mapping[str, Any], samples: Samples, i: int) -> list[int] | None:
    """Each raw window's samples where they are not all the declared window (a series as long as it was
    recorded, which the helper cuts or pads), else None. ValueError if one is empty or not whole samples."""
    given_features = f"input{i}_sensor_feature0" in macros and not _from_window(macros, i)
    width = int(macros[f"input{i}_sensor_channels" if given_features else f"input{i}_sensor_axes"])
    full = 1 if given_features else int(macros[f"input{i}_sensor_window"])
    values = [len(sample[i]) for sample in samples.inputs]
    if any(n == 0 or n % width for n in values):
        raise ValueError(f"input {i}'s raw windows must hold whole samples of {width} value(s) each, at least one")
    return None if all(n == full * width for n in values) else [n // width for n in values]


def _raw_elements(prefix: str, i: int, samples: Samples, from_window: bool, lengths: list[int] | None) -> str:
    """The values of one sample of input ``i`` in ``zoo_inputs.c``: the longest raw window where their lengths
    differ, a raw window of every axis where the helper computes the features from it, else the program's input's."""
    if lengths is not None:
        return str(max(len(sample[i]) for sample in samples.inputs))
    if samples.is_raw(i) and from_window:
        return f"{prefix}_INPUT{i}_SENSOR_WINDOW * {prefix}_INPUT{i}_SENSOR_AXES"
    return f"{prefix}_INPUT{i}_ELEMENTS"


def _feed(array: str, prefix: str, i: int, raw: bool = False, from_window: bool = False, lengths: bool = False) -> str:
    """Input ``i`` of sample ``s``: through the I/O helper into its buffer (the sensor's normalising one for a
    raw window, which computes the features first where they come from the window, given the window's own
    length where they differ), then set as the method's input."""
    steps = f"zoo_steps{i}[s]" if lengths else f"{prefix}_INPUT{i}_SENSOR_{'WINDOW' if from_window else 'STEPS'}"
    helper = (f"{array}_normalise_input{i}(zoo_input{i}[s], {steps}, in{i});" if raw
              else f"{array}_quantize_input{i}(zoo_input{i}[s], in{i});")
    return f"""    {{
      static {array}_input{i}_t in{i}[{prefix}_INPUT{i}_ELEMENTS] ZOO_SECTION(".bss.zoo_input_buffers");
      {helper}
      Result<executorch::runtime::TensorInfo> info = meta->input_tensor_meta({i});
      if (!info.ok()) return fail("input_tensor_meta {i}", info.error());
      if (info->nbytes() != {prefix}_INPUT{i}_BYTES) return fail("input {i}: the program's size is not the header's", Error::InvalidArgument);
      TensorImpl impl(info->scalar_type(), info->sizes().size(), const_cast<TensorImpl::SizesType*>(info->sizes().data()),
                      in{i}, const_cast<TensorImpl::DimOrderType*>(info->dim_order().data()));
      Error e = method->set_input(EValue(Tensor(&impl)), {i});
      if (e != Error::Ok) return fail("set_input {i}", e);
    }}"""


def _decode(array: str, macros: Mapping[str, Any], top1: bool, labelled: bool) -> str:
    """Output 0's arg-max by the helper (torch's rule), against the sample's label; ``-`` in its place for a model
    not judged by top-1, whose arg-max means nothing (an autoencoder's reconstruction, a detector's boxes). Counted
    only where some sample has a label: without one, the class is all there is to print."""
    if not top1:
        return '    std::printf("A %u - label %d ticks %" PRIu64 "%s\\n", s, zoo_labels[s], b - a, npu_mark);'
    if str(macros.get("output0_dtype")) not in ("float32", "int8", "uint8", "int16"):
        return '    std::printf("A %u - label %d%s\\n", s, zoo_labels[s], npu_mark);'
    count = ("      labelled += zoo_labels[s] >= 0;\n"
             "      correct += zoo_labels[s] >= 0 && (int)arg == zoo_labels[s];\n") if labelled else ""
    return f"""    {{
      size_t arg = {array}_argmax_output0(method->get_output(0).toTensor().const_data_ptr<{array}_output0_t>());
{count}      std::printf("A %u %u label %d ticks %" PRIu64 "%s\\n", s, (unsigned)arg, zoo_labels[s], b - a, npu_mark);
    }}"""


def _score(top1: bool, labelled: bool) -> str:
    """The run's last line when every output was computed: the top-1 over the labelled samples only where the
    model is judged by top-1 and some sample has a label; else why there is none (no label to score the classes
    against, or no top-1 to judge the model by: the outputs are there to compare with the host's)."""
    scored = top1 and labelled
    said = ("top-1 %u of %u labelled" if scored else
            "no sample has a label, so no top-1: each A line gives output 0's class" if top1 else
            "outputs printed, no top-1: the model is not judged by one")
    counts = "correct, labelled, " if scored else ""
    return (f'    std::printf("samples %u, {said}%s; execute %" PRIu64 " ticks per run at %u Hz\\n", ZOO_SAMPLES,\n'
            f"                {counts}ZOO_STANDIN_DELEGATES ? \" (npu_standin: computed by zoo's model of the NPU, not "
            'the NPU)" : "",\n'
            "                ZOO_SAMPLES ? total / ZOO_SAMPLES : 0, (unsigned)ZOO_SYSCLK_HZ);")


def _sensor(array: str, prefix: str, macros: Mapping[str, Any], i: int) -> str:
    """What firmware reading the sensor needs to know of input ``i``, printed at boot from the header's
    macros (names by macro, so no text of a manifest reaches the code), and the helper that takes it."""
    m = f"{prefix}_INPUT{i}_SENSOR"
    rate = float(macros[f"input{i}_sensor_rate_hz"])
    axes = " ".join(f"{m}_AXIS{k}" for k in range(int(macros[f"input{i}_sensor_axes"])))
    features = int(macros[f"input{i}_sensor_channels"]) if f"input{i}_sensor_feature0" in macros else 0
    what = f"{features} features of " if features else ""
    # The rate is formatted here: printf's %g pulls floating-point formatting into a newlib-nano build.
    return (f'  std::printf("input {i}: {what}%u samples at {rate:g} Hz of the axes", (unsigned){m}_WINDOW);\n'
            + "".join(f'  std::printf(" %s", {name});\n' for name in axes.split())
            + f'  std::printf("; %s normalisation: {array}_normalise_input{i}\\n", {m}_NORMALISATION);\n')


def _float(value: float) -> str:
    """An exact C float literal (hexadecimal: no decimal rounding can move it)."""
    if math.isnan(value):
        return "NAN"
    if math.isinf(value):
        return "INFINITY" if value > 0 else "-INFINITY"
    return f"{value.hex()}f"


def _inputs(stem: str, prefix: str, samples: Samples, inputs: int, macros: Mapping[str, Any],
            lengths: Mapping[int, list[int] | None]) -> tuple[bytes, bytes]:
    count = len(samples.inputs)
    header = [f"/* The evaluation samples main.cpp feeds {stem}: generated by zoo. */", "#ifndef ZOO_INPUTS_H_",
              "#define ZOO_INPUTS_H_", f'#include "{stem}.h"', f"#define ZOO_SAMPLES {count}u", "#ifdef __cplusplus",
              'extern "C" {', "#endif"]
    sizes = [_raw_elements(prefix, i, samples, _from_window(macros, i), lengths.get(i)) for i in range(inputs)]
    header += [f"extern const float zoo_input{i}[ZOO_SAMPLES][{sizes[i]}];" for i in range(inputs)]
    steps = [i for i, n in lengths.items() if n is not None]
    header[4:4] = ["#include <stddef.h>"] if steps else []
    header += [f"extern const size_t zoo_steps{i}[ZOO_SAMPLES]; /* each raw window's samples */" for i in steps]
    header += ["extern const int zoo_labels[ZOO_SAMPLES]; /* -1: no integer label */", "#ifdef __cplusplus", "}",
               "#endif", "#endif", ""]
    source = ["/* Generated by zoo: the samples as the model's float inputs, before the I/O helpers. */",
              "#include <math.h>", '#include "zoo_inputs.h"', ""]
    for i in range(inputs):
        if samples.is_raw(i):
            source.append(f"/* zoo_input{i}: the sensor's raw windows, sample by sample with the channels interleaved, "
                          f"in the declared units: main.cpp normalises them. */")
        rows = ",\n".join("  {" + ", ".join(_float(v) for v in sample[i]) + "}" for sample in samples.inputs)
        if lengths.get(i) is not None:  # shorter rows end in C's zeros, which the helper does not read
            source.append(f"const size_t zoo_steps{i}[ZOO_SAMPLES] = {{{', '.join(map(str, lengths[i] or []))}}};")
        source.append(f'__attribute__((section("zoo_inputs_sec"), aligned(16)))\n'
                      f"const float zoo_input{i}[ZOO_SAMPLES][{sizes[i]}] = {{\n{rows}\n}};")
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


