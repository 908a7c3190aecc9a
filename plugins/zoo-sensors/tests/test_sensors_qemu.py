"""har-cnn-spar's firmware in QEMU (issue 57): ``zoo firmware har-cnn-spar -t u55-128 --io int8`` built with
the stand-in for the NPU and run in ``mps3-an547``, fed SPAR's raw windows (g and rad/s, as the watch gives
them) through the generated ``model_pte_normalise_input0``. The Cortex-M55 normalises and quantizes each
window into the bytes the pack's Python and torch's quantize give; npu_model computes every output, bit for
bit the host interpreter's on those bytes; the predicted exercise is printed. The QEMU machinery is
tests/firmware/test_firmware_project.py's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from zoo_sensors import har, raw_windows

from tests.firmware.test_firmware_project import (  # noqa: F401  (sources, runtime_cache: fixtures)
    COMPUTED,
    _build,
    _fnv1a,
    _int8_outputs,
    _missing,
    _qemu,
    _records,
    runtime_cache,
    sources,
)
from zoo import Zoo

pytestmark = [pytest.mark.compile, pytest.mark.skipif(_missing() is not None, reason=str(_missing()))]

SAMPLES = 20
BOOT = ("input 0: 200 samples at 50 Hz of the axes ax ay az wx wy wz; per-channel normalisation: "
        "model_pte_normalise_input0\n")


def _firmware(zoo: Zoo, name: str, folder: Path) -> Any:
    """``zoo firmware NAME -t u55-128 --io int8`` with the first SAMPLES held-out samples: the artifact."""
    from zoo._api.firmware import write_firmware
    from zoo._options import FetchOptions

    art, _ = write_firmware(zoo, name, "u55-128", folder, FetchOptions(io="int8"), samples=SAMPLES)
    return art


def _run_on_the_stand_in(folder: Path, runtime_sources: dict[str, str], runtime: Path, boot: str) -> Any:
    """The project built with the stand-in and run in QEMU: it boots saying how it takes its input, and the
    stand-in's model of the NPU computes every output."""
    run = _qemu(_build(folder, runtime_sources, runtime, "-DZOO_NPU_STANDIN=ON"))
    assert run.returncode == 0 and "npu_standin failures: 0" in run.stdout, run.stdout[-3000:] + run.stderr[-2000:]
    assert boot in run.stdout, run.stdout[:2000]
    records = _records(run.stdout)
    assert all(r["computed"] for r in records if "result" in r) and not any("not_implemented" in r for r in records)
    return run


def _the_hosts_outputs(art: Any, run: Any, x: Any) -> list[bytes]:
    """The bytes the M55 handed the NPU are the pack's inputs ``x`` quantized by torch's rule, and every output
    is the host interpreter's on them: those outputs."""
    from zoo.registry import command_stream
    from zoo.registry.numerics.io import IoParams
    from zoo.registry.pte.vela_payload import find_payloads

    (param,) = IoParams.from_record(art.manifest.io or {}).inputs
    given = [param.quantize(x[s].reshape(-1)).numpy().tobytes() for s in range(SAMPLES)]
    assert [r["inputs"][0]["fnv1a"] for r in _records(run.stdout) if "inputs" in r] == [_fnv1a(g) for g in given]
    (payload,) = find_payloads(art.pte.read_bytes())
    host: list[bytes] = [command_stream.run(payload, [g])[0] for g in given]
    device = _int8_outputs(run.stdout)
    assert [device[s] for s in range(SAMPLES)] == host
    return host


def test_har_runs_spars_raw_windows_through_its_normalising_helper_on_the_stand_ins_model_of_the_npu(
        sensors_zoo: Zoo, sources: dict[str, str], runtime_cache: Path, tmp_path: Path) -> None:  # noqa: F811
    import torch

    folder = tmp_path / "fw"
    art = _firmware(sensors_zoo, har.NAME, folder)
    # The image holds the watch's own float32s, not the normalised window: the first sample's first values.
    (first,), _ = raw_windows.har_raw_held_out()[0]
    first = first.reshape(-1)
    assert "{" + ", ".join(f"{float(v).hex()}f" for v in first[:6]) in (folder / "zoo_inputs.c").read_text()
    assert "model_pte_normalise_input0(zoo_input0[s], MODEL_PTE_INPUT0_SENSOR_STEPS, in0);" in (
        folder / "main.cpp").read_text()

    run = _run_on_the_stand_in(folder, sources, runtime_cache, BOOT)
    x, labels = har.load("held_out")
    host = _the_hosts_outputs(art, run, x)  # and the arg-max printed is the host's
    predicted = [line.split() for line in run.stdout.splitlines() if line.startswith("A ")]
    assert len(predicted) == SAMPLES and all(line.endswith(COMPUTED) for line in run.stdout.splitlines()
                                             if line.startswith("A "))
    for s, (_, sample, arg, _, label, *_) in enumerate(predicted):
        scores = torch.frombuffer(bytearray(host[s]), dtype=torch.int8)
        assert (int(sample), int(arg), int(label)) == (s, int(scores.argmax()), int(labels[s])), predicted[s]
    correct = sum(int(p[2]) == int(p[4]) for p in predicted)
    assert f"samples {SAMPLES}, top-1 {correct} of {SAMPLES} labelled (npu_standin: computed by zoo's model of the NPU" \
        in run.stdout, run.stdout[-2000:]


