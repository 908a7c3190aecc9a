"""Deterministic synthetic inputs for the models that have no data offline.

numpy's PCG64 generator gives the same numbers on every platform for a seed, so
these sets, and the builds calibrated on them, do not drift.
"""

from __future__ import annotations

from typing import Any


def gaussian(shape: tuple[int, ...], count: int, seed: int) -> list[tuple[Any, ...]]:
    """``count`` samples of ``shape``, standard normal, float32 torch tensors."""
    import numpy as np
    import torch

    rng = np.random.Generator(np.random.PCG64(seed))
    data = rng.standard_normal((count, *shape)).astype(np.float32)
    return [(torch.from_numpy(data[i].copy()),) for i in range(count)]


def tones_in_noise(samples: int, count: int, seed: int, rate: int = 16_000) -> list[tuple[Any, ...]]:
    """``count`` waveforms (1, 1, samples) in [-1, 1]: a sum of three sine tones between 100 Hz
    and 4 kHz at random phases, plus white noise at 0.1, peak-normalised to 0.9."""
    import numpy as np
    import torch

    rng = np.random.Generator(np.random.PCG64(seed))
    t = np.arange(samples, dtype=np.float64) / rate
    out = []
    for _ in range(count):
        freqs, phases = rng.uniform(100, 4000, 3), rng.uniform(0, 2 * np.pi, 3)
        wave = np.sin(2 * np.pi * freqs[:, None] * t[None, :] + phases[:, None]).sum(axis=0)
        wave = wave + 0.1 * rng.standard_normal(samples)
        wave = 0.9 * wave / np.abs(wave).max()
        out.append((torch.from_numpy(wave.astype(np.float32).reshape(1, 1, samples)),))
    return out
