"""A sensor input's declaration (zoo.SensorInput, issue 57): checked where the spec registers, in the
build key only when declared, rendered into the header's INPUT<i>_SENSOR_* macros, and into
<array>_normalise_input<i>, which the host's gcc runs as numpy normalises and torch quantizes."""

from __future__ import annotations

import shutil
import struct
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from zoo import InputSpec, SensorInput
from zoo._sensor import NORMALISATIONS, WINDOW_STD_FLOOR
from zoo.registry.firmware import sensor_io
from zoo.registry.firmware.c_header import HeaderOptions, foreign_line, pte_header
from zoo.registry.firmware.header_macros import io_macros
from zoo.registry.firmware.model_io import io_names, render_io

AXES = ("ax", "ay", "az", "wx", "wy", "wz")
IMU = SensorInput(200, 50, AXES, ("g", "g", "g", "rad/s", "rad/s", "rad/s"), "per-channel",
                  (-0.00534, 0.377958, -0.139613, 0.017926, -0.003714, 0.012652),
                  (0.928028, 0.498496, 0.551656, 1.00687, 2.558942, 1.088496))


def tensor(name: str, shape: list[int], dtype: str = "int8", scale: float | None = 0.0372, zero_point: int = -3,
           dim_order: list[int] | None = None) -> dict[str, Any]:
    integer = dtype != "float32"
    return {"name": name, "dtype": dtype, "shape": shape, "dim_order": dim_order or list(range(len(shape))),
            "scale": scale if integer else None, "zero_point": zero_point if integer else None,
            "qmin": -128 if integer else None, "qmax": 127 if integer else None}


def macros(spec: InputSpec, record: dict[str, Any]) -> dict[str, Any]:
    io = {"mode": "int8", "layout": "nchw", "inputs": [record], "outputs": [tensor("scores", [1, 7])]}
    out = io_macros(io)
    out.update(sensor_io.sensor_macros([spec.to_json()], {0: out["input0_elements"]}))
    return out


def test_the_declaration_is_checked_against_its_input_and_says_what_is_wrong() -> None:
    assert InputSpec("imu", (1, 6, 1, 200), sensor=IMU).problems() == []
    wrong_shape = InputSpec("imu", (1, 6, 1, 100), sensor=IMU).problems()
    assert wrong_shape == ["input 'imu': sensor: an input of shape [1, 6, 1, 100] does not hold 6 channel(s) × 200 "
                           "step(s) (N, channels, ..., steps), as the declaration says"]
    bad = SensorInput(0, -1.0, AXES, ("g",), "z-score")
    problems = " ".join(bad.problems((1, 6, 1, 200)))
    for part in ("window must be a number of samples ≥ 1, got 0", "rate_hz must be a positive number",
                 "units needs one unit per axis (6), got 1", "normalisation 'z-score' is not one of"):
        assert part in problems
    assert SensorInput(200, 50, AXES, mean=(0.0,), std=(1.0,)).problems((1, 6, 1, 200)) == [
        "per-channel normalisation needs one mean and one std per channel (6), got 1 and 1"]
    assert SensorInput(512, 3e4, ("current",), normalisation="per-window", mean=(1.0,), std=(2.0,)).problems(
        (1, 1, 1, 512)) == ["per-window normalisation takes no mean or std"]
    features = SensorInput(200, 50, AXES, normalisation="none", features=tuple(f"f{k}" for k in range(84)))
    assert features.problems((1, 84)) == [] and features.steps == 1 and len(features.channels) == 84


def test_it_is_in_the_build_key_only_where_declared() -> None:
    plain = InputSpec("imu", (1, 6, 1, 200))
    assert "sensor" not in plain.to_json()  # earlier specs keep their keys
    assert InputSpec("imu", (1, 6, 1, 200), sensor=IMU).to_json()["sensor"]["mean"] == list(IMU.mean)


def test_the_firmware_package_keeps_the_spec_constants() -> None:
    assert sensor_io.WINDOW_STD_FLOOR == WINDOW_STD_FLOOR and sensor_io.NORMALISATIONS == NORMALISATIONS


