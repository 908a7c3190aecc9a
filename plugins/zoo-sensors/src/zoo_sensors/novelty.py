"""Novelty detection on SPAR: one exercise is kept out of training, and the detector must tell
its windows apart from the other six on subjects it never saw. Motion data, not machine faults.

Each window becomes its 84 features (`zoo_sensors.spar.features`), standardised by the normal
training windows' statistics. The autoencoder and the Mahalanobis baseline see the same vectors.
Module level is numpy-free.
"""

from __future__ import annotations

from typing import Any

import zoo
from zoo_sensors import snapshot, spar

NOVEL = spar.EXERCISES.index("ROW")
"""The exercise the shipped weights never saw: the 7th, ROW."""
SPLIT_RULE = (
    f"training: windows of subjects 1-8 but not of the held-out exercise ({spar.EXERCISES[NOVEL]} for the shipped "
    f"weights); every {spar.CALIBRATION_EVERY}th of them calibrates; held out: every window of subjects "
    f"{spar.HELD_OUT_SUBJECTS[0]}-{spar.HELD_OUT_SUBJECTS[1]}, label 1 for the held-out exercise, 0 for the six others"
)


def split_indices(novel: int = NOVEL) -> dict[str, Any]:
    """Window indices: ``train`` (normal windows of the training subjects), ``calibration`` and ``held_out``."""
    import numpy as np

    split = spar.subject_split(spar.HELD_OUT_SUBJECTS)
    labels = spar.windows()[1]
    train = split["train"][labels[split["train"]] != novel]
    return {"train": train, "calibration": train[:: spar.CALIBRATION_EVERY], "held_out": np.asarray(split["held_out"])}


def held_out_labels(novel: int = NOVEL) -> Any:
    """1 for a held-out window of the novel exercise, 0 for the others (int64)."""
    return (spar.windows()[1][split_indices(novel)["held_out"]] == novel).astype("int64")


def standardised(novel: int = NOVEL, stats: tuple[Any, Any] | None = None) -> dict[str, Any]:
    """Each split's (n, 84) float32 features, standardised by ``stats`` (mean, std), by default
    the snapshot's (those of the shipped weights' training windows)."""
    import numpy as np

    x = spar.windows()[0]
    index = split_indices(novel)
    if stats is None:
        saved = snapshot.read()["spar"]["novelty"]
        stats = np.asarray(saved["mean"]), np.asarray(saved["std"])
    mean, std = stats
    return {k: ((spar.features(x[v]) - mean) / std).astype(np.float32) for k, v in index.items()}


def training_statistics(novel: int) -> tuple[Any, Any]:
    features = spar.features(spar.windows()[0][split_indices(novel)["train"]])
    return features.mean(axis=0), features.std(axis=0)


def mahalanobis_auroc(novel: int, shrinkage: float = 0.0) -> float:
    """The baseline: the Mahalanobis distance to the normal training windows' features (their
    covariance, shrunk towards the identity by ``shrinkage`` if asked), as ROC-AUC on the held-out windows."""
    import numpy as np

    data = standardised(novel, training_statistics(novel))
    train = data["train"].astype(np.float64)
    centre = train.mean(axis=0)
    covariance = (1 - shrinkage) * np.cov(train, rowvar=False) + shrinkage * np.eye(train.shape[1])
    inverse = np.linalg.inv(covariance)
    d = data["held_out"].astype(np.float64) - centre
    scores = np.einsum("ij,jk,ik->i", d, inverse, d)
    return float(zoo.roc_auc([(s,) for s in scores], held_out_labels(novel).tolist()))
