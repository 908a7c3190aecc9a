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

import argparse
import time
from pathlib import Path

import zoo

zoo.pin_numerics()  # before torch computes anything: the same kernels on every x86_64 host

import torch  # noqa: E402
from zoo_vision import digit_canvas, seg_tiny  # noqa: E402

SPLIT = "segment"
RECIPE = zoo.TrainingRecipe(epochs=8, batch=16, learning_rate=3e-3, weight_decay=1e-4, seed=0)
DIGIT_WEIGHT = 10.0


def test_miou(model: torch.nn.Module) -> float:
    samples = seg_tiny._evaluation()
    with torch.no_grad():
        outputs = [[model(inputs[0])[0]] for inputs, _ in samples]
    return zoo.miou(len(seg_tiny.LABELS), ignore_index=None).compute(outputs, [mask for _, mask in samples])


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--out", type=Path, default=seg_tiny.WEIGHTS_FILE)
    args = parser.parse_args()
    started = time.perf_counter()
    train = digit_canvas.canvases(SPLIT)
    inputs = digit_canvas.as_floats(train.images)
    masks = torch.from_numpy(train.masks.astype("int64"))
    weight = torch.tensor([1.0] + [DIGIT_WEIGHT] * 10)
    cpu = time.process_time()
    model = zoo.train_with_loss(seg_tiny.new_network, inputs, masks, RECIPE,
                                torch.nn.CrossEntropyLoss(weight=weight), where=f"training {seg_tiny.NAME}")
    seconds = time.process_time() - cpu
    note = (f"{seg_tiny.NAME} v{seg_tiny.VERSION}; data: {digit_canvas.identity(SPLIT)}; "
            f"recipe: {RECIPE.describe()}, cross-entropy, digit classes weighted {DIGIT_WEIGHT}")
    digest = zoo.save_weights(model, args.out, note)
    print(f"trained on {len(inputs)} canvases in {seconds:.1f} s of CPU")
    print(f"float mIoU on {digit_canvas.SIZES['test']} test canvases: {test_miou(model):.2f} %")
    recorded = "the recorded one" if digest == seg_tiny.WEIGHTS_SHA256 else f"NOT the recorded {seg_tiny.WEIGHTS_SHA256!r}"
    print(f"wrote {args.out} ({args.out.stat().st_size:,} bytes), sha256 {digest}: {recorded}; "
          f"{time.perf_counter() - started:.0f} s in all")