def test_the_header_names_the_window_axes_and_exact_statistics() -> None:
    m = macros(InputSpec("imu", (1, 6, 1, 200), sensor=IMU), tensor("imu", [1, 6, 1, 200]))
    header = pte_header(b"\0" * 32, file_name="m.h", options=HeaderOptions(), macros=m)
    assert foreign_line(header) is None
    for line in ("#define MODEL_PTE_INPUT0_SENSOR_WINDOW 200", "#define MODEL_PTE_INPUT0_SENSOR_RATE_HZ 50.0f",
                 '#define MODEL_PTE_INPUT0_SENSOR_NORMALISATION "per-channel"', "#define MODEL_PTE_INPUT0_SENSOR_AXES 6",
                 '#define MODEL_PTE_INPUT0_SENSOR_AXIS5 "wz"', '#define MODEL_PTE_INPUT0_SENSOR_AXIS5_UNIT "rad/s"',
                 "#define MODEL_PTE_INPUT0_SENSOR_CHANNELS 6", "#define MODEL_PTE_INPUT0_SENSOR_STEPS 200",
                 "#define MODEL_PTE_INPUT0_SENSOR_STD4 2.558942f",
                 f"#define MODEL_PTE_INPUT0_SENSOR_STD4_BITS 0x{struct.pack('>d', 2.558942).hex()}u"):
        assert line + "\n" in header, line
    h, c = render_io("m.h", HeaderOptions(), m)
    assert "void model_pte_normalise_input0(const float *raw, size_t steps, model_pte_input0_t *q);" in h
    assert "zoo_double_of_bits(MODEL_PTE_INPUT0_SENSOR_STD4_BITS)," in c and "zoo_pairwise" not in c
    plain, _ = render_io("m.h", HeaderOptions(), io_macros({"mode": "int8", "layout": "nchw",
                                                            "inputs": [tensor("imu", [1, 6, 1, 200])], "outputs": []}))
    assert "normalise" not in plain
    with pytest.raises(ValueError, match="input0's sensor normalisation 'z-score' is not one of"):
        render_io("m.h", HeaderOptions(), {**m, "input0_sensor_normalisation": "z-score"})  # a manifest edited
    with pytest.raises(ValueError):
        render_io("m.h", HeaderOptions(), {k: v for k, v in m.items() if k != "input0_sensor_channels"})


def test_a_declaration_that_does_not_fit_the_program_is_refused() -> None:
    with pytest.raises(ValueError, match=r"input 0's sensor declaration: 6 channels × 200 steps is not the "
                                         r"program's 600 values"):
        macros(InputSpec("imu", (1, 6, 1, 200), sensor=IMU), tensor("imu", [1, 6, 1, 100]))


def _run(tmp_path: Path, m: dict[str, Any], raws: list[np.ndarray], steps: list[int], out_dtype: str) -> np.ndarray:
    """Compile the rendered helpers with the host's gcc and run normalise_input0 on each raw window."""
    if shutil.which("gcc") is None:
        pytest.skip("gcc is not installed")
    (tmp_path / "m.h").write_text(pte_header(b"\0" * 32, file_name="m.h", options=HeaderOptions(), macros=m))
    for name, text in zip(io_names("m.h"), render_io("m.h", HeaderOptions(), m), strict=True):
        (tmp_path / name).write_text(text)
    width = max(r.size for r in raws)
    rows = ",\n".join("{" + ", ".join(f"{float(v).hex()}f" for v in np.pad(r.ravel(), (0, width - r.size))) + "}"
                      for r in raws)
    ctype = {"int8": "int8_t", "float32": "float"}[out_dtype]
    fmt = '"%d\\n", (int)q[i]' if out_dtype == "int8" else '"%a\\n", (double)q[i]'
    (tmp_path / "main.c").write_text(
        '#include <stdio.h>\n#include "m_io.h"\n'
        f"static const float raws[{len(raws)}][{width}] = {{\n{rows}\n}};\n"
        f"static const size_t steps[{len(raws)}] = {{{', '.join(map(str, steps))}}};\n"
        "int main(void) {\n"
        f"    static {ctype} q[MODEL_PTE_INPUT0_ELEMENTS];\n"
        f"    for (size_t r = 0; r < {len(raws)}; r++) {{\n"
        "        model_pte_normalise_input0(raws[r], steps[r], q);\n"
        f"        for (size_t i = 0; i < MODEL_PTE_INPUT0_ELEMENTS; i++) printf({fmt});\n"
        "    }\n    return 0;\n}\n")
    strict = ["-std=c11", "-Wall", "-Wextra", "-Werror", "-Wpedantic", "-Wdouble-promotion", "-Wfloat-conversion"]
    subprocess.run(["gcc", *strict, "-O2", "main.c", "m_io.c", "-lm", "-o", "prog"], cwd=tmp_path, check=True)
    out = subprocess.run([str(tmp_path / "prog")], capture_output=True, text=True, check=True).stdout.split()
    values = [int(v) for v in out] if out_dtype == "int8" else [float.fromhex(v) for v in out]
    return np.asarray(values, dtype=np.int8 if out_dtype == "int8" else np.float32).reshape(len(raws), -1)


