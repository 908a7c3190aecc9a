"""The pitch helper of the I/O header: rendered for a pitch model only, and the host's gcc
running it gives zoo.decode_pitch's Hz and periodicity on salience vectors."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from zoo import decode_pitch, raw_pitch_accuracy, top1
from zoo.registry.firmware.c_header import HeaderOptions, pte_header
from zoo.registry.firmware.header_macros import io_macros
from zoo.registry.firmware.model_io import io_names, pitch_macros, render_io

FLOAT = {"name": "frame", "dtype": "float32", "shape": [1, 1024], "dim_order": [0, 1], "scale": None,
         "zero_point": None, "qmin": None, "qmax": None}
IO = {"mode": "int8", "layout": "nchw", "inputs": [FLOAT],
      "outputs": [{"name": "salience", "dtype": "int8", "shape": [1, 360], "dim_order": [0, 1], "scale": 1 / 255,
                   "zero_point": -128, "qmin": -128, "qmax": 127}]}


def _macros() -> dict[str, str | int | float | None]:
    return {**io_macros(IO), **pitch_macros("pitch", [top1, raw_pitch_accuracy()])}


def test_the_helper_is_rendered_for_a_pitch_model_only() -> None:
    h, _ = render_io("c.h", HeaderOptions("crepe"), _macros())
    assert "static inline float crepe_pitch_hz(const float *salience, float *confidence)" in h
    assert "(CREPE_PITCH_CENTS_OFFSET + CREPE_PITCH_CENTS_PER_BIN * bin)" in h and "#include <math.h>" in h
    assert pitch_macros("classification", [raw_pitch_accuracy()]) == {} == pitch_macros("pitch", [top1])
    plain, _ = render_io("c.h", HeaderOptions("crepe"), io_macros(IO))
    assert "pitch_hz" not in plain and "math.h" not in plain
    wrong = {**_macros(), "pitch_bins": 100}
    with pytest.raises(ValueError, match="output 0 has 360 elements, the pitch decoding 100 bins"):
        render_io("c.h", HeaderOptions(), wrong)


def _vectors() -> Any:
    rng = np.random.default_rng(7)
    bins = np.arange(360)
    rows = [np.exp(-0.5 * ((bins - c) / w) ** 2) * peak for c, w, peak in
            ((100.3, 1.5, 0.9), (2.0, 2.0, 0.8), (358.6, 1.2, 0.7), (180.0, 0.4, 0.95))]
    rows.append(rng.random(360) * 0.2)  # noise: an unvoiced frame's salience
    rows.append(np.zeros(360))  # all zero: the best bin's own pitch
    dequantized = np.round(np.stack(rows) * 255) / 255  # as the int8 output dequantizes
    return np.concatenate([np.stack(rows), dequantized]).astype(np.float32)


def test_host_gcc_decodes_as_decode_pitch(tmp_path: Path) -> None:
    if shutil.which("gcc") is None:
        pytest.skip("gcc is not installed")
    macros = _macros()
    (tmp_path / "m.h").write_text(pte_header(b"\0" * 32, file_name="m.h", options=HeaderOptions(), macros=macros))
    for name, text in zip(io_names("m.h"), render_io("m.h", HeaderOptions(), macros), strict=True):
        (tmp_path / name).write_text(text)
    vectors = _vectors()
    rows = ",\n".join("{" + ", ".join(f"{float(v)!r}f" for v in row) + "}" for row in vectors)
    (tmp_path / "main.c").write_text(
        '#include <stdio.h>\n#include "m_io.h"\n'
        f"static const float rows[{len(vectors)}][360] = {{\n{rows}\n}};\n"
        "int main(void) {\n"
        f"    for (int r = 0; r < {len(vectors)}; r++) {{\n"
        "        float confidence = -1.0f;\n        float hz = model_pte_pitch_hz(rows[r], &confidence);\n"
        '        printf("%.9g %.9g\\n", (double)hz, (double)confidence);\n    }\n'
        "    return model_pte_pitch_hz(rows[0], NULL) > 0.0f ? 0 : 1;\n}\n")
    strict = ["-std=c11", "-Wall", "-Wextra", "-Werror", "-Wpedantic"]
    subprocess.run(["gcc", *strict, "-O2", "main.c", "m_io.c", "-lm", "-o", "prog"], cwd=tmp_path, check=True)
    run = subprocess.run([str(tmp_path / "prog")], capture_output=True, text=True, check=True)
    got = np.array([[float(v) for v in line.split()] for line in run.stdout.splitlines()])
    hz, periodicity = decode_pitch(vectors)
    cents = 1200 * np.abs(np.log2(got[:, 0] / hz))
    assert cents.max() < 0.01, cents  # float32 against float64: far below the 20 cents of a bin
    np.testing.assert_array_equal(got[:, 1].astype(np.float32), periodicity.astype(np.float32))
    assert abs(got[5, 0] - 10 * 2 ** (1997.3794084376191 / 1200)) < 1e-3
