"""``har-cnn-spar``'s and ``ad-autoencoder-spar``'s held-out windows as the watch gives them, and
``appliance-id-plaid``'s held-out currents as recorded, for ``zoo firmware`` (``ModelSpec.sensor_evaluation``).

They change no build, so they live apart from the modules the models' build keys hash (a code identity
follows the model's imports, and this module is not one of them): giving firmware raw windows moved no key.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from zoo import Dataset, ModelSpec
from zoo_sensors import ad_autoencoder, har, novelty, series, snapshot, spar
from zoo_sensors.series_models import APPLIANCE_ID

__all__ = ["ad_autoencoder_raw_held_out", "ad_autoencoder_spec", "appliance_raw_held_out", "appliance_spec",
           "har_raw_held_out", "har_spec"]


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


def ad_autoencoder_raw_held_out() -> list[tuple[list[Any], int]]:
    """The held-out windows in ``ad_autoencoder.load("held_out")``'s order, each a (200, 6) float32 array of raw
    g and rad/s sample by sample, with its label (1: the novel exercise)."""
    import numpy as np

    x = spar.windows()[0]
    index = novelty.split_indices()["held_out"]
    labels = novelty.held_out_labels().tolist()
    return [([np.ascontiguousarray(x[k].T)], int(label)) for k, label in zip(index, labels, strict=True)]


def ad_autoencoder_spec() -> ModelSpec:
    """``ad_autoencoder.spec()`` with its evaluation windows before the features, which firmware's
    ``model_pte_normalise_input0`` computes and standardises."""
    size = snapshot.read()["spar"]["novelty"]["split"]["held_out"]
    raw = Dataset(size=size, description=f"the {size} held-out windows in raw g and rad/s, before the features",
                  load=ad_autoencoder_raw_held_out, identity=lambda: ad_autoencoder.identity("held_out") + ";raw")
    return replace(ad_autoencoder.spec(), sensor_evaluation=raw)


def appliance_raw_held_out() -> list[tuple[list[Any], int]]:
    """PLAID's held-out series in ``series.load(PLAID, "held_out")``'s order, each (samples, 1) float32 amperes as
    long as it was recorded (100 to 1,344 samples), with its appliance."""
    import numpy as np

    ts = series.raw(series.PLAID)["test"]
    return [([np.ascontiguousarray(s.T, dtype=np.float32)], int(label))
            for s, label in zip(ts.series, ts.labels.tolist(), strict=True)]


def appliance_spec() -> ModelSpec:
    """``APPLIANCE_ID.spec()`` with its evaluation series as recorded, which firmware's ``model_pte_normalise_input0``
    standardises over all their samples, then cuts or pads to 512."""
    size = series.PLAID.sizes()["held_out"]
    raw = Dataset(size=size, description=f"the {size} held-out series in amperes, as long as recorded, before the "
                  "standardisation", load=appliance_raw_held_out,
                  identity=lambda: series.PLAID.identity("held_out") + ";raw")
    return replace(APPLIANCE_ID.spec(), sensor_evaluation=raw)
