"""silero-vad, fast tier: the network against silero-vad's own model, the shipped clips and
their labels and split, and the spec's registration (torch-free)."""

from __future__ import annotations

import hashlib
import importlib.util
import io
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from zoo_audio import silero_net as net
from zoo_audio import vad

from zoo.registry.catalog.plugin_loader import LoadOptions, Registry

PACK = Path(__file__).resolve().parents[1]
PLUGIN = "from zoo import hookimpl\nfrom zoo_audio import vad\n\n@hookimpl\ndef register_models(register):\n    register(vad.spec())\n"


@pytest.fixture
def vad_plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A plugin module that registers silero-vad alone, importable by name."""
    (tmp_path / "vad_only.py").write_text(PLUGIN)
    monkeypatch.syspath_prepend(str(tmp_path))
    return "vad_only"


def meta() -> dict[str, Any]:
    return json.loads(vad.CLIPS_META.read_text())  # type: ignore[no-any-return]


# --- registration -----------------------------------------------------------------------------


def test_registers_with_its_metrics_data_and_licence(vad_plugin: str) -> None:
    reg = Registry(stderr=io.StringIO()).load(LoadOptions(modules=(vad_plugin,), entry_points=False))
    assert reg.plugins[0].status == "ok", reg.plugins[0].error
    spec = reg.catalog.get("silero-vad")
    assert spec.task == "voice-activity-detection"
    assert [i.shape for i in spec.inputs] == [(1, 576), (1, 128), (1, 128)]
    assert [m.name for m in spec.metrics] == ["roc_auc", "f1"]
    w = spec.weights_variant(None)
    assert w.licence.startswith("MIT") and "silero-vad 6.2.3" in w.origin
    assert set(w.references()) == {"roc_auc", "f1"}
    assert w.identity() == "sha256:" + hashlib.sha256(vad.WEIGHTS_FILE.read_bytes()).hexdigest()
    m = meta()
    assert spec.evaluation is not None and spec.evaluation.size == m["evaluation_steps"] <= 1000
    assert spec.calibration.size == m["calibration_steps"]
    assert spec.evaluation.identity() != spec.calibration.identity()


def test_registering_imports_neither_torch_nor_numpy(vad_plugin: str, tmp_path: Path) -> None:
    code = ("import sys, io\nfrom zoo.registry.catalog.plugin_loader import LoadOptions, Registry\n"
            f"reg = Registry(stderr=io.StringIO()).load(LoadOptions(modules=({vad_plugin!r},), entry_points=False))\n"
            "spec = reg.catalog.get('silero-vad'); spec.summary(); spec.weights_variant(None).identity()\n"
            "spec.evaluation.identity()\n"
            "print(sorted(m for m in ('torch', 'numpy', 'safetensors') if m in sys.modules))\n")
    paths = [str(tmp_path), *sys.path]
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={"PYTHONPATH": ":".join(paths), "PATH": ""})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


def test_a_missing_weights_file_is_named(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from zoo import BuildError

    monkeypatch.setattr(vad, "WEIGHTS_FILE", tmp_path / "gone.safetensors")
    with pytest.raises(BuildError, match=r"silero-vad: the shipped file .*gone.safetensors is missing; reinstall"):
        vad._weights_identity()
    with pytest.raises(BuildError, match="no weights variant 'random'; choose silero-v6"):
        vad._build("random")


# --- the data ---------------------------------------------------------------------------------


def test_the_shipped_clips_are_the_ones_their_record_names() -> None:
    import numpy as np

    m = meta()
    assert hashlib.sha256(vad.CLIPS_FILE.read_bytes()).hexdigest() == m["sha256"]
    with np.load(vad.CLIPS_FILE) as data:
        audio, labels, calibration = data["audio"], data["labels"], data["calibration"]
    assert audio.dtype == np.int16 and audio.shape == (len(m["clips"]), m["steps"] * net.CHUNK)
    assert labels.shape == (len(m["clips"]), m["steps"]) and set(np.unique(labels)) == {0, 1}
    assert [bool(c) for c in calibration] == [c["split"] == "calibration" for c in m["clips"]]
    for clip, lab, info in zip(audio, labels, m["clips"], strict=True):
        start, end = info["speech_start"], info["speech_start"] + info["speech_samples"]
        assert int(lab.sum()) == info["speech_steps"]
        speech_steps = np.flatnonzero(lab)  # labelled speech lies within the utterance
        assert speech_steps[0] * net.CHUNK >= start - net.CHUNK and (speech_steps[-1] + 1) * net.CHUNK <= end + net.CHUNK
        if info["condition"] == "silence":
            assert not clip[:start].any() and not clip[end:].any()
        else:
            assert clip[:start].std() > 0


@pytest.mark.slow
def test_the_split_is_one_clip_per_condition_by_sha256_of_its_text() -> None:
    sys.path.insert(0, str(PACK / "scripts"))
    try:
        import make_vad_clips as maker  # type: ignore[import-not-found,unused-ignore]
    finally:
        sys.path.pop(0)
    m = meta()
    texts, conditions = [c["text"] for c in m["clips"]], [c["condition"] for c in m["clips"]]
    assert maker.split_of(texts, conditions) == [c["split"] for c in m["clips"]]
    assert sorted(c for c, s in zip(conditions, maker.split_of(texts, conditions), strict=True)
                  if s == "calibration") == sorted(maker.CONDITIONS)
    # reversing the order of the clips picks the same sentences
    flipped = maker.split_of(texts[::-1], conditions[::-1])[::-1]
    assert flipped == [c["split"] for c in m["clips"]]


@pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="espeak-ng is not installed (apt-get install espeak-ng)")
@pytest.mark.slow
def test_the_script_makes_the_same_bytes_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sys.path.insert(0, str(PACK / "scripts"))
    try:
        import make_vad_clips as maker  # type: ignore[import-not-found,unused-ignore]
    finally:
        sys.path.pop(0)
    if maker.espeak_version() != meta()["espeak_ng"]:
        pytest.skip(f"espeak-ng {maker.espeak_version()} is not the {meta()['espeak_ng']} the clips were made with")
    monkeypatch.setattr(maker, "OUT", tmp_path)
    maker.main()
    assert (tmp_path / "clips.npz").read_bytes() == vad.CLIPS_FILE.read_bytes()
    again = json.loads((tmp_path / "clips.json").read_text())
    assert {k: v for k, v in again.items() if k not in ("numpy", "scipy")} == {
        k: v for k, v in meta().items() if k not in ("numpy", "scipy")}


@pytest.mark.stack
def test_evaluation_items_carry_the_float_state_and_pass_the_label_check(vad_plugin: str) -> None:
    import torch

    from zoo.registry import numerics

    reg = Registry(stderr=io.StringIO()).load(LoadOptions(modules=(vad_plugin,), entry_points=False))
    spec = reg.catalog.get("silero-vad")
    labelled = numerics.load_labelled(spec, None, "model 'silero-vad'")
    assert labelled is not None and len(labelled.items) == spec.evaluation.size  # type: ignore[union-attr]
    (audio, h, c), label = labelled.items[0]
    assert not h.any() and not c.any() and label in (0, 1)  # a clip's first step starts from zero
    model = spec.build("silero-v6")
    assert f"{sum(p.numel() for p in model.parameters()):,} parameters" in spec.description
    with torch.no_grad():
        _, h1, c1 = model(audio, h, c)
    (_, h_next, c_next), _ = labelled.items[1]
    assert torch.equal(h1, h_next) and torch.equal(c1, c_next)  # the next item holds the state this step made
    assert len(spec.calibration.load()) == spec.calibration.size


# --- the network ------------------------------------------------------------------------------


def test_windows_prepend_the_previous_steps_context() -> None:
    import numpy as np

    audio = np.arange(1, 1201, dtype=np.float32)
    rows = net.windows(audio)
    assert rows.shape == (3, net.WINDOW)
    assert not rows[0, :net.CONTEXT].any() and rows[0, net.CONTEXT] == 1
    assert list(rows[1, :net.CONTEXT]) == list(audio[net.CHUNK - net.CONTEXT:net.CHUNK])
    assert rows[2, net.CONTEXT + 1200 - 2 * net.CHUNK:].sum() == 0  # the last chunk is zero-padded


@pytest.mark.stack
@pytest.mark.skipif(importlib.util.find_spec("silero_vad") is None,
                    reason="silero-vad is not installed (the pack's test extra installs it)")
def test_the_network_matches_silero_vads_own_model_on_every_clip() -> None:
    import numpy as np
    import silero_vad  # type: ignore[import-not-found,unused-ignore]
    import torch

    jit = silero_vad.load_silero_vad()
    model = vad._build(vad.WEIGHTS)
    audio, _ = vad.clips("evaluation")
    for clip in audio[:3]:
        jit.reset_states()
        with torch.no_grad():
            want = [float(jit(torch.from_numpy(r[net.CONTEXT:].copy()).reshape(1, net.CHUNK), 16000))
                    for r in net.windows(clip)]
        got, _ = net.run_clip(model, clip)
        assert np.abs(got - np.asarray(want)).max() < 1e-5
