"""Train ``seg-tiny-mcu``'s shipped weights for per-pixel digit classes, deterministically, and measure its mIoU.

Trains on the ``segment`` canvases' masks (2,400 canvases of the 4,000 training MNIST digits on
scikit-image's photos: the detector's 800 hold too few digits to tell ten apart) with
zoo.train_with_loss and a class-weighted cross-entropy (each digit class weighs DIGIT_WEIGHT,
the background 1: digits cover about 3 % of the pixels), writes
``src/zoo_vision/weights/seg_tiny_mcu_digits.safetensors`` and prints the float mIoU on the test
canvases (held-out digits only). zoo's training helpers pin the numerics, so any x86_64 host with
the same stack, Intel or AMD, writes identical bytes.

    python plugins/zoo-vision/scripts/train_digit_segmenter.py [--out PATH]
"""

from __future__ import annotations

import zoo

zoo.pin_numerics()  # before torch computes anything: the same kernels on every x86_64 host

import torch  # noqa: E402
from _digit_training import train_and_write  # noqa: E402
from zoo_vision import digit_canvas, seg_tiny  # noqa: E402

SPLIT = "segment"
RECIPE = zoo.TrainingRecipe(epochs=8, batch=16, learning_rate=3e-3, weight_decay=1e-4, seed=0)
DIGIT_WEIGHT = 10.0


def test_miou(model: torch.nn.Module) -> float:
    samples = seg_tiny._evaluation()
    with torch.no_grad():
        outputs = [[model(inputs[0])[0]] for inputs, _ in samples]
    return zoo.miou(len(seg_tiny.LABELS), ignore_index=None).compute(outputs, [mask for _, mask in samples])


def targets(train: digit_canvas.Canvases) -> tuple[torch.Tensor, str]:
    return torch.from_numpy(train.masks.astype("int64")), ""


if __name__ == "__main__":
    train_and_write(
        __doc__, seg_tiny, RECIPE, targets, torch.nn.CrossEntropyLoss(weight=torch.tensor([1.0] + [DIGIT_WEIGHT] * 10)),
        f"; data: {digit_canvas.identity(SPLIT)}; recipe: {RECIPE.describe()}, cross-entropy, "
        f"digit classes weighted {DIGIT_WEIGHT}",
        ("mIoU", test_miou), split=SPLIT)
