"""Train ``speaker-id-vowels`` or ``appliance-id-plaid``'s shipped weights, deterministically, and
measure it against a 1-nearest-neighbour baseline.

Trains the CNN on the published training split (preprocessed as the plugin does), writes its weights
file under ``src/zoo_sensors/weights/`` and prints its float top-1 on the published test split beside
1-NN's (Euclidean distance between the same fixed-length, standardised series). zoo's training helpers
pin the numerics, so any x86_64 host with the same stack, Intel or AMD, writes identical bytes.

    ZOO_SENSORS_DATA=DIR python plugins/zoo-sensors/scripts/train_series.py MODEL [--out PATH]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import zoo

zoo.pin_numerics()  # before torch computes anything: the same kernels on every x86_64 host

from zoo_sensors import series  # noqa: E402
from zoo_sensors.series_models import MODELS  # noqa: E402

RECIPES = {
    "speaker-id-vowels": zoo.TrainingRecipe(epochs=60, batch=16, learning_rate=3e-3, weight_decay=5e-2, seed=0),
    "appliance-id-plaid": zoo.TrainingRecipe(epochs=40, batch=16, learning_rate=1e-3, weight_decay=5e-2, seed=0),
}

if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("model", choices=sorted(MODELS))
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    model = MODELS[args.model]
    started = time.perf_counter()
    note = (f"{model.name} (1-D CNN {model.widths}, kernel {model.kernel}); data: {model.data.key} training split, "
            f"{model.data.identity('train')}")
    trained = zoo.train_shipped_weights(model.classifier, *series.load(model.data, "train"), RECIPES[model.name],
                                        note=note, out=args.out or model.weights_file)
    print(trained.summary())
    print(f"1-NN (Euclidean) on the same split: {series.nearest_neighbour_accuracy(model.data):.2%}")
    recorded = ("the recorded one" if trained.sha256 == model.weights_sha256
                else f"NOT the recorded {model.weights_sha256!r}")
    print(f"sha256 {trained.sha256}: {recorded}; {time.perf_counter() - started:.0f} s in all")
