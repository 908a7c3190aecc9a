"""zoo-sensors' inputs as firmware takes them (issue 57): each model declares its window, rate, axes
and normalisation, and har-cnn-spar's ``normalise_input0``, compiled by the host's gcc from what
zoo renders, turns SPAR's raw window bytes into what the pack's Python hands the network;
ad-autoencoder-spar's computes the 84 features from them first."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from zoo_sensors import ad_autoencoder, har, novelty, spar
from zoo_sensors.series_models import APPLIANCE_ID, SPEAKER_ID

from zoo.registry.firmware.c_header import HeaderOptions, pte_header
from zoo.registry.firmware.header_macros import io_macros
from zoo.registry.firmware.model_io import io_names, render_io
from zoo.registry.firmware.sensor_io import sensor_macros

# The input of `zoo fetch har-cnn-spar -t u55-128 --io int8` (pipeline 14), as its manifest records it.
HAR_SCALE, HAR_ZERO_POINT = 0.06158645823597908, 14
# And of `zoo firmware ad-autoencoder-spar -t u55-128 --io int8`, as its header gives it: the float32 scale
# (MODEL_PTE_INPUT0_SCALE_BITS 0x3d4f35ef), whose inverse rounds to the header's INV_SCALE_BITS 0x419e2379.
AD_SCALE, AD_ZERO_POINT = 0.050588544458150864, -15
# And of `zoo firmware appliance-id-plaid -t u55-128 --io int8` (SCALE_BITS 0x3d7a3422).
PLAID_SCALE, PLAID_ZERO_POINT = 0.06108487397432327, -28


def test_each_model_declares_its_window_rate_axes_and_normalisation() -> None:
    declared = {s.name: s.inputs[0].sensor for s in (har.spec(), ad_autoencoder.spec(), SPEAKER_ID.spec(),
                                                    APPLIANCE_ID.spec())}
    got = {name: (s.window, s.rate_hz, len(s.axes), s.normalisation, len(s.channels), s.steps)
           for name, s in declared.items() if s is not None}
    assert got == {"har-cnn-spar": (200, 50, 6, "per-channel", 6, 200),
                   "ad-autoencoder-spar": (200, 50, 6, "per-channel", 84, 1),
                   "speaker-id-vowels": (29, 156.25, 12, "per-channel", 12, 29),
                   "appliance-id-plaid": (512, 30_000.0, 1, "per-window", 1, 512)}
    assert declared["ad-autoencoder-spar"].features == spar.FEATURE_NAMES  # type: ignore[union-attr]
    assert declared["ad-autoencoder-spar"].from_window  # type: ignore[union-attr]
    assert declared["ad-autoencoder-spar"].raw_shape == (200, 6)  # type: ignore[union-attr]
    assert declared["har-cnn-spar"].units == ("g", "g", "g", "rad/s", "rad/s", "rad/s")  # type: ignore[union-attr]


@pytest.mark.slow  # reads SPAR's 18 MB file and windows it (about 0.7 s), then gcc
@pytest.mark.parametrize("dtype", ["int8", "float32"])
def test_host_gcc_normalises_spars_raw_windows_as_the_pack_does(dtype: str, tmp_path: Path) -> None:
    if shutil.which("gcc") is None:
        pytest.skip("gcc is not installed")
    spec = har.spec().inputs[0]
    integer = dtype == "int8"
    record = {"name": "imu", "dtype": dtype, "shape": [1, 6, 1, 200], "dim_order": [0, 1, 2, 3],
              "scale": HAR_SCALE if integer else None, "zero_point": HAR_ZERO_POINT if integer else None,
              "qmin": -128 if integer else None, "qmax": 127 if integer else None}
    macros = io_macros({"mode": dtype if integer else "float", "layout": "nchw", "inputs": [record], "outputs": []})
    macros.update(sensor_macros([spec.to_json()], {0: macros["input0_elements"]}))
    (tmp_path / "m.h").write_text(pte_header(b"\0" * 32, file_name="m.h", options=HeaderOptions(), macros=macros))
    for name, text in zip(io_names("m.h"), render_io("m.h", HeaderOptions(), macros), strict=True):
        (tmp_path / name).write_text(text)

    raw = spar.windows()[0]  # (N, 6, 200) float32: the watch's g and rad/s
    pack = har._prepared()[0][:, :, 0, :]  # what the network is fed, by the pack's own Python
    picked = np.arange(0, len(raw), 37)  # 61 windows of every subject and exercise
    interleaved = np.ascontiguousarray(raw[picked].transpose(0, 2, 1))  # sample by sample, as a FIFO gives them
    (tmp_path / "windows.bin").write_bytes(interleaved.tobytes())
    ctype = "int8_t" if integer else "float"
    (tmp_path / "main.c").write_text(
        '#include <stdio.h>\n#include "m_io.h"\n'
        "int main(void) {\n"
        "    static float raw[200 * 6];\n"
        f"    static {ctype} q[MODEL_PTE_INPUT0_ELEMENTS];\n"
        "    FILE *in = fopen(\"windows.bin\", \"rb\");\n"
        "    FILE *out = fopen(\"q.bin\", \"wb\");\n"
        "    while (fread(raw, sizeof raw, 1, in) == 1) {\n"
        "        model_pte_normalise_input0(raw, 200, q);\n"
        "        fwrite(q, sizeof q, 1, out);\n"
        "    }\n"
        "    return fclose(out) != 0 || fclose(in) != 0;\n}\n")
    strict = ["-std=c11", "-Wall", "-Wextra", "-Werror", "-Wdouble-promotion", "-Wfloat-conversion"]
    subprocess.run(["gcc", *strict, "-O2", "main.c", "m_io.c", "-lm", "-o", "prog"], cwd=tmp_path, check=True)
    subprocess.run([str(tmp_path / "prog")], cwd=tmp_path, check=True)
    got = (tmp_path / "q.bin").read_bytes()

    want = pack[picked]
    if integer:  # torch's quantized_decomposed rule, which the program's quantize runs (model_io)
        q = np.rint(want * np.float32(1.0 / HAR_SCALE)) + np.float32(HAR_ZERO_POINT)
        want = np.clip(q, -128, 127).astype(np.int8)
    assert len(got) == want.nbytes
    mismatched = int((np.frombuffer(got, want.dtype) != want.ravel()).sum())
    assert mismatched == 0, f"{mismatched} of {want.size} values differ from the pack's"


@pytest.mark.slow  # reads SPAR's 18 MB file and windows it (about 0.7 s)
def test_har_firmware_is_fed_the_watchs_raw_windows_in_the_evaluation_order() -> None:
    from zoo_sensors.raw_windows import har_spec

    from zoo.registry.numerics.samples import firmware_samples

    record = {"dim_order": [0, 1, 2, 3]}
    samples = firmware_samples(har_spec(), {"inputs": [record]}, 3)
    raw, y, _ = spar.windows()
    held_out = spar.subject_split(spar.HELD_OUT_SUBJECTS)["held_out"][:3]
    assert samples.raw == (True,)
    assert [s[0] for s in samples.inputs] == [raw[k].T.ravel().tolist() for k in held_out]  # sample by sample
    assert samples.labels == y[held_out].tolist() == har.load("held_out")[1][:3].tolist()


def _compiled(tmp_path: Path, record: dict[str, Any], spec: Any, main: str) -> None:
    macros = io_macros({"mode": "int8", "layout": "nchw", "inputs": [record], "outputs": []})
    macros.update(sensor_macros([spec.to_json()], {0: macros["input0_elements"]}))
    (tmp_path / "m.h").write_text(pte_header(b"\0" * 32, file_name="m.h", options=HeaderOptions(), macros=macros))
    for name, text in zip(io_names("m.h"), render_io("m.h", HeaderOptions(), macros), strict=True):
        (tmp_path / name).write_text(text)
    (tmp_path / "main.c").write_text(main)
    strict = ["-std=c11", "-Wall", "-Wextra", "-Werror", "-Wdouble-promotion", "-Wfloat-conversion"]
    subprocess.run(["gcc", *strict, "-O2", "main.c", "m_io.c", "-lm", "-o", "prog"], cwd=tmp_path, check=True)
    subprocess.run([str(tmp_path / "prog")], cwd=tmp_path, check=True)


@pytest.mark.slow  # reads SPAR's 18 MB file and windows it (about 0.7 s), then gcc and 557 windows' DFTs (2 s)
def test_host_gcc_computes_ad_autoencoders_84_features_from_spars_raw_windows_as_the_pack_does(tmp_path: Path) -> None:
    if shutil.which("gcc") is None:
        pytest.skip("gcc is not installed")
    record = {"name": "features", "dtype": "int8", "shape": [1, 84], "dim_order": [0, 1], "scale": AD_SCALE,
              "zero_point": AD_ZERO_POINT, "qmin": -128, "qmax": 127}
    raw = spar.windows()[0][::4]  # 557 windows of every subject and exercise
    (tmp_path / "windows.bin").write_bytes(np.ascontiguousarray(raw.transpose(0, 2, 1)).tobytes())
    _compiled(tmp_path, record, ad_autoencoder.spec().inputs[0],
              '#include <stdio.h>\n#include "m_io.h"\n'
              "int main(void) {\n"
              "    static float raw[200 * 6];\n    static double f[84];\n    static int8_t q[84];\n"
              '    FILE *in = fopen("windows.bin", "rb"), *out = fopen("f.bin", "wb"), *qs = fopen("q.bin", "wb");\n'
              "    while (fread(raw, sizeof raw, 1, in) == 1) {\n"
              "        model_pte_features_input0(raw, 200, f);\n        fwrite(f, sizeof f, 1, out);\n"
              "        model_pte_normalise_input0(raw, 200, q);\n        fwrite(q, sizeof q, 1, qs);\n    }\n"
              "    return fclose(out) != 0 || fclose(in) != 0 || fclose(qs) != 0;\n}\n")
    got = np.frombuffer((tmp_path / "f.bin").read_bytes(), np.float64).reshape(len(raw), 84)
    want = spar.features(raw)
    spectral = np.asarray(["log power" in name for name in spar.FEATURE_NAMES])
    assert got[:, ~spectral].tobytes() == want[:, ~spectral].tobytes()  # 66 of 84, the dominant frequency too
    np.testing.assert_allclose(got[:, spectral], want[:, spectral], rtol=1e-13, atol=0)  # a DFT, not pocketfft

    sensor = ad_autoencoder.sensor()
    mean, std = np.asarray(sensor.mean), np.asarray(sensor.std)
    pack = ((want - mean) / std).astype(np.float32)  # novelty.standardised's rule
    q = np.clip(np.rint(pack * np.float32(1.0 / AD_SCALE)) + np.float32(AD_ZERO_POINT), -128, 127).astype(np.int8)
    mismatched = int((np.frombuffer((tmp_path / "q.bin").read_bytes(), np.int8) != q.ravel()).sum())
    assert mismatched == 0, f"{mismatched} of {q.size} int8 inputs differ from the pack's"


@pytest.mark.slow  # reads SPAR's 18 MB file and windows it (about 0.7 s)
def test_ad_autoencoder_firmware_is_fed_the_watchs_raw_windows_in_the_evaluation_order() -> None:
    from zoo_sensors.raw_windows import ad_autoencoder_spec

    from zoo.registry.numerics.samples import firmware_samples

    samples = firmware_samples(ad_autoencoder_spec(), {"inputs": [{"dim_order": [0, 1]}]}, 3)
    held_out = novelty.split_indices()["held_out"][:3]
    assert samples.raw == (True,)
    assert [s[0] for s in samples.inputs] == [spar.windows()[0][k].T.ravel().tolist() for k in held_out]
    assert samples.labels == novelty.held_out_labels()[:3].tolist()


@pytest.mark.slow  # parses PLAID's two .ts files (about 1 s)
def test_appliance_firmware_is_fed_plaids_currents_as_long_as_recorded() -> None:
    from zoo_sensors.raw_windows import appliance_spec
    from zoo_sensors.series import PLAID, load, raw

    from zoo.registry.numerics.samples import firmware_samples

    samples = firmware_samples(appliance_spec(), {"inputs": [{"dim_order": [0, 1, 2, 3]}]}, 5)
    recorded = raw(PLAID)["test"].series[:5]
    assert samples.raw == (True,)
    assert [s[0] for s in samples.inputs] == [s[0].astype(np.float32).tolist() for s in recorded]
    assert len({len(s[0]) for s in samples.inputs}) > 1  # not cut to the window: the helper's statistics see all
    assert samples.labels == load(PLAID, "held_out")[1][:5].tolist()


@pytest.mark.slow  # parses PLAID's two .ts files (about 1 s), then gcc
def test_host_gcc_standardises_plaids_recorded_currents_as_the_pack_does_but_for_float32s_rounding(
        tmp_path: Path) -> None:
    """The helper takes float32 amperes; the pack standardises PLAID's decimal text parsed as float64, none of
    whose values is a float32. So 40 % of the float32 inputs differ in their last bit, and at the u55-128
    build's scale one int8 input of 274,944 crosses a rounding boundary: series 527, sample 412, by one step."""
    if shutil.which("gcc") is None:
        pytest.skip("gcc is not installed")
    from zoo_sensors.raw_windows import appliance_raw_held_out
    from zoo_sensors.series import PLAID, arrays

    record = {"name": "current", "dtype": "int8", "shape": [1, 1, 1, 512], "dim_order": [0, 1, 2, 3],
              "scale": PLAID_SCALE, "zero_point": PLAID_ZERO_POINT, "qmin": -128, "qmax": 127}
    series = [w for (w,), _ in appliance_raw_held_out()]
    (tmp_path / "series.bin").write_bytes(b"".join(np.int32(len(w)).tobytes() + w.tobytes() for w in series))
    _compiled(tmp_path, record, APPLIANCE_ID.spec().inputs[0],
              '#include <stdio.h>\n#include "m_io.h"\n'
              "int main(void) {\n"
              "    static float raw[4096];\n    static int8_t q[512];\n    int32_t n;\n"
              '    FILE *in = fopen("series.bin", "rb"), *out = fopen("q.bin", "wb");\n'
              "    while (fread(&n, sizeof n, 1, in) == 1 && fread(raw, sizeof *raw, (size_t)n, in) == (size_t)n) {\n"
              "        model_pte_normalise_input0(raw, (size_t)n, q);\n        fwrite(q, sizeof q, 1, out);\n    }\n"
              "    return fclose(out) != 0 || fclose(in) != 0;\n}\n")
    got = np.frombuffer((tmp_path / "q.bin").read_bytes(), np.int8).reshape(len(series), 512)
    pack = arrays(PLAID)["held_out"][0][:, 0, 0, :]
    want = np.clip(np.rint(pack * np.float32(1.0 / PLAID_SCALE)) + np.float32(PLAID_ZERO_POINT), -128, 127)
    differ = np.argwhere(got != want.astype(np.int8))
    assert differ.tolist() == [[527, 412]] and abs(int(got[527, 412]) - int(want[527, 412])) == 1, differ[:5]


