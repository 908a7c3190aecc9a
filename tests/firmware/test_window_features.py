"""Features computed from a sensor's raw window (zoo.SensorInput(from_window=True), issue 57): the
declaration names zoo's window statistics, and <array>_features_input<i>, compiled by the host's gcc,
gives numpy's figures, to the bit but for the spectrum's, which a direct DFT gives to rounding."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from zoo import WINDOW_STATISTICS, InputSpec, SensorInput
from zoo.registry.firmware import sensor_io
from zoo.registry.firmware.c_header import HeaderOptions, pte_header
from zoo.registry.firmware.header_macros import io_macros
from zoo.registry.firmware.model_io import io_names, render_io

RATE = 25.0
WINDOW = 101  # odd: rfft's last bin is not Nyquist's
AXES = ("x", "y")
NAMES = ("x mean", "y std", "x min", "y max", "x median", "y p33.3", "x p77.7", "y p95.5", "x p0", "x p100", "y mean |diff|",
         "x dominant Hz", "y dominant Hz", "x log power 0.5-3 Hz", "y log power 0-12.5 Hz")
FEATURES = SensorInput(WINDOW, RATE, AXES, normalisation="none", features=NAMES, from_window=True)


def numpy_features(window: np.ndarray) -> np.ndarray:
    """NAMES by numpy on a (WINDOW, 2) float32 window, widened to float64."""
    x, y = window.astype(np.float64).T
    hz = np.fft.rfftfreq(WINDOW, 1.0 / RATE)
    power = [np.abs(np.fft.rfft(a - a.mean())) ** 2 for a in (x, y)]
    return np.asarray([
        x.mean(), y.std(), x.min(), y.max(), np.percentile(x, 50), np.percentile(y, 33.3), np.percentile(x, 77.7),
        np.percentile(y, 95.5), np.percentile(x, 0),
        np.percentile(x, 100), np.abs(np.diff(y)).mean(), hz[power[0][1:].argmax() + 1],
        hz[power[1][1:].argmax() + 1], np.log1p(power[0][(hz >= 0.5) & (hz < 3)].sum()),
        np.log1p(power[1][(hz >= 0) & (hz < 12.5)].sum())])


def compiled_features(tmp_path: Path, sensor: SensorInput, windows: list[np.ndarray], steps: list[int]) -> np.ndarray:
    """Run the rendered <array>_features_input0 on each window (raw samples interleaved) with the host's gcc."""
    if shutil.which("gcc") is None:
        pytest.skip("gcc is not installed")
    channels = len(sensor.features)
    record = {"name": "f", "dtype": "float32", "shape": [1, channels], "dim_order": [0, 1], "scale": None,
              "zero_point": None, "qmin": None, "qmax": None}
    m = io_macros({"mode": "float", "layout": "nchw", "inputs": [record], "outputs": []})
    m.update(sensor_io.sensor_macros([{"sensor": sensor.to_json()}], {0: channels}))
    (tmp_path / "m.h").write_text(pte_header(b"\0" * 32, file_name="m.h", options=HeaderOptions(), macros=m))
    for name, text in zip(io_names("m.h"), render_io("m.h", HeaderOptions(), m), strict=True):
        (tmp_path / name).write_text(text)
    width = max(w.size for w in windows)
    (tmp_path / "w.bin").write_bytes(b"".join(np.pad(w.ravel(), (0, width - w.size)).astype(np.float32).tobytes()
                                              for w in windows))
    (tmp_path / "main.c").write_text(
        '#include <stdio.h>\n#include "m_io.h"\n'
        f"static const size_t steps[{len(steps)}] = {{{', '.join(map(str, steps))}}};\n"
        "int main(void) {\n"
        f"    static float raw[{width}];\n    static double f[{channels}];\n"
        '    FILE *in = fopen("w.bin", "rb"), *out = fopen("f.bin", "wb");\n'
        "    for (size_t r = 0; fread(raw, sizeof raw, 1, in) == 1; r++) {\n"
        "        model_pte_features_input0(raw, steps[r], f);\n        fwrite(f, sizeof f, 1, out);\n    }\n"
        "    return fclose(out) != 0 || fclose(in) != 0;\n}\n")
    strict = ["-std=c11", "-Wall", "-Wextra", "-Werror", "-Wpedantic", "-Wdouble-promotion", "-Wfloat-conversion"]
    subprocess.run(["gcc", *strict, "-O2", "main.c", "m_io.c", "-lm", "-o", "prog"], cwd=tmp_path, check=True)
    subprocess.run([str(tmp_path / "prog")], cwd=tmp_path, check=True)
    return np.frombuffer((tmp_path / "f.bin").read_bytes(), np.float64).reshape(len(windows), channels)