def quantize(x: np.ndarray, scale: float, zero_point: int) -> np.ndarray:
    """torch's quantized_decomposed rule in float32 (model_io's)."""
    inv = np.float32(1.0 / scale)
    q = np.rint(x.astype(np.float32) * inv) + np.float32(zero_point)
    return np.clip(q, -128, 127).astype(np.int8)


def test_host_gcc_standardises_each_window_as_numpy_in_nhwc_order_padding_and_cutting(tmp_path: Path) -> None:
    # One channel per window, numpy's statistics over every sample given (cut after, as zoo-sensors' PLAID).
    spec = InputSpec("current", (1, 2, 1, 300), sensor=SensorInput(300, 3e4, ("i1", "i2"), normalisation="per-window"))
    m = macros(spec, tensor("current", [1, 2, 1, 300], dim_order=[0, 2, 3, 1]))
    assert m["input0_layout"] == "nhwc"
    rng = np.random.default_rng(3)
    steps = [300, 7, 129, 1000, 0]
    raws = [(rng.standard_normal((n, 2)) * [3.0, 0.02] + [10.0, -0.5]).astype(np.float32) for n in steps]
    got = _run(tmp_path, m, raws, steps, "int8")
    for raw, n, q in zip(raws, steps, got, strict=True):
        want = np.zeros((2, 300), np.float32)
        for c in range(2):
            s = raw[:, c].astype(np.float64)[None, :]
            if n:
                want[c, :min(n, 300)] = ((s - s.mean()) / max(float(s.std()), 1e-12))[0, :300]
        np.testing.assert_array_equal(q, quantize(want, 0.0372, -3).T.ravel())  # channels last


def test_host_gcc_gives_float_io_numpys_float32_bit_for_bit(tmp_path: Path) -> None:
    spec = InputSpec("imu", (1, 6, 1, 200), sensor=IMU)
    m = macros(spec, tensor("imu", [1, 6, 1, 200], dtype="float32"))
    rng = np.random.default_rng(5)
    raws = [rng.standard_normal((200, 6)).astype(np.float32) * 3, rng.standard_normal((50, 6)).astype(np.float32)]
    got = _run(tmp_path, m, raws, [200, 50], "float32")
    mean, std = np.asarray(IMU.mean), np.asarray(IMU.std)
    for raw, q in zip(raws, got, strict=True):
        want = np.zeros((6, 200), np.float32)
        want[:, : len(raw)] = ((raw.T - mean[:, None]) / std[:, None]).astype(np.float32)
        assert q.tobytes() == want.ravel().tobytes()


def test_host_gcc_sums_a_window_in_numpys_order_and_floors_a_flat_one(tmp_path: Path) -> None:
    # ±1e20 every 8th sample cancel only in numpy's order (eight accumulators, halves above 128): a
    # sum from left to right loses the small values beside them, and float32 output shows it.
    spec = InputSpec("x", (1, 1, 1, 400), sensor=SensorInput(400, 100, ("x",), normalisation="per-window"))
    m = macros(spec, tensor("x", [1, 1, 1, 400], dtype="float32"))
    rng = np.random.default_rng(11)
    spiky = rng.uniform(1, 2, 400).astype(np.float32)
    spiky[::16], spiky[8::16] = 1e20, -1e20
    flat = np.full(300, 2.5, np.float32)
    got = _run(tmp_path, m, [spiky[:, None], flat[:, None]], [400, 300], "float32")
    for raw, q in zip((spiky, flat), got, strict=True):
        s = raw.astype(np.float64)[None, :]
        want = np.zeros(400, np.float32)
        want[: raw.size] = ((s - s.mean()) / max(float(s.std()), 1e-12)).astype(np.float32)[0]
        assert q.tobytes() == want.tobytes()


