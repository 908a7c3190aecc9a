"""``data/sensors.json``: what registration needs (counts) and what preprocessing needs
(normalisation statistics), computed from the data files by `make`, so that registering the
pack reads no data. ``python plugins/zoo-sensors/scripts/snapshot_sensors.py`` writes it; a
test requires that it comes out the same.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

FILE = Path(__file__).parent / "data" / "sensors.json"


@cache
def read() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(FILE.read_text())
    return data


def dumps(snapshot: dict[str, Any]) -> str:
    return json.dumps(snapshot, indent=1, sort_keys=True) + "\n"


def _rounded(values: Any) -> list[float]:
    return [round(float(v), 6) for v in values]


def make() -> dict[str, Any]:
    """The snapshot, from the data files (numpy)."""
    import numpy as np

    from zoo_sensors import novelty, series, spar

    x, y, who = spar.windows()
    split = spar.subject_split(spar.HELD_OUT_SUBJECTS)
    mean, std = spar.axis_statistics(split["train"])
    normal = novelty.split_indices()
    features = spar.features(x[normal["train"]])
    out: dict[str, Any] = {
        "spar": {
            "windows": len(y),
            "windows_per_exercise": dict(zip(spar.EXERCISES, np.bincount(y).tolist(), strict=True)),
            "windows_per_subject": {str(s): int((who == s).sum()) for s in spar.SUBJECTS},
            "split": {k: len(v) for k, v in split.items()},
            "mean": _rounded(mean),
            "std": _rounded(std),
            "novelty": {
                "split": {k: len(v) for k, v in normal.items()},
                "novel_held_out": int(novelty.held_out_labels().sum()),
                "mean": _rounded(features.mean(axis=0)),
                "std": _rounded(features.std(axis=0)),
            },
        },
    }
    for data in (series.VOWELS, series.PLAID):
        raw = series.raw(data)
        lengths = np.asarray([s.shape[1] for ts in raw.values() for s in ts.series])
        m, s = series.statistics(data)
        out[data.key] = {
            "series": {k: len(v.series) for k, v in raw.items()},
            "classes": len(raw["train"].classes),
            "length": {"min": int(lengths.min()), "median": float(np.median(lengths)), "max": int(lengths.max()),
                       "within_fixed_length": int((lengths <= data.length).sum())},
            "mean": _rounded(m),
            "std": _rounded(s),
        }
    return out
