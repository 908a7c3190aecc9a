"""Makes the VAD's labelled audio: zoo_audio/data/vad/clips.npz and clips.json.

Each clip is one English sentence spoken by espeak-ng, resampled from 22,050 Hz
to 16 kHz (scipy's polyphase filter, 320/441), scaled to a seeded peak level and
placed at a seeded offset in 104 steps of 512 samples (3.328 s) of silence
(digital zero) or of white noise at 10 dB or 0 dB SNR (noise power against the
utterance's mean power over its speech steps). A step is labelled speech (1)
when the clean utterance's energy in that step is within LABEL_DB of the
utterance's loudest step, before any noise is added.

The split is fixed by the sentences' sha256: the clip whose text hashes lowest in
each condition calibrates; the rest evaluate. The clips are shipped, so builds do
not depend on the espeak-ng version; clips.json records that version, the
settings and clips.npz's sha256. The npz is written with fixed zip timestamps, so
running the script again with the same espeak-ng and scipy gives the same bytes.

Run: python plugins/zoo-audio/scripts/make_vad_clips.py   (needs espeak-ng on PATH)
"""

from __future__ import annotations

import hashlib
import io
import json
import subprocess
import tempfile
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import scipy  # type: ignore[import-untyped]
from scipy.io import wavfile  # type: ignore[import-untyped]
from scipy.signal import resample_poly  # type: ignore[import-untyped]

OUT = Path(__file__).resolve().parents[1] / "src" / "zoo_audio" / "data" / "vad"
RATE = 16_000
CHUNK = 512
STEPS = 104
SAMPLES = STEPS * CHUNK
LABEL_DB = -30.0
SEED = 21
# Harvard sentences (IEEE 1969, public domain), list 1 and 2.
SENTENCES = (
    "The birch canoe slid on the smooth planks.",
    "Glue the sheet to the dark blue background.",
    "It's easy to tell the depth of a well.",
    "These days a chicken leg is a rare dish.",
    "Rice is often served in round bowls.",
    "The juice of lemons makes fine punch.",
    "The box was thrown beside the parked truck.",
    "The hogs were fed chopped corn and garbage.",
    "Four hours of steady work faced us.",
    "A large size in stockings is hard to sell.",
    "The boy was there when the sun rose.",
    "A rod is used to catch pink salmon.",
)
VOICES = ("en-us", "en-gb", "en+f3", "en-us+m4", "en-gb-scotland", "en+f2")
CONDITIONS = ("silence", "noise-10db", "noise-0db")


def espeak_version() -> str:
    """``1.51`` from ``eSpeak NG text-to-speech: 1.51  Data at: ...``."""
    said = subprocess.run(["espeak-ng", "--version"], check=True, capture_output=True, text=True).stdout
    return said.split("text-to-speech:")[1].split()[0]


def speak(text: str, voice: str, speed: int) -> Any:
    """The sentence at 16 kHz, float64 in [-1, 1]."""
    with tempfile.TemporaryDirectory() as tmp:
        wav = Path(tmp) / "s.wav"
        subprocess.run(["espeak-ng", "-v", voice, "-s", str(speed), "-w", str(wav), text], check=True)
        rate, pcm = wavfile.read(wav)
    if rate != 22_050 or pcm.dtype != np.int16:
        raise SystemExit(f"espeak-ng wrote {rate} Hz {pcm.dtype}; this script expects 22050 Hz int16")
    voiced = np.flatnonzero(np.abs(pcm) > 0)
    pcm = pcm[voiced[0]:voiced[-1] + 1].astype(np.float64) / 32768.0  # espeak's leading and trailing zeros
    return resample_poly(pcm, 320, 441)


def step_energy(x: Any) -> Any:
    return (x.reshape(STEPS, CHUNK) ** 2).mean(axis=1)


