"""Train ``har-cnn-spar``'s shipped weights, deterministically, and measure it against the ridge baseline.

Trains the CNN on subjects 1-8's windows (normalised as the plugin does), writes
``src/zoo_sensors/weights/har_cnn_spar.safetensors`` and prints its float top-1 on subjects 9-10. With
``--cross-validate`` it first trains one network on each of the other four leave-two-subjects-out folds
(each normalised by its own training subjects) and prints every fold's top-1 and their mean beside a ridge
classifier's on the window's 84 features, the same folds. zoo's training helpers pin the numerics, so
any x86_64 host with the same stack, Intel or AMD, writes identical bytes.

    ZOO_SENSORS_DATA=DIR python plugins/zoo-sensors/scripts/train_har.py [--cross-validate] [--out PATH]
"""

from __future__ import annotations

import argparse
import hashlib
import time
from pathlib import Path
from typing import Any

import zoo

zoo.pin_numerics()  # before torch computes anything: the same kernels on every x86_64 host

import numpy as np  # noqa: E402
from zoo_sensors import har, spar  # noqa: E402

RECIPE = zoo.TrainingRecipe(epochs=30, batch=32, learning_rate=3e-3, weight_decay=5e-2, seed=0)
RIDGE_ALPHA = 1.0


def ridge_accuracy(train: Any, test: Any) -> float:
    """A ridge classifier (one-vs-all targets ±1, an intercept, alpha 1, as scikit-learn's
    RidgeClassifier) on the standardised features of the windows ``train``, scored on ``test``."""
    x, y, _ = spar.windows()
    features = spar.features(x)
    mean, std = features[train].mean(0), features[train].std(0) + 1e-12
    a, b = ((features[i] - mean) / std for i in (train, test))
    a, b = (np.hstack([m, np.ones((len(m), 1))]) for m in (a, b))
    targets = -np.ones((len(train), len(spar.EXERCISES)))
    targets[np.arange(len(train)), y[train]] = 1
    penalty = RIDGE_ALPHA * np.eye(a.shape[1])
    penalty[-1, -1] = 0  # the intercept is not penalised
    weights = np.linalg.solve(a.T @ a + penalty, a.T @ targets)
    return float(((b @ weights).argmax(1) == y[test]).mean())


def fold_accuracy(held_out: tuple[int, ...]) -> float:
    import torch

    x, y, _ = spar.windows()
    split = spar.subject_split(held_out)
    mean, std = spar.axis_statistics(split["train"])
    inputs = torch.from_numpy(((x - mean[None, :, None]) / std[None, :, None]).astype(np.float32)[:, :, None, :])
    labels = torch.from_numpy(y)
    model = zoo.train_classifier(har.CLASSIFIER.new_network, inputs[split["train"]], labels[split["train"]], RECIPE,
                                 where=f"training {har.NAME} without subjects {held_out}")
    return zoo.classifier_accuracy(model, inputs[split["held_out"]], labels[split["held_out"]])


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--out", type=Path, default=har.WEIGHTS_FILE)
    parser.add_argument("--cross-validate", action="store_true", help="train and score the other four folds too")
    args = parser.parse_args()
    started = time.perf_counter()
    cnn, ridge = [], []
    for fold in spar.FOLDS:
        split = spar.subject_split(fold)
        ridge.append(ridge_accuracy(split["train"], split["held_out"]))
        if args.cross_validate and fold != spar.HELD_OUT_SUBJECTS:
            cnn.append(fold_accuracy(fold))
            print(f"subjects {fold} held out: CNN {cnn[-1]:.2%}, ridge {ridge[-1]:.2%}", flush=True)
    note = (f"{har.NAME} (1-D CNN {har.WIDTHS}, kernel {har.KERNEL}); data: SPAR subjects 1-8, "
            f"{har.identity('train')}")
    trained = zoo.train_shipped_weights(har.CLASSIFIER, *har.load("train"), RECIPE, note=note, out=args.out)
    print(trained.summary())
    print(f"ridge on subjects {spar.HELD_OUT_SUBJECTS} held out: {ridge[-1]:.2%}")
    if args.cross_validate:
        cnn.append(trained.held_out_accuracy)
        print(f"5 folds: CNN {' '.join(f'{a:.2%}' for a in cnn)}, mean {np.mean(cnn):.2%}; "
              f"ridge {' '.join(f'{a:.2%}' for a in ridge)}, mean {np.mean(ridge):.2%}")
    recorded = "the recorded one" if trained.sha256 == har.WEIGHTS_SHA256 else f"NOT the recorded {har.WEIGHTS_SHA256}"
    print(f"sha256 {trained.sha256}: {recorded}; {time.perf_counter() - started:.0f} s in all")
    assert hashlib.sha256(args.out.read_bytes()).hexdigest() == trained.sha256
