"""The sensors pack, fast tier: its data files by digest, its .ts reader, its snapshot, what it
registers, and the shipped weights against the digests their scripts recorded."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest
from zoo_sensors import ad_autoencoder, files, har, snapshot
from zoo_sensors.series_models import MODELS
from zoo_sensors.ts_format import read_ts

from tests.conftest import run_probed
from zoo import BuildError, Zoo
from zoo._errors import UsageError
from zoo.registry.npu.targets import TargetTable
from zoo.registry.request.io_boundary import Boundary, choose
from zoo.registry.request.precision import SPARSE24_QAT

TASKS = {"har-cnn-spar": "activity-recognition", "ad-autoencoder-spar": "anomaly-detection",
         "speaker-id-vowels": "speaker-identification", "appliance-id-plaid": "appliance-identification"}
RECORDED = {har.WEIGHTS_FILE: har.WEIGHTS_SHA256, ad_autoencoder.WEIGHTS_FILE: ad_autoencoder.WEIGHTS_SHA256,
            **{m.weights_file: m.weights_sha256 for m in MODELS.values()}}


@pytest.mark.parametrize("path", sorted(RECORDED), ids=lambda p: p.name)
def test_each_shipped_weights_file_is_the_one_its_script_wrote(path: Path) -> None:
    # If this fails after retraining: put the digest the script printed into the model's module.
    assert hashlib.sha256(path.read_bytes()).hexdigest() == RECORDED[path]


def test_a_data_file_with_other_bytes_is_refused_naming_both_digests_and_the_remedy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    name = "JapaneseVowels_TRAIN.ts"
    good = files.checked(name)
    shutil.copy(good, tmp_path / name)
    with (tmp_path / name).open("ab") as f:
        f.write(b"\n")
    found = hashlib.sha256((tmp_path / name).read_bytes()).hexdigest()
    monkeypatch.setenv(files.FOLDER_ENV, str(tmp_path))
    with pytest.raises(BuildError) as caught:
        files.checked(name)
    text = str(caught.value)
    assert f"zoo-sensors: {tmp_path / name} has sha256 {found}, expected {files.FILES[name].sha256}: refusing " \
           "other bytes" in text, text
    assert "pip download --no-deps sktime==1.2.0" in text and files.FOLDER_ENV in text, text


def test_a_missing_data_folder_says_what_to_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(files.FOLDER_ENV, str(tmp_path / "nowhere"))
    with pytest.raises(BuildError, match=r"watch_dataset\.npy is missing; `make setup` extracts it; or run pip "
                                         r"download --no-deps seglearn==1\.2\.5"):
        files.checked("watch_dataset.npy")


@pytest.mark.parametrize(("text", "error"), [
    ("@classLabel true a b\n@data\n1,2:3,4:a\n", None),
    ("@classLabel true a b\n1,2:a\n", "data before @data"),
    ("@classLabel false\n@data\n1,2:a\n", "declares no class labels"),
    ("@classLabel true a b\n@data\n1,2:c\n", "label 'c' or 1 dimensions not as declared"),
    ("@classLabel true a b\n@data\n1,x:a\n", "line 4: a value is not a number"),
    ("@classLabel true a b\n@data\n1,2:3:a\n", "dimensions of unequal length"),
    ("@missing true\n@classLabel true a\n@data\n1:a\n", "missing values"),
])
def test_the_ts_reader_reads_the_format_and_refuses_what_it_does_not(tmp_path: Path, text: str,
                                                                    error: str | None) -> None:
    path = tmp_path / "x.ts"
    path.write_text("#a comment\n" + text)
    if error is None:
        data = read_ts(path, owner="t")
        assert data.classes == ("a", "b") and data.labels.tolist() == [0]
        assert data.series[0].tolist() == [[1.0, 2.0], [3.0, 4.0]]
    else:
        with pytest.raises(BuildError, match=error):
            read_ts(path, owner="t")


@pytest.mark.slow
def test_the_snapshot_is_what_the_script_writes() -> None:
    # If this fails: python plugins/zoo-sensors/scripts/snapshot_sensors.py, then retrain.
    assert snapshot.dumps(snapshot.make()) == snapshot.FILE.read_text()
    spar = snapshot.read()["spar"]
    assert spar["windows"] == 2229 and spar["split"] == {"train": 1751, "calibration": 176, "held_out": 478}
    assert snapshot.read()["japanese-vowels"]["series"] == {"train": 270, "test": 370}
    assert snapshot.read()["plaid"]["series"] == {"train": 537, "test": 537}


def test_the_pack_registers_its_models_with_inputs_metrics_and_licences(sensors_zoo: Zoo) -> None:
    assert {n: sensors_zoo.model(n).task for n in TASKS} == TASKS
    specs = {n: sensors_zoo.model(n) for n in TASKS}
    assert [i.shape for i in specs["har-cnn-spar"].inputs] == [(1, 6, 1, 200)]
    assert [i.shape for i in specs["ad-autoencoder-spar"].inputs] == [(1, 84)]
    assert [i.shape for i in specs["speaker-id-vowels"].inputs] == [(1, 12, 1, 29)]
    assert [i.shape for i in specs["appliance-id-plaid"].inputs] == [(1, 1, 1, 512)]
    assert "50 Hz" in specs["har-cnn-spar"].description and "ax, ay, az, wx, wy, wz" in specs["har-cnn-spar"].description
    assert "not machine-fault detection" in specs["ad-autoencoder-spar"].description
    assert specs["har-cnn-spar"].load_labels() == ("PEN", "ABD", "FEL", "IR", "ER", "TRAP", "ROW")
    assert len(specs["appliance-id-plaid"].load_labels() or ()) == 11
    for name, spec in specs.items():
        (metric,) = spec.metrics
        assert metric.max_drop == (0.02 if name == "ad-autoencoder-spar" else 1.0)
        assert spec.weights_names[1] == "random" and "Apache-2.0; training data:" in spec.weights_variant(None).licence
    assert spec.evaluation is not None and spec.evaluation.size == 537
    assert "BSD-3-Clause" in specs["har-cnn-spar"].weights_variant(None).licence


def test_the_multichannel_models_offer_nhwc_so_int8_io_needs_no_input_transpose(sensors_zoo: Zoo) -> None:
    """Issue 59: with NCHW only, ``--io int8`` began har-cnn-spar's u85-256 program with a 5,859-cycle transpose."""
    u85 = TargetTable().resolve("u85-256")
    offered = {n: sensors_zoo.model(n).layouts for n in TASKS}
    assert offered == {"har-cnn-spar": ("nchw", "nhwc"), "speaker-id-vowels": ("nchw", "nhwc"),
                       "ad-autoencoder-spar": ("nchw",), "appliance-id-plaid": ("nchw",)}
    for name in ("har-cnn-spar", "speaker-id-vowels"):
        assert choose(sensors_zoo.model(name), u85, "int8", "nhwc") == Boundary("int8", "nhwc")
    for name in ("ad-autoencoder-spar", "appliance-id-plaid"):  # (1, 84) and one channel: NHWC is NCHW's bytes
        with pytest.raises(UsageError, match="use --layout nchw"):
            choose(sensors_zoo.model(name), u85, "int8", "nhwc")