def test_the_declaration_names_zoos_window_statistics_and_says_what_is_wrong() -> None:
    assert InputSpec("f", (1, len(NAMES)), sensor=FEATURES).problems() == []
    assert FEATURES.raw_shape == (WINDOW, 2) and FEATURES.steps == 1
    assert FEATURES.to_json()["from_window"] is True
    assert "from_window" not in SensorInput(WINDOW, RATE, AXES, normalisation="none", features=NAMES).to_json()
    assert "log power <lo>-<hi> Hz" in WINDOW_STATISTICS

    def problems(features: tuple[str, ...], **kw: Any) -> list[str]:
        return SensorInput(WINDOW, RATE, AXES, normalisation=kw.pop("normalisation", "none"), features=features,
                           from_window=True, **kw).problems((1, len(features)))

    assert problems(("x kurtosis",)) == ["feature 'x kurtosis': 'kurtosis' is not one of zoo's window statistics "
                                         f"({', '.join(WINDOW_STATISTICS)}; q from 0 to 100, lo below hi)"]
    assert problems(("z mean",)) == ["feature 'z mean' does not start with one of the axes (x, y) and a space"]
    assert "'p101'" in problems(("x p101",))[0] and "'log power 3-1 Hz'" in problems(("y log power 3-1 Hz",))[0]
    assert problems(()) == ["from_window needs features: name each statistic of the window the network takes"]
    assert problems(("x mean",), normalisation="per-window") == [
        "per-window normalisation takes raw samples, not features computed from the window: use per-channel or none"]


def test_an_edited_manifests_unknown_statistic_is_refused_where_the_macros_are_made() -> None:
    record = FEATURES.to_json() | {"features": ["x mean", "x skew", *NAMES[2:]]}
    with pytest.raises(ValueError, match="input 0's sensor declaration: feature 'x skew': 'skew' is not one of"):
        sensor_io.sensor_macros([{"sensor": record}], {0: len(NAMES)})


def test_host_gcc_computes_numpys_statistics_padding_and_cutting_the_window(tmp_path: Path) -> None:
    rng = np.random.default_rng(7)
    t = np.arange(300) / RATE
    steps = [WINDOW, WINDOW, 60, 300]
    windows = [np.stack([np.sin(2 * np.pi * 1.3 * t[:n]) + 0.3 * rng.standard_normal(n),
                         np.cumsum(rng.standard_normal(n)) * 0.1 + 2.0], axis=1).astype(np.float32) for n in steps]
    windows[1][::7] = windows[1][3]  # ties among the order statistics
    # Enough interpolations above a weight of 0.5 that counting down from the upper value shows (1 in 200 or so).
    windows += [rng.standard_normal((WINDOW, 2)).astype(np.float32) * 5 for _ in range(400)]
    steps += [WINDOW] * 400
    got = compiled_features(tmp_path, FEATURES, windows, steps)
    for window, n, features in zip(windows, steps, got, strict=True):
        padded = np.zeros((WINDOW, 2), np.float32)
        padded[: min(n, WINDOW)] = window[:WINDOW]
        want = numpy_features(padded)
        spectral = np.asarray([name.endswith("Hz") and "log power" in name for name in NAMES])
        assert features[~spectral].tobytes() == want[~spectral].tobytes(), (features - want).tolist()
        np.testing.assert_allclose(features[spectral], want[spectral], rtol=1e-13, atol=0)


