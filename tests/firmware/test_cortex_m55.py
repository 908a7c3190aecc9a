"""The CPU side of a firmware, run on a Cortex-M55 in QEMU (``mps3-an547``).

Three real artifacts, as ``zoo fetch -o`` hands them out (headers, ``.s``, I/O helpers):
mnist with int8 I/O and with camera pixels (two variants of one model) and ``add``
(float I/O). Two translation units include their headers and call their helpers, and
everything links into one ELF with the strict flags a firmware engineer uses. The ELF
runs under QEMU with semihosting and prints what the helpers made of real MNIST
evaluation digits, of values on and around the rounding ties, and of every int8
output value; each must equal the host's rule (``zoo.registry.numerics.io``, torch's
own quantize and dequantize) bit for bit. The NPU is not emulated: nothing here runs
the models, only the code around them.
"""

from __future__ import annotations

import shutil
import struct
import subprocess
from pathlib import Path
from typing import Any

import pytest

from zoo import Artifact, Zoo

HERE = Path(__file__).parent
CC = "arm-none-eabi-gcc"
QEMU = "qemu-system-arm"
STRICT = ["-std=c11", "-Wall", "-Wextra", "-Werror", "-Wdouble-promotion", "-Wfloat-conversion"]
ABIS = ("hard", "soft")
"""The FPU's instructions (VRINTX and all), and the same code in software floats (newlib, libgcc)."""
DIGITS = 6
"""Evaluation digits fed through each mnist input helper."""


def _toolchain_missing() -> str | None:
    for tool, package in ((CC, "gcc-arm-none-eabi"), (QEMU, "qemu-system-arm")):
        if shutil.which(tool) is None:
            return f"{tool} is not installed (make setup installs {package} as root)"
    specs = subprocess.run([CC, "-print-file-name=rdimon.specs"], capture_output=True, text=True).stdout.strip()
    if not Path(specs).is_file():
        return "newlib's rdimon.specs is missing (apt-get install libnewlib-arm-none-eabi)"
    return None


pytestmark = [pytest.mark.compile,
              pytest.mark.skipif(_toolchain_missing() is not None, reason=str(_toolchain_missing()))]

@pytest.fixture(scope="module")
def handed_out(mnist_io_builds: dict[str, Artifact], shared_cache: Path,
               tmp_path_factory: pytest.TempPathFactory) -> dict[str, Artifact]:
    """Each artifact fetched into its own folder with its array renamed: the mnist builds are the
    shared ones, and add for u55-128 is the ``built`` fixture's key in the same shared cache (built
    here only if this test runs first, and then found there by ``built``)."""
    root = tmp_path_factory.mktemp("m55")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ZOO_CACHE_DIR", str(shared_cache))
        for name in ("ZOO_CONFIG", "ZOO_PLUGINS", "ZOO_LOAD_PLUGINS"):
            mp.delenv(name, raising=False)
        zoo = Zoo()
        return {
            "mnist_int8": zoo.fetch("mnist", "u55-128", io="int8", out_dir=root / "mnist_int8",
                                    header_array="mnist_int8", build=False),
            "mnist_px": zoo.fetch("mnist", "u55-128", io="pixels", out_dir=root / "mnist_px",
                                  header_array="mnist_px", build=False),
            "add_f": zoo.fetch("add", "u55-128", verify=True, out_dir=root / "add_f", header_array="add_f"),
        }


def _floats(values: list[float]) -> str:
    return ", ".join(f"0x{struct.unpack('<I', struct.pack('<f', v))[0]:08x}u" for v in values)


