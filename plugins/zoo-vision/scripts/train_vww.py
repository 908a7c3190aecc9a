"""Train ``vww-mobilenetv1-025``'s shipped weights, deterministically.

Trains MobileNetV1-0.25 on lfw_subset's 160 training crops and their mirror images
(preprocessed exactly as the plugin does), writes
``src/zoo_vision/weights/vww_mobilenetv1_025.safetensors`` and prints float top-1 on the
40 held-out crops: the figure the spec declares as its reference. It computes in zoo's
reproducible numerics mode, so any x86_64 host with the same stack writes identical bytes.

    python plugins/zoo-vision/scripts/train_vww.py [--out PATH]
"""

from __future__ import annotations

import argparse
import hashlib
import time
from pathlib import Path
from typing import Any

from zoo.registry.request import reproducible

reproducible.pin()  # before torch computes anything: the same kernels on every x86_64 host

import torch  # noqa: E402
from safetensors.torch import save_file  # noqa: E402
from zoo_vision import lfw, vww  # noqa: E402

EPOCHS = 40
BATCH = 16
LEARNING_RATE = 3e-3
WEIGHT_DECAY = 1e-4
SEED = 0


def train(images: Any, labels: Any) -> Any:
    images = torch.cat([images, images.flip(3)])  # mirror images: a face is a face either way round
    labels = torch.cat([labels, labels])
    model = vww.new_network(SEED).train()
    optimiser = torch.optim.AdamW(model.parameters(), lr=LEARNING_RATE, weight_decay=WEIGHT_DECAY)
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
    # One key only: safetensors writes metadata in hash-map order, which varies between runs.
    metadata = {
        "zoo": (
            f"{vww.NAME} (MobileNetV1 width {vww.WIDTH}); data: {lfw.identity('train')} plus mirror images; "
            f"recipe: adamw lr={LEARNING_RATE} wd={WEIGHT_DECAY} cosine epochs={EPOCHS} batch={BATCH} seed={SEED}"
        )
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    save_file(state, str(out), metadata=metadata)
    out.chmod(0o644)  # safetensors creates the file 0600; it ships in the wheel


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--out", type=Path, default=vww.WEIGHTS_FILE)
    args = parser.parse_args()

    torch.manual_seed(SEED)
    torch.use_deterministic_algorithms(True)
    train_x, train_y = lfw.load("train")
    held_x, held_y = lfw.load("held_out")

    started = time.perf_counter()
    with reproducible.numerics(torch, f"training {vww.NAME}"):
        model = train(train_x, train_y)
        seconds = time.perf_counter() - started
        accuracy = top1(model, held_x, held_y)
        on_train = top1(model, train_x, train_y)
    save(model, args.out)

    data = args.out.read_bytes()
    print(f"trained on {len(train_y)} crops (and their mirror images) in {seconds:.1f} s; train top-1 {on_train:.2%}")
    print(f"float top-1 on {len(held_y)} held-out crops: {accuracy:.2%}")
    print(f"wrote {args.out} ({len(data):,} bytes, sha256 {hashlib.sha256(data).hexdigest()})")


if __name__ == "__main__":
    main()
