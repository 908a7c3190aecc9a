"""Train ``ds-cnn-fsdd``'s shipped weights, deterministically.

Trains the DS-CNN on FSDD's training split (preprocessed exactly as the plugin
does), writes ``src/zoo_audio/weights/ds_cnn_fsdd.safetensors`` and prints float
top-1 on the held-out clips: the figure the spec declares as its reference. It
trains with ``zoo.train_shipped_weights``, in zoo's reproducible numerics mode, so
any x86_64 host with the same stack, Intel or AMD, writes identical bytes.

    python plugins/zoo-audio/scripts/train_ds_cnn.py [--out PATH]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import zoo

zoo.pin_numerics()  # before torch computes anything: the same kernels on every x86_64 host

from zoo_audio import ds_cnn, fsdd  # noqa: E402

RECIPE = zoo.TrainingRecipe(epochs=30, batch=32, learning_rate=3e-3, weight_decay=1e-4, seed=0)

if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--out", type=Path, default=ds_cnn.WEIGHTS_FILE)
    note = (f"{ds_cnn.NAME} (DS-CNN, {ds_cnn.CHANNELS} channels, {ds_cnn.BLOCKS} blocks); data: FSDD training "
            f"split, {fsdd.identity('train')}")
    print(zoo.train_shipped_weights(ds_cnn.CLASSIFIER, *fsdd.load("train"), RECIPE, note=note,
                                    out=parser.parse_args().out).summary())