def test_the_firmware_scores_a_top_1_only_for_the_model_judged_by_one(tmp_path: Path) -> None:
    """har-cnn-spar declares zoo.top1: its firmware prints each sample's class against the label and the top-1
    line. ad-autoencoder-spar is judged by its reconstruction's ROC-AUC: the arg-max of 84 reconstructed features
    against the novelty label meant nothing, so its firmware prints the outputs and says there is no top-1.
    The specs' own declarations, on a few synthetic raw windows (no SPAR read)."""
    from dataclasses import replace

    from zoo import Dataset
    from zoo.registry.firmware.boards import BOARDS
    from zoo.registry.firmware.project import render_project
    from zoo.registry.numerics.samples import firmware_samples

    int8 = {"dtype": "int8", "scale": 0.05, "zero_point": 0, "qmin": -128, "qmax": 127}
    window = np.linspace(-1, 1, 200 * 6, dtype=np.float32).reshape(200, 6)
    mains = {}
    for spec, shape, outputs in ((har.spec(), [1, 6, 1, 200], 5), (ad_autoencoder.spec(), [1, 84], 84)):
        items = [([window], 0), ([window * 2], 1)]
        raw = Dataset(2, "synthetic raw windows", lambda items=items: items, lambda: "synthetic")
        record = {"name": "x", "shape": shape, "dim_order": list(range(len(shape))), **int8}
        io = {"mode": "int8", "layout": "nchw", "inputs": [record],
              "outputs": [{"name": "y", "shape": [1, outputs], "dim_order": [0, 1], **int8}]}
        macros = {**io_macros(io), **sensor_macros([spec.inputs[0].to_json()], {0: int(np.prod(shape))}),
                  "model": spec.name, "target": "ethos-u55-128"}
        samples = firmware_samples(replace(spec, sensor_evaluation=raw), io, 2)
        project = render_project(stem="m", macros=macros, array="model_pte", model_files={}, samples=samples,
                                 board=BOARDS["corstone-300"], runtime_cache=tmp_path)
        mains[spec.name] = project["main.cpp"].decode()
    har_main, ad_main = mains[har.NAME], mains[ad_autoencoder.NAME]
    assert "top-1 %u" not in ad_main and "model_pte_argmax_output0" not in ad_main, ad_main[-2500:]
    assert '"samples %u, outputs printed, no top-1: the model is not judged by one%s; execute %" PRIu64 " ticks per ' \
        'run at %u Hz\\n", ZOO_SAMPLES,\n                ZOO_STANDIN_DELEGATES ? ' in ad_main
    assert 'std::printf("A %u - label %d ticks %" PRIu64 "%s\\n", s, zoo_labels[s], b - a, npu_mark);' in ad_main
    assert '"samples %u, top-1 %u of %u labelled%s; execute %" PRIu64 " ticks per run at %u Hz\\n", ZOO_SAMPLES,' \
        in har_main and "correct, labelled," in har_main
    assert "(int)arg == zoo_labels[s]" in har_main and '"A %u %u label %d ticks' in har_main