AD_BOOT = ("input 0: 84 features of 200 samples at 50 Hz of the axes ax ay az wx wy wz; per-channel normalisation: "
           "model_pte_normalise_input0\n")


def test_ad_autoencoder_computes_its_84_features_from_spars_raw_windows_on_the_m55(
        sensors_zoo: Zoo, sources: dict[str, str], runtime_cache: Path, tmp_path: Path) -> None:  # noqa: F811
    """The M55 computes each window's 84 features (percentiles, spectrum by a direct DFT), standardises and
    quantizes them: the bytes are the pack's Python features quantized by torch's rule, and every
    reconstruction is the host interpreter's on them."""
    from zoo_sensors import ad_autoencoder

    folder = tmp_path / "fw"
    art = _firmware(sensors_zoo, ad_autoencoder.NAME, folder)
    (first,), _ = raw_windows.ad_autoencoder_raw_held_out()[0]
    assert "{" + ", ".join(f"{float(v).hex()}f" for v in first.reshape(-1)[:6]) in (folder / "zoo_inputs.c").read_text()
    assert "model_pte_normalise_input0(zoo_input0[s], MODEL_PTE_INPUT0_SENSOR_WINDOW, in0);" in (
        folder / "main.cpp").read_text()

    run = _run_on_the_stand_in(folder, sources, runtime_cache, AD_BOOT)
    _the_hosts_outputs(art, run, ad_autoencoder.load("held_out"))
    # Judged by its ROC-AUC, not a top-1: no arg-max against the novelty label, no top-1 line.
    decoded = [line.split()[:5] for line in run.stdout.splitlines() if line.startswith("A ")]
    assert decoded == [["A", str(s), "-", "label", "0"] for s in range(SAMPLES)] and "top-1 " not in run.stdout
    assert f"samples {SAMPLES}, outputs printed, no top-1: the model is not judged by one (npu_standin: computed by " \
        "zoo's model of the NPU, not the NPU); execute " in run.stdout, run.stdout[-2000:]


PLAID_BOOT = ("input 0: 512 samples at 30000 Hz of the axes current; per-window normalisation: "
              "model_pte_normalise_input0\n")


def test_appliance_id_standardises_plaids_currents_as_long_as_recorded_on_the_m55(
        sensors_zoo: Zoo, sources: dict[str, str], runtime_cache: Path, tmp_path: Path) -> None:  # noqa: F811
    """Each series in amperes, 100 to 1,344 samples, as PLAID recorded it: the M55 standardises it by its own
    statistics over all its samples, cuts or pads it to 512 and quantizes it into the pack's bytes."""
    from zoo_sensors.series import PLAID, load
    from zoo_sensors.series_models import APPLIANCE_ID

    folder = tmp_path / "fw"
    art = _firmware(sensors_zoo, APPLIANCE_ID.name, folder)
    lengths = [len(w) for (w,), _ in raw_windows.appliance_raw_held_out()[:SAMPLES]]
    assert f"const size_t zoo_steps0[ZOO_SAMPLES] = {{{', '.join(map(str, lengths))}}};" in (
        folder / "zoo_inputs.c").read_text()

    run = _run_on_the_stand_in(folder, sources, runtime_cache, PLAID_BOOT)
    x, labels = load(PLAID, "held_out")
    _the_hosts_outputs(art, run, x)
    predicted = [line.split() for line in run.stdout.splitlines() if line.startswith("A ")]
    assert [int(p[4]) for p in predicted] == labels[:SAMPLES].tolist()