def make_clip(index: int, text: str, condition: str, rng: Any) -> tuple[Any, Any, dict[str, Any]]:
    voice = VOICES[index % len(VOICES)]
    speed = int(rng.integers(160, 191))
    speech = speak(text, voice, speed)
    if speech.size > SAMPLES - 2 * 4_000:
        raise SystemExit(f"{text!r} lasts {speech.size / RATE:.2f} s: too long for a {SAMPLES / RATE:.3f} s clip")
    speech *= 10 ** (rng.uniform(-12.0, -3.0) / 20) / np.abs(speech).max()
    offset = int(rng.integers(4_000, SAMPLES - speech.size - 4_000 + 1))
    clean = np.zeros(SAMPLES)
    clean[offset:offset + speech.size] = speech
    energy = step_energy(clean)
    labels = (energy > energy.max() * 10 ** (LABEL_DB / 10)).astype(np.uint8)
    audio = clean.copy()
    snr = None
    if condition != "silence":
        snr = float(condition.removeprefix("noise-").removesuffix("db"))
        noise_power = energy[labels == 1].mean() / 10 ** (snr / 10)
        audio += rng.normal(0.0, np.sqrt(noise_power), SAMPLES)
    pcm = np.clip(np.round(audio * 32767), -32768, 32767).astype(np.int16)
    info = {"text": text, "voice": voice, "speed_wpm": speed, "condition": condition, "snr_db": snr,
            "speech_start": offset, "speech_samples": int(speech.size), "speech_steps": int(labels.sum())}
    return pcm, labels, info


def split_of(texts: list[str], conditions: list[str]) -> list[str]:
    """The clip whose text hashes lowest in each condition calibrates; the rest evaluate."""
    out = ["evaluation"] * len(texts)
    for condition in CONDITIONS:
        mine = [i for i, c in enumerate(conditions) if c == condition]
        out[min(mine, key=lambda i: hashlib.sha256(texts[i].encode()).hexdigest())] = "calibration"
    return out


def write_npz(path: Path, arrays: dict[str, Any]) -> None:
    """np.savez_compressed with fixed member timestamps, staged and renamed."""
    staged = path.with_suffix(".tmp")
    with zipfile.ZipFile(staged, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, value in arrays.items():
            buffer = io.BytesIO()
            np.lib.format.write_array(buffer, np.ascontiguousarray(value), allow_pickle=False)  # type: ignore[no-untyped-call]
            member = zipfile.ZipInfo(f"{name}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            member.compress_type = zipfile.ZIP_DEFLATED
            member.external_attr = 0o644 << 16
            zf.writestr(member, buffer.getvalue(), compresslevel=9)
    staged.replace(path)


def main() -> None:
    rng = np.random.default_rng(SEED)
    conditions = [CONDITIONS[i % len(CONDITIONS)] for i in range(len(SENTENCES))]
    clips, labels, infos = [], [], []
    for i, (text, condition) in enumerate(zip(SENTENCES, conditions, strict=True)):
        pcm, lab, info = make_clip(i, text, condition, rng)
        clips.append(pcm)
        labels.append(lab)
        infos.append(info)
    splits = split_of(list(SENTENCES), conditions)
    for info, split in zip(infos, splits, strict=True):
        info["split"] = split
    OUT.mkdir(parents=True, exist_ok=True)
    npz = OUT / "clips.npz"
    write_npz(npz, {"audio": np.stack(clips), "labels": np.stack(labels),
                    "calibration": np.asarray([s == "calibration" for s in splits])})
    meta = {
        "sha256": hashlib.sha256(npz.read_bytes()).hexdigest(),
        "espeak_ng": espeak_version(), "scipy": scipy.__version__, "numpy": np.__version__,
        "sample_rate": RATE, "chunk": CHUNK, "steps": STEPS, "label_db": LABEL_DB, "seed": SEED,
        "calibration_steps": STEPS * splits.count("calibration"),
        "evaluation_steps": STEPS * splits.count("evaluation"),
        "speech_steps_evaluation": int(sum(i["speech_steps"] for i in infos if i["split"] == "evaluation")),
        "clips": infos,
    }
    staged = OUT / "clips.json.tmp"
    staged.write_text(json.dumps(meta, indent=1) + "\n")
    staged.replace(OUT / "clips.json")
    print(f"{npz}: {npz.stat().st_size:,} bytes, sha256 {meta['sha256']}; {meta['calibration_steps']} calibration "
          f"and {meta['evaluation_steps']} evaluation steps ({meta['speech_steps_evaluation']} speech)")


if __name__ == "__main__":
    main()