def _probe_inputs(art: Artifact) -> list[list[float]]:
    """What each integer input helper is given: real digits, then the values around every
    rounding step (the ties x = (k + 1/2) * scale and their float neighbours), the clamps, ±0, ±inf."""
    import torch

    io = art.manifest.io or {}
    (given,) = io["inputs"]
    elements = 1
    for d in given["shape"]:
        elements *= d
    images = [x[0].reshape(-1) for x, _ in Zoo().model("mnist").evaluation.load()[:DIGITS]]  # type: ignore[union-attr]
    scale = given["scale"]
    ks = torch.arange(-300, 300, dtype=torch.float64)
    ties = ((ks + 0.5) * scale).to(torch.float32)
    edges = torch.cat([ties, torch.nextafter(ties, torch.full_like(ties, 1e9)),
                       torch.nextafter(ties, torch.full_like(ties, -1e9)),
                       torch.tensor([0.0, -0.0, 1e30, -1e30, float("inf"), float("-inf"), 1e-40, 0.5, 1.0])])
    flat = [t.tolist() for t in images] + [edges[i:i + elements].tolist() for i in range(0, edges.numel(), elements)]
    return [v + [0.0] * (elements - len(v)) for v in flat]


def _c_sources(folder: Path, arts: dict[str, Artifact]) -> dict[str, Any]:
    """The test's two translation units and its data; returns what the host expects to compare."""
    int8_inputs = {a: _probe_inputs(arts[a]) for a in ("mnist_int8", "mnist_px")}
    add_in = [[1.5, -2.25], [3.0e-3, float("-inf")]]
    outputs = [[(i * 10 + j) % 256 - 128 for j in range(10)] for i in range(26)]  # every int8 value
    outputs.append([5, 7, 7, -128, 7, 0, 0, 0, 0, 0])  # ties: the first wins
    lines = ["#include <stdint.h>", "#include <stddef.h>"]
    for a, cases in int8_inputs.items():
        body = ",\n".join("{" + _floats(c) + "}" for c in cases)
        lines.append(f"const uint32_t {a}_in[{len(cases)}][{len(cases[0])}] = {{\n{body}\n}};")
        lines.append(f"const size_t {a}_cases = {len(cases)};")
    rows = ", ".join("{" + ", ".join(map(str, o)) + "}" for o in outputs)
    lines.append(f"const int8_t int8_out[{len(outputs)}][10] = {{{rows}}};")
    lines.append(f"const size_t int8_out_cases = {len(outputs)};")
    pairs = ", ".join("{" + _floats(c) + "}" for c in add_in)
    lines.append(f"const uint32_t add_in[2][2] = {{{pairs}}};")
    (folder / "data.c").write_text("\n".join(lines) + "\n")
    decls = (
        "#include <stdint.h>\n#include <stddef.h>\n#include <stdio.h>\n#include <string.h>\n"
        "extern const int8_t int8_out[][10];\nextern const size_t int8_out_cases;\n"
        "void print_floats(const char *tag, size_t n, const float *x);\n"
        "void print_ints(const char *tag, size_t n, const int *q);\n"
        "int check_array(const char *name, const unsigned char *array, unsigned len, unsigned declared);\n"
    )
    # Unit 1: both mnist variants (two headers of one model, one file name each in its own folder).
    mnist = decls + '#include "mnist_int8/mnist_u55-128_io.h"\n#include "mnist_px/mnist_u55-128_io.h"\n'
    for a, t in (("mnist_int8", "int8_t"), ("mnist_px", "uint8_t")):
        p = a.upper()
        mnist += (
            f"extern const uint32_t {a}_in[][{p}_INPUT0_ELEMENTS];\nextern const size_t {a}_cases;\n"
            f"static int run_{a}(void)\n{{\n"
            f"    static float x[{p}_INPUT0_ELEMENTS];\n    static {a}_input0_t q[{p}_INPUT0_ELEMENTS];\n"
            f"    static int shown[{p}_INPUT0_ELEMENTS];\n    float y[{p}_OUTPUT0_ELEMENTS];\n"
            f"    _Static_assert(sizeof(q) == {p}_INPUT0_BYTES, \"input bytes\");\n"
            f"    _Static_assert(sizeof(*q) == sizeof({t}), \"input type\");\n"
            f"    for (size_t c = 0; c < {a}_cases; c++) {{\n"
            f"        memcpy(x, {a}_in[c], sizeof x);\n        {a}_quantize_input0(x, q);\n"
            f"        for (size_t i = 0; i < {p}_INPUT0_ELEMENTS; i++) shown[i] = q[i];\n"
            f"        print_ints(\"Q {a}\", {p}_INPUT0_ELEMENTS, shown);\n    }}\n"
            f"    for (size_t c = 0; c < int8_out_cases; c++) {{\n"
            f"        {a}_dequantize_output0(int8_out[c], y);\n"
            f"        print_floats(\"D {a}\", {p}_OUTPUT0_ELEMENTS, y);\n"
            f"        printf(\"A {a} %u\\n\", (unsigned){a}_argmax_output0(int8_out[c]));\n    }}\n"
            f"    return check_array(\"{a}\", {a}, {a}_len, {p}_LEN);\n}}\n"
        )
    mnist += "int run_mnist(void);\nint run_mnist(void) { return run_mnist_int8() | run_mnist_px(); }\n"
    (folder / "tu_mnist.c").write_text(mnist)
    # Unit 2: add, one mnist header again (macros only), printing, and main.
    (folder / "tu_main.c").write_text(
        decls + '#include "add_f/add_u55-128_io.h"\n#include "mnist_int8/mnist_u55-128.h"\n'
        "extern const uint32_t add_in[2][2];\nint run_mnist(void);\n"
        "void print_floats(const char *tag, size_t n, const float *x)\n{\n"
        "    printf(\"%s\", tag);\n    for (size_t i = 0; i < n; i++) {\n"
        "        uint32_t b;\n        memcpy(&b, &x[i], sizeof b);\n        printf(\" %08lx\", (unsigned long)b);\n    }\n"
        "    printf(\"\\n\");\n}\n"
        "void print_ints(const char *tag, size_t n, const int *q)\n{\n"
        "    printf(\"%s\", tag);\n    for (size_t i = 0; i < n; i++) printf(\" %d\", q[i]);\n    printf(\"\\n\");\n}\n"
        "int check_array(const char *name, const unsigned char *array, unsigned len, unsigned declared)\n{\n"
        "    int ok = ((uintptr_t)array % 16u) == 0 && len == declared && memcmp(array + 4, \"ET12\", 4) == 0;\n"
        "    printf(\"P %s %u %s\\n\", name, len, ok ? \"ok\" : \"bad\");\n    return !ok;\n}\n"
        "int main(void)\n{\n"
        "    float x0[ADD_F_INPUT0_ELEMENTS], x1[ADD_F_INPUT1_ELEMENTS], y[ADD_F_OUTPUT0_ELEMENTS];\n"
        "    add_f_input0_t in0[ADD_F_INPUT0_ELEMENTS];\n    add_f_input1_t in1[ADD_F_INPUT1_ELEMENTS];\n"
        "    _Static_assert(ADD_F_INPUTS == 2 && MNIST_INT8_INPUTS == 1, \"counts\");\n"
        "    _Static_assert(MNIST_INT8_INPUT0_DTYPE_CODE == 1 && ADD_F_INPUT0_DTYPE_CODE == 6, \"dtype codes\");\n"
        "    int failed = 0;\n"
        "    for (int c = 0; c < 2; c++) {\n"
        "        memcpy(x0, &add_in[c][0], sizeof x0);\n        memcpy(x1, &add_in[c][1], sizeof x1);\n"
        "        add_f_quantize_input0(x0, in0);\n        add_f_quantize_input1(x1, in1);\n"
        "        print_floats(\"F add_f\", 1, in0);\n        print_floats(\"F add_f\", 1, in1);\n"
        "        add_f_dequantize_output0(in1, y);\n"
        "        printf(\"A add_f %u\\n\", (unsigned)add_f_argmax_output0(in0));\n"
        "        failed |= memcmp(y, in1, sizeof y) != 0;\n    }\n"
        "    failed |= run_mnist();\n"
        "    failed |= check_array(\"add_f\", add_f, add_f_len, ADD_F_LEN);\n"
        "    printf(\"done %d\\n\", failed);\n    return failed;\n}\n"
    )
    return {"inputs": int8_inputs, "outputs": outputs, "add": add_in}