def test_registering_the_pack_imports_neither_torch_nor_numpy() -> None:
    probed = run_probed("-p", "zoo_sensors.plugin", "list", "--json", watch=("torch", "numpy", "safetensors"))
    assert probed.returncode == 0, probed.stderr
    assert probed.loaded == []
    listed = {m["name"]: m["task"] for m in json.loads(probed.stdout)}
    assert {n: listed.get(n) for n in TASKS} == TASKS


@pytest.mark.stack
def test_every_spec_builds_a_model_that_takes_its_declared_input(sensors_zoo: Zoo) -> None:
    import torch

    for name in TASKS:
        spec = sensors_zoo.model(name)
        sample = spec.example_inputs()
        assert [tuple(t.shape) for t in sample] == [i.shape for i in spec.inputs], name
        with torch.no_grad():
            out = spec.build(spec.weights_names[0])(*sample)
        assert torch.isfinite(out).all(), name


def test_ad_autoencoder_fine_tunes_its_recipes_on_the_normal_windows_it_was_trained_on(sensors_zoo: Zoo) -> None:
    """Issue 59: every trained model with reachable training data fine-tunes ``sparse24``; without
    ``training`` the autoencoder's 2:4 pruning was applied after training, untuned."""
    training = sensors_zoo.model("ad-autoencoder-spar").training
    assert training is not None and training.size == snapshot.read()["spar"]["novelty"]["split"]["train"]
    assert training.identity() == ad_autoencoder.identity("train")
    request = sensors_zoo.request("ad-autoencoder-spar", "u85-256", io="int8", weights_transform="sparse24")
    assert request.precision.qat == SPARSE24_QAT
