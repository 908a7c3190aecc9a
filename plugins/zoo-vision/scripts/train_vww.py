"""Train ``vww-mobilenetv1-025``'s shipped weights, deterministically.

Trains MobileNetV1-0.25 on lfw_subset's 160 training crops and their mirror images
(preprocessed exactly as the plugin does), writes
``src/zoo_vision/weights/vww_mobilenetv1_025.safetensors`` and prints float top-1 on the
40 held-out crops: the figure the spec declares as its reference. It trains with
``zoo.train_shipped_weights``, in zoo's reproducible numerics mode, so
any x86_64 host with the same stack, Intel or AMD, writes identical bytes.

    python plugins/zoo-vision/scripts/train_vww.py [--out PATH]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import zoo

zoo.pin_numerics()  # before torch computes anything: the same kernels on every x86_64 host

import torch  # noqa: E402
from zoo_vision import vww  # noqa: E402

from zoo.datasets import lfw_subset as lfw  # noqa: E402

RECIPE = zoo.TrainingRecipe(epochs=40, batch=16, learning_rate=3e-3, weight_decay=1e-4, seed=0)


def main(out: Path) -> None:
    crops, faces = lfw.load("train")
    # Mirror images: a face is a face either way round.
    both, labels = torch.cat([crops, crops.flip(3)]), torch.cat([faces, faces])
    note = f"{vww.NAME} (MobileNetV1 width {vww.WIDTH}); data: {lfw.identity('train')} plus mirror images"
    trained = zoo.train_shipped_weights(vww.CLASSIFIER, both, labels, RECIPE, note=note, out=out)
    print(trained.summary())
    print(f"float top-1 on the {len(faces)} training crops: {zoo.classifier_accuracy(trained.model, crops, faces):.2%}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--out", type=Path, default=vww.WEIGHTS_FILE)
    main(parser.parse_args().out)
