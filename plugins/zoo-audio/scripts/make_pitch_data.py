"""Writes crepe's frames of known pitch: zoo_audio/data/pitch/pitch.npz and pitch.json.

Every frame is synthesised here, so its pitch is known rather than estimated: pure
tones, harmonic tones (harmonics of decaying amplitude, random phases), the same with
white noise at 20 and 10 dB SNR, and linear and exponential chirps (pure and with three
harmonics), whose truth is the instantaneous frequency at the frame's centre. Noise
frames are the unvoiced ones (truth 0 Hz). Pitches are spread log-uniformly over 50-1000 Hz.

numpy's transcendental functions (sin, exp) round their last bit differently on AVX2
and AVX-512 hosts, so this script is run once, offline, and its output is shipped: the
datasets read that file, whose sha256 names them in the build key.

    python plugins/zoo-audio/scripts/make_pitch_data.py
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

ROOT = Path(__file__).resolve().parents[1] / "src"
sys.path.insert(0, str(ROOT))
from zoo_audio.crepe_net import SAMPLE_RATE, WINDOW  # noqa: E402

Array = npt.NDArray[Any]
OUT = ROOT / "zoo_audio" / "data" / "pitch"
LOW, HIGH = 50.0, 1000.0
CHIRP_STRIDE = 800  # a frame every 50 ms of a chirp
KINDS = ("pure", "harmonic", "harmonic+noise", "linear-chirp", "exponential-chirp", "noise")
# Per split: tones of each tone kind, frames per chirp, noise frames.
COUNTS = {"calibration": (10, 12, 10), "evaluation": (64, 20, 32)}
CHIRPS = {
    "calibration": {"linear-chirp": [(90.0, 700.0)], "exponential-chirp": [(900.0, 60.0)]},
    "evaluation": {
        "linear-chirp": [(60.0, 400.0), (1000.0, 300.0), (150.0, 900.0), (500.0, 55.0)],
        "exponential-chirp": [(50.0, 1000.0), (1000.0, 50.0), (80.0, 640.0), (700.0, 110.0)],
    },
}


def pitches(rng: np.random.Generator, n: int) -> Array:
    """n pitches, one log-uniform draw in each of n equal log-spaced strata of [LOW, HIGH]."""
    edges = np.log(LOW) + (np.log(HIGH) - np.log(LOW)) * (np.arange(n) + rng.random(n)) / n
    return np.asarray(np.exp(edges), dtype=np.float64)


def harmonics(phase: Array, top_hz: float, rng: np.random.Generator, count: int) -> Array:
    """Harmonics k = 1..count of a phase track, amplitude 1/k, random phases, all below 0.95 Nyquist."""
    out = np.zeros_like(phase)
    for k in range(1, count + 1):
        if k * top_hz < 0.95 * SAMPLE_RATE / 2:
            out += np.sin(k * phase + rng.uniform(0, 2 * np.pi)) / k
    return np.asarray(out, dtype=np.float64)


def pcm(x: Array, rng: np.random.Generator) -> Array:
    """Scaled to a random peak of 0.1-0.9 full scale, as int16."""
    return np.asarray(np.round(x / np.abs(x).max() * rng.uniform(0.1, 0.9) * 32767), dtype=np.int16)


def with_noise(x: Array, snr_db: float, rng: np.random.Generator) -> Array:
    noise = rng.standard_normal(x.size)
    return np.asarray(x + noise * np.sqrt((x**2).mean() / (noise**2).mean() / 10 ** (snr_db / 10)), dtype=np.float64)


def tones(split: str, rng: np.random.Generator) -> list[tuple[Array, list[tuple[float, int]], str]]:
    """One segment per frame: (pcm, [(truth Hz, start)], kind)."""
    n = COUNTS[split][0]
    t = np.arange(WINDOW) / SAMPLE_RATE
    out = []
    for kind in ("pure", "harmonic", "harmonic+noise"):
        for i, f in enumerate(rng.permutation(pitches(rng, n))):
            phase = 2 * np.pi * f * t + rng.uniform(0, 2 * np.pi)
            x = np.sin(phase) if kind == "pure" else harmonics(phase, f, rng, 8)
            if kind == "harmonic+noise":
                x = with_noise(x, 20.0 if i % 2 else 10.0, rng)
            out.append((pcm(x, rng), [(float(f), 0)], kind))
    return out


def chirp_hz(kind: str, f0: float, f1: float, s: float, span: float) -> float:
    """The instantaneous frequency s seconds into a chirp from f0 to f1 over span seconds."""
    return f0 + (f1 - f0) * s / span if kind == "linear-chirp" else f0 * (f1 / f0) ** (s / span)


def chirps(split: str, rng: np.random.Generator) -> list[tuple[Array, list[tuple[float, int]], str]]:
    count = COUNTS[split][1]
    length = (count - 1) * CHIRP_STRIDE + WINDOW
    t = np.arange(length) / SAMPLE_RATE
    span = length / SAMPLE_RATE
    out = []
    for kind, ranges in CHIRPS[split].items():
        for i, (f0, f1) in enumerate(ranges):
            if kind == "linear-chirp":
                phase = 2 * np.pi * (f0 * t + (f1 - f0) * t**2 / (2 * span))
            else:
                phase = 2 * np.pi * f0 * span / np.log(f1 / f0) * ((f1 / f0) ** (t / span) - 1)
            x = np.sin(phase) if i % 2 == 0 else harmonics(phase, max(f0, f1), rng, 3)
            # Frame i is centred on sample start + WINDOW / 2, as torchcrepe's frame i on sample i * hop.
            truth = [(chirp_hz(kind, f0, f1, (k * CHIRP_STRIDE + WINDOW // 2) / SAMPLE_RATE, span), k * CHIRP_STRIDE)
                     for k in range(count)]
            out.append((pcm(x, rng), truth, kind))
    return out


def noise(split: str, rng: np.random.Generator) -> list[tuple[Array, list[tuple[float, int]], str]]:
    """White noise, and white noise through a first-order low-pass (brown-ish): no pitch."""
    out = []
    for i in range(COUNTS[split][2]):
        x = rng.standard_normal(WINDOW)
        if i % 2:
            x = np.cumsum(x) * 0.05 + x
        out.append((pcm(x - x.mean(), rng), [(0.0, 0)], "noise"))
    return out


def main() -> None:
    audio, starts, truth, split_of, kind_of = [], [], [], [], []
    offset = 0
    for split, seed in (("calibration", 1), ("evaluation", 2)):
        rng = np.random.default_rng(seed)
        for segment, frames, kind in tones(split, rng) + chirps(split, rng) + noise(split, rng):
            audio.append(segment)
            for hz, start in frames:
                starts.append(offset + start)
                truth.append(hz)
                split_of.append(split == "calibration")
                kind_of.append(KINDS.index(kind))
            offset += segment.size
    OUT.mkdir(parents=True, exist_ok=True)
    arrays = {"audio": np.concatenate(audio), "starts": np.asarray(starts, dtype=np.int64),
              "truth_hz": np.asarray(truth, dtype=np.float64), "voiced": np.asarray(truth) > 0,
              "calibration": np.asarray(split_of), "kind": np.asarray(kind_of, dtype=np.int8)}
    np.savez_compressed(OUT / "pitch.npz", **arrays)
    data = (OUT / "pitch.npz").read_bytes()
    cal = arrays["calibration"]
    meta = {
        "sha256": hashlib.sha256(data).hexdigest(),
        "bytes": len(data),
        "sample_rate": SAMPLE_RATE,
        "window": WINDOW,
        "kinds": list(KINDS),
        "calibration_frames": int(cal.sum()),
        "evaluation_frames": int((~cal).sum()),
        "evaluation_voiced": int((arrays["voiced"] & ~cal).sum()),
        "evaluation_per_kind": {k: int(((arrays["kind"] == i) & ~cal).sum()) for i, k in enumerate(KINDS)},
        "pitch_range_hz": [LOW, HIGH],
        "script": "plugins/zoo-audio/scripts/make_pitch_data.py",
    }
    (OUT / "pitch.json").write_text(json.dumps(meta, indent=1, sort_keys=True) + "\n")
    print(json.dumps(meta, indent=1))


if __name__ == "__main__":
    main()