def test_the_project_feeds_raw_windows_of_their_own_lengths_and_computed_features_a_whole_window(
        tmp_path: Path) -> None:
    from zoo.registry.firmware.boards import BOARDS
    from zoo.registry.firmware.project import Samples, render_project

    def render(spec: InputSpec, record: dict[str, Any], windows: list[list[float]]) -> dict[str, str]:
        m = io_macros({"mode": "int8", "layout": "nchw", "inputs": [record], "outputs": []})
        m.update(sensor_io.sensor_macros([spec.to_json()], {0: m["input0_elements"]}))
        m.update(model="m", target="ethos-u55-128")
        project = render_project(stem="m", macros=m, array="model_pte", model_files={},
                                 samples=Samples([[w] for w in windows], [None] * len(windows), (True,)),
                                 board=BOARDS["corstone-300"], runtime_cache=tmp_path)
        if shutil.which("gcc") is not None:  # the samples' source compiles against the header
            (tmp_path / "m.h").write_text(pte_header(b"\0" * 32, file_name="m.h", options=HeaderOptions(), macros=m))
            for name in ("zoo_inputs.h", "zoo_inputs.c"):
                (tmp_path / name).write_bytes(project[name])
            subprocess.run(["gcc", "-std=c11", "-Wall", "-Werror", "-c", "zoo_inputs.c"], cwd=tmp_path, check=True)
        return {k: v.decode() for k, v in project.items() if k in ("main.cpp", "zoo_inputs.h", "zoo_inputs.c")}

    int8 = {"dtype": "int8", "scale": 0.05, "zero_point": 0, "qmin": -128, "qmax": 127}
    series = InputSpec("current", (1, 1, 1, 512), sensor=SensorInput(512, 3e4, ("current",), normalisation="per-window"))
    record = {"name": "current", "shape": [1, 1, 1, 512], "dim_order": [0, 1, 2, 3], **int8}
    files = render(series, record, [[0.5] * 700, [1.5] * 134])
    assert "model_pte_normalise_input0(zoo_input0[s], zoo_steps0[s], in0);" in files["main.cpp"]
    assert "const float zoo_input0[ZOO_SAMPLES][700] = {" in files["zoo_inputs.c"]
    assert "const size_t zoo_steps0[ZOO_SAMPLES] = {700, 134};" in files["zoo_inputs.c"]
    whole = render(series, record, [[0.5] * 512])
    assert "zoo_steps0" not in whole["zoo_inputs.c"] + whole["main.cpp"]  # as before: the declared window
    assert "model_pte_normalise_input0(zoo_input0[s], MODEL_PTE_INPUT0_SENSOR_STEPS, in0);" in whole["main.cpp"]

    features = InputSpec("f", (1, len(NAMES)), sensor=FEATURES)
    record = {"name": "f", "shape": [1, len(NAMES)], "dim_order": [0, 1], **int8}
    files = render(features, record, [[0.25] * (WINDOW * 2)])
    assert "model_pte_normalise_input0(zoo_input0[s], MODEL_PTE_INPUT0_SENSOR_WINDOW, in0);" in files["main.cpp"]
    assert "zoo_input0[ZOO_SAMPLES][MODEL_PTE_INPUT0_SENSOR_WINDOW * MODEL_PTE_INPUT0_SENSOR_AXES]" in files["zoo_inputs.h"]
    with pytest.raises(ValueError, match="input 0's raw windows must hold whole samples of 2 value"):
        render(features, record, [[0.25] * 7])


def test_no_name_of_a_manifest_reaches_the_code() -> None:
    evil = SensorInput(WINDOW, RATE, ("x */ int y; /*", "y"), normalisation="none",
                       features=("x */ int y; /* mean", "y std"), from_window=True)
    record = {"name": "f", "dtype": "float32", "shape": [1, 2], "dim_order": [0, 1], "scale": None,
              "zero_point": None, "qmin": None, "qmax": None}
    m = io_macros({"mode": "float", "layout": "nchw", "inputs": [record], "outputs": []})
    m.update(sensor_io.sensor_macros([{"sensor": evil.to_json()}], {0: 2}))
    header, source = render_io("m.h", HeaderOptions(), m)
    assert "int y" not in source and "/* MODEL_PTE_INPUT0_SENSOR_FEATURE0 */" in source
    assert "of the axes x * / int y; / *, y." in header  # the header's comment names them, and stays one


def test_raw_evaluation_windows_may_be_as_long_as_recorded_but_must_hold_the_declared_axes() -> None:
    from zoo import Dataset, ModelSpec, WeightsVariant
    from zoo.registry.numerics.samples import firmware_samples

    def spec(windows: list[np.ndarray]) -> ModelSpec:
        raw = Dataset(len(windows), "windows", lambda: [([w], 0) for w in windows], lambda: "raw")
        return ModelSpec("f-model", "1", "test", "anomaly-detection", (InputSpec("f", (1, len(NAMES)), sensor=FEATURES),),
                         build=lambda _: None, example_inputs=lambda: [], calibration=raw,
                         weights=(WeightsVariant("random", "seeded", "generated", "n/a", lambda: "seed 0"),),
                         sensor_evaluation=raw)

    io = {"inputs": [{"dim_order": [0, 1]}]}
    windows = [np.ones((WINDOW, 2), np.float32), np.ones((3, 2), np.float32), np.ones((WINDOW * 3, 2), np.float32)]
    samples = firmware_samples(spec(windows), io, 3)
    assert [len(s[0]) for s in samples.inputs] == [WINDOW * 2, 6, WINDOW * 6] and samples.raw == (True,)
    for wrong in (np.ones((WINDOW, 3), np.float32), np.ones((0, 2), np.float32), np.ones(WINDOW * 2, np.float32),
                  np.ones((WINDOW * 64 + 1, 2), np.float32)):
        with pytest.raises(ValueError, match=r"input 'f' is a window of shape .*, not \(samples, channels\) \[101, 2\]"):
            firmware_samples(spec([wrong]), io, 1)
