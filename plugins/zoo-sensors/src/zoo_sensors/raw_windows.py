"""``har-cnn-spar``'s held-out windows as the watch gives them, for ``zoo firmware`` (``ModelSpec.sensor_evaluation``).

They change no build, so they live apart from the modules ``har``'s build key hashes (its code identity
follows ``har``'s imports, and this module is not one of them): giving firmware raw windows moved no key.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from zoo import Dataset, ModelSpec
from zoo_sensors import har, snapshot, spar

__all__ = ["har_raw_held_out", "har_spec"]


def har_raw_held_out() -> list[tuple[list[Any], int]]:
    """The held-out windows in ``har.load("held_out")``'s order, each a (200, 6) float32 array of raw g and
    rad/s sample by sample, with its exercise."""
    import numpy as np

    x, y, _ = spar.windows()
    index = spar.subject_split(spar.HELD_OUT_SUBJECTS)["held_out"]
    return [([np.ascontiguousarray(x[k].T)], int(y[k])) for k in index]


def har_spec() -> ModelSpec:
    """``har.spec()`` with its evaluation windows before normalisation, which firmware feeds through
    ``model_pte_normalise_input0``."""
    size = snapshot.read()["spar"]["split"]["held_out"]
    raw = Dataset(size=size, description=f"the {size} held-out windows in raw g and rad/s, before normalisation",
                  load=har_raw_held_out, identity=lambda: har.identity("held_out") + ";raw")
    return replace(har.spec(), sensor_evaluation=raw)