def _build(folder: Path, arts: dict[str, Artifact], abi: str) -> Path:
    flags = ["-mcpu=cortex-m55", "-mthumb", f"-mfloat-abi={abi}", "-O2", *STRICT]
    objects = []
    for array, art in arts.items():
        assert art.model_asm is not None and art.io_source is not None
        # Each .s on its own: the two mnist variants' .pte files share a name, each in its own folder.
        obj = folder / f"{array}_pte.o"
        _run([CC, *flags, "-c", str(art.model_asm), "-I", str(art.model_asm.parent), "-o", str(obj)], folder)
        objects.append(str(obj))
        objects.append(str(art.io_source))
    elf = folder / f"fw-{abi}.elf"
    root = next(iter(arts.values())).header.parent.parent  # a folder per artifact, named by its array
    _run([CC, *flags, "--specs=rdimon.specs", "-nostartfiles", "-T", str(HERE / "an547.ld"), "-I", str(root),
          str(HERE / "startup.c"), "tu_mnist.c", "tu_main.c", "data.c", *objects, "-lm", "-o", str(elf)], folder)
    return elf


def _run(cmd: list[str], cwd: Path) -> None:
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    assert proc.returncode == 0, f"{' '.join(cmd)}\n{proc.stderr}"


def _bits(values: Any) -> list[str]:
    import numpy as np

    return [f"{b:08x}" for b in np.asarray(values, dtype=np.float32).view(np.uint32).tolist()]


