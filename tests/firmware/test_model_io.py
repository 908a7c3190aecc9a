"""The I/O helpers (``model_io.py``): what they declare, that the hand-out checks them, and
that the host's gcc running them gives torch's quantize and dequantize bit for bit (the
Cortex-M55 run of real artifacts is tests/firmware/test_cortex_m55.py)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.fake_compile import FakeCompile
from zoo import Zoo
from zoo.registry.firmware.c_header import HeaderOptions, pte_header
from zoo.registry.firmware.header_macros import io_macros as macros
from zoo.registry.firmware.model_io import io_names, render_io

SCALE = 0.0123  # float32(1 / scale) is not 1.0f / float32(scale) here: the rule's inverse matters
INT8 = {"name": "x", "dtype": "int8", "shape": [1, 64], "dim_order": [0, 1], "scale": SCALE, "zero_point": -3,
        "qmin": -128, "qmax": 127}
IO = {"mode": "int8", "layout": "nchw", "inputs": [INT8], "outputs": [{**INT8, "scale": 0.25, "zero_point": 5}]}


def test_helpers_are_named_after_the_array_and_need_the_exact_constants() -> None:
    h, c = render_io("m_u55-128.h", HeaderOptions("kws"), macros(IO))
    assert io_names("m_u55-128.h") == ("m_u55-128_io.h", "m_u55-128_io.c")
    assert '#ifndef KWS_IO_H_\n' in h and '#include "m_u55-128.h"\n' in h
    assert "void kws_quantize_input0(const float *x, kws_input0_t *q);" in h and "typedef int8_t kws_input0_t;" in h
    assert "size_t kws_argmax_output0(const kws_output0_t *q);" in h
    assert "zoo_float_of_bits(KWS_INPUT0_INV_SCALE_BITS)" in c and '#include "m_u55-128_io.h"' in c
    assert render_io("m_u55-128.h", HeaderOptions("kws"), macros(IO)) == (h, c)  # deterministic
    broken = {k: v for k, v in macros(IO).items() if k != "input0_inv_scale_bits"}
    with pytest.raises(ValueError, match="input0 is an integer tensor without the macros inv_scale_bits"):
        render_io("m.h", HeaderOptions(), broken)


def _write_helpers(folder: Path) -> None:
    """``m.h`` (IO's macros) and its I/O helpers ``m_io.h``/``m_io.c``."""
    (folder / "m.h").write_text(pte_header(b"\0" * 32, file_name="m.h", options=HeaderOptions(), macros=macros(IO)))
    for name, text in zip(io_names("m.h"), render_io("m.h", HeaderOptions(), macros(IO)), strict=True):
        (folder / name).write_text(text)


def test_a_cpp_translation_unit_calls_the_helpers(tmp_path: Path) -> None:
    """ExecuTorch firmware is C++: the helpers are compiled as C and called from C++ (extern "C")."""
    if shutil.which("gcc") is None or shutil.which("g++") is None:
        pytest.skip("gcc and g++ are not installed (make setup installs g++)")
    _write_helpers(tmp_path)
    (tmp_path / "main.cpp").write_text(
        '#include "m_io.h"\n'
        "int main() {\n  float x[MODEL_PTE_INPUT0_ELEMENTS] = {1.0f}; model_pte_input0_t q[MODEL_PTE_INPUT0_ELEMENTS];\n"
        "  model_pte_quantize_input0(x, q);\n  float y[MODEL_PTE_OUTPUT0_ELEMENTS];\n"
        "  model_pte_dequantize_output0(q, y);\n"
        "  return q[0] == 78 && model_pte_argmax_output0(q) == 0 ? 0 : 1;\n}\n")
    strict = ["-Wall", "-Wextra", "-Werror"]
    subprocess.run(["gcc", "-std=c11", *strict, "-c", "m_io.c", "-o", "m_io.o"], cwd=tmp_path, check=True)
    link = subprocess.run(["g++", "-std=c++17", *strict, "main.cpp", "m_io.o", "-lm", "-o", "prog"], cwd=tmp_path,
                          capture_output=True, text=True)
    assert link.returncode == 0, link.stderr
    assert subprocess.run([str(tmp_path / "prog")]).returncode == 0  # round(1 / 0.0123) - 3 = 78


def test_helpers_rendered_before_extern_c_still_pass_their_check() -> None:
    from zoo.registry.store.manifest import Manifest
    from zoo.registry.verify.header_check import check_stored_io

    h, c = render_io("m.h", HeaderOptions(), macros(IO), c_only=True)
    assert "extern \"C\"" not in h and "extern \"C\"" in render_io("m.h", HeaderOptions(), macros(IO))[0]
    m = Manifest(key="k", model="m", target="t", key_inputs={}, files=[],
                 header={"array": "model_pte", "section": "network_model_sec", "style": "split", "macros": macros(IO)})
    assert check_stored_io("m.h", h.encode(), c.encode(), m).passed
    assert not check_stored_io("m.h", h.encode() + b"/* */", c.encode(), m).passed


@pytest.mark.stack
def test_host_gcc_runs_the_helpers_as_torch_rounds(tmp_path: Path) -> None:
    if shutil.which("gcc") is None:
        pytest.skip("gcc is not installed")
    import numpy as np
    import torch

    from zoo.registry.numerics.io import IoParams

    _write_helpers(tmp_path)
    (tmp_path / "main.c").write_text(
        '#include <stdio.h>\n#include "m_io.h"\n'
        "int main(void) {\n  float x[64], y[64]; int8_t q[64];\n"
        "  while (fread(x, sizeof x, 1, stdin) == 1) {\n"
        "    model_pte_quantize_input0(x, q); model_pte_dequantize_output0(q, y);\n"
        "    fwrite(q, sizeof q, 1, stdout); fwrite(y, sizeof y, 1, stdout);\n"
        "    printf(\"%c\", (char)model_pte_argmax_output0(q));\n  }\n  return 0;\n}\n")
    subprocess.run(["gcc", "-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", "-Wdouble-promotion", "-Wfloat-conversion",
                    "main.c", "m_io.c", "-lm", "-o", "io"], cwd=tmp_path, check=True)
    x = (torch.rand(8192, 64, generator=torch.Generator().manual_seed(0)) * 3.2 - 1.6).to(torch.float32)
    out = subprocess.run([str(tmp_path / "io")], input=x.numpy().tobytes(), capture_output=True, check=True).stdout
    rows = np.frombuffer(out, dtype=np.uint8).reshape(8192, 64 + 256 + 1)
    params = IoParams.from_record(IO)
    want_q = params.inputs[0].quantize(x)
    assert (rows[:, :64].view(np.int8) == want_q.numpy()).all()
    assert (rows[:, 64:320].copy().view(np.float32).view(np.uint32)
            == params.outputs[0].dequantize(want_q).numpy().view(np.uint32)).all()
    assert (rows[:, 320] == torch.argmax(want_q, dim=1).numpy()).all()
    # Dividing by the float32 scale (the obvious C) gives other integers for some of these values.
    divided = torch.clamp(torch.round(x / torch.tensor(SCALE, dtype=torch.float32)) - 3, -128, 127).to(torch.int8)
    assert (divided != want_q).any()


def test_fetch_hands_out_the_helpers_and_the_cache_check_finds_a_changed_one(fake_compile: FakeCompile,
                                                                               tmp_path: Path) -> None:
    from zoo.registry.verify.verification import verify_entry

    art = Zoo().fetch("add", "u55-128", out_dir=tmp_path / "o", header_array="add_pte")
    assert art.io_header == tmp_path / "o" / "add_u55-128_io.h" and art.io_source is not None
    assert "void add_pte_quantize_input1(const float *x, add_pte_input1_t *q);" in art.io_header.read_text()
    entry = Zoo().cache.get(art.key)
    assert entry is not None
    assert [c.passed for c in verify_entry(entry).checks if c.name == "model_io"] == [True]
    source = entry.file("io_source")
    assert source is not None
    source.chmod(0o644)
    source.write_text(source.read_text().replace("memcpy(q, x,", "memmove(q, x,"))
    (check,) = [c for c in verify_entry(entry).checks if c.name == "model_io"]
    assert not check.passed and "add_u55-128_io.c is not what zoo writes" in check.detail