def test_the_firmware_project_prints_the_declaration_at_boot_from_the_header(tmp_path: Path) -> None:
    from zoo.registry.firmware.boards import BOARDS
    from zoo.registry.firmware.project import Samples, render_project

    features = SensorInput(200, 50, AXES, normalisation="none", features=tuple(f"f{k}" for k in range(84)))
    cases = {"imu": (InputSpec("imu", (1, 6, 1, 200), sensor=IMU), tensor("imu", [1, 6, 1, 200])),
             "features": (InputSpec("features", (1, 84), sensor=features), tensor("features", [1, 84])),
             "plain": (InputSpec("imu", (1, 6, 1, 200)), tensor("imu", [1, 6, 1, 200]))}
    printed = {}
    for name, (spec, record) in cases.items():
        m = {**macros(spec, record), "model": "m", "target": "ethos-u55-128"}
        project = render_project(stem="m", macros=m, array="model_pte", model_files={},
                                 samples=Samples([[[0.0] * int(m["input0_elements"])]], [None]),
                                 board=BOARDS["corstone-300"], runtime_cache=tmp_path)
        main = project["main.cpp"].decode()
        assert "@SENSOR@" not in main
        lines = [line for line in main.splitlines() if "SENSOR" in line or "normalise_input" in line]
        if shutil.which("g++") is None or not lines:
            printed[name] = "\n".join(lines)
            continue
        (tmp_path / "m.h").write_text(pte_header(b"\0" * 32, file_name="m.h", options=HeaderOptions(), macros=m))
        (tmp_path / "boot.cpp").write_text('#include <cstdio>\n#include "m.h"\nint main() {\n' + "\n".join(lines)
                                           + "\n  return 0;\n}\n")
        subprocess.run(["g++", "-std=c++17", "-Wall", "-Wextra", "-Werror", "boot.cpp", "-o", "boot"], cwd=tmp_path,
                       check=True)
        printed[name] = subprocess.run([str(tmp_path / "boot")], capture_output=True, text=True, check=True).stdout
    if shutil.which("g++") is not None:
        assert printed["imu"] == ("input 0: 200 samples at 50 Hz of the axes ax ay az wx wy wz; per-channel "
                                  "normalisation: model_pte_normalise_input0\n")
        assert printed["features"].startswith("input 0: 84 features of 200 samples at 50 Hz of the axes ax ay")
    assert printed["plain"] == ""


def test_raw_windows_are_fed_through_the_normalising_helper_and_only_to_a_sensor_input(tmp_path: Path) -> None:
    from zoo.registry.firmware.boards import BOARDS
    from zoo.registry.firmware.project import Samples, render_project

    def render(spec: InputSpec, raw: tuple[bool, ...]) -> dict[str, bytes]:
        m = {**macros(spec, tensor("imu", [1, 6, 1, 200])), "model": "m", "target": "ethos-u55-128"}
        window = [[[float(k) for k in range(1200)]]]
        return render_project(stem="m", macros=m, array="model_pte", model_files={}, samples=Samples(window, [3], raw),
                              board=BOARDS["corstone-300"], runtime_cache=tmp_path)

    fed = render(InputSpec("imu", (1, 6, 1, 200), sensor=IMU), (True,))
    main = fed["main.cpp"].decode()
    assert "model_pte_normalise_input0(zoo_input0[s], MODEL_PTE_INPUT0_SENSOR_STEPS, in0);" in main
    assert "quantize_input0" not in main and "the sensor's raw windows" in fed["zoo_inputs.c"].decode()
    assert "model_pte_quantize_input0(zoo_input0[s], in0);" in render(InputSpec("imu", (1, 6, 1, 200), sensor=IMU),
                                                                       ())["main.cpp"].decode()
    with pytest.raises(ValueError, match="input 0's samples are a sensor's raw windows, but the input declares no "
                                         "sensor to normalise them"):
        render(InputSpec("imu", (1, 6, 1, 200)), (True,))
    with pytest.raises(ValueError, match="flag 2 input"):
        render(InputSpec("imu", (1, 6, 1, 200), sensor=IMU), (True, True))


def test_a_spec_gives_raw_windows_only_with_a_sensor_to_take_them() -> None:
    from zoo import Dataset, ModelSpec, SpecError, WeightsVariant

    data = Dataset(1, "one window", lambda: [], lambda: "none")
    weights = (WeightsVariant("random", "seeded", "generated", "n/a", lambda: "seed 0"),)

    def spec(sensor: SensorInput | None) -> ModelSpec:
        return ModelSpec("imu-model", "1", "test", "activity-recognition", (InputSpec("imu", (1, 6, 1, 200), sensor=sensor),),
                         build=lambda _: None, example_inputs=lambda: [], calibration=data, weights=weights,
                         sensor_evaluation=data)

    spec(IMU).validate()
    with pytest.raises(SpecError, match="sensor_evaluation is given, but no input declares a sensor"):
        spec(None).validate()