@pytest.mark.parametrize("abi", ABIS)
def test_io_helpers_on_a_cortex_m55_match_the_host_bit_for_bit(handed_out: dict[str, Artifact], tmp_path: Path,
                                                                abi: str) -> None:
    import torch

    from zoo.registry.numerics.io import IoParams

    expected = _c_sources(tmp_path, handed_out)
    elf = _build(tmp_path, handed_out, abi)
    run = subprocess.run([QEMU, "-M", "mps3-an547", "-nographic", "-monitor", "none", "-serial", "none",
                          "-semihosting-config", "enable=on,target=native", "-kernel", str(elf)],
                         capture_output=True, text=True, timeout=120)
    lines = run.stdout.splitlines()
    assert run.returncode == 0 and lines[-1] == "done 0", (run.returncode, run.stdout[-2000:], run.stderr)
    got: dict[tuple[str, str], list[list[str]]] = {}
    for line in lines[:-1]:
        kind, array, *rest = line.split()
        got.setdefault((kind, array), []).append(rest)

    for array in ("mnist_int8", "mnist_px"):
        params = IoParams.from_record(handed_out[array].manifest.io or {})
        (qin,), (qout,) = params.inputs, params.outputs
        cases = torch.tensor(expected["inputs"][array], dtype=torch.float32)
        host_q = qin.quantize(cases)  # the host's rule, as the numerical check applies it
        assert [[int(v) for v in row] for row in got[("Q", array)]] == host_q.tolist(), array
        assert host_q.unique().numel() > 100  # the probes cover the range, not one value
        outs = torch.tensor(expected["outputs"], dtype=torch.int8)
        assert got[("D", array)] == [_bits(row) for row in qout.dequantize(outs).numpy()], array
        assert [int(r[0]) for r in got[("A", array)]] == torch.argmax(outs, dim=1).tolist()
        assert got[("P", array)] == [[str(handed_out[array].pte.stat().st_size), "ok"]]
    adds = [c for pair in expected["add"] for c in pair]
    assert [r[0] for r in got[("F", "add_f")]] == _bits(adds)
    assert [int(r[0]) for r in got[("A", "add_f")]] == [0, 0]
