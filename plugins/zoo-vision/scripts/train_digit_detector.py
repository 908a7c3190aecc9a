"""Train ``yolo-tiny-mcu``'s shipped digit-detection weights, deterministically, and measure its mAP@0.5.

Trains on the training canvases (the 4,000 training MNIST digits on scikit-image's photos) with
zoo.train_with_loss and YOLOv3's loss (zoo_vision.yolo_targets), writes
``src/zoo_vision/weights/yolo_tiny_mcu_digits.safetensors`` and prints the float mAP@0.5 on the test
canvases (held-out digits only). zoo's training helpers pin the numerics, so any x86_64 host with
the same stack, Intel or AMD, writes identical bytes.

    python plugins/zoo-vision/scripts/train_digit_detector.py [--out PATH]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import zoo

zoo.pin_numerics()  # before torch computes anything: the same kernels on every x86_64 host

import torch  # noqa: E402
from zoo_vision import digit_canvas, yolo_targets, yolo_tiny  # noqa: E402

RECIPE = zoo.TrainingRecipe(epochs=8, batch=8, learning_rate=3e-3, weight_decay=1e-4, seed=0)


def test_map50(model: torch.nn.Module) -> float:
    samples = yolo_tiny._evaluation()
    with torch.no_grad():
        outputs = [[o[0] for o in model(inputs[0])] for inputs, _ in samples]
    return zoo.map_at(yolo_tiny.decode, 0.5).compute(outputs, [truth for _, truth in samples])


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--out", type=Path, default=yolo_tiny.WEIGHTS_FILE)
    args = parser.parse_args()
    started = time.perf_counter()
    train = digit_canvas.canvases("train")
    inputs = digit_canvas.as_floats(train.images)
    boxes = [[(*b[:4], 0) for b in found] for found in train.boxes]
    targets = torch.from_numpy(yolo_targets.encode(boxes, yolo_tiny.HEADS, yolo_tiny.SIDE))
    cpu = time.process_time()
    model = zoo.train_with_loss(
        yolo_tiny.new_network, inputs, targets, RECIPE,
        lambda outputs, target: yolo_targets.loss(outputs, target, yolo_tiny.HEADS, len(yolo_tiny.CLASSES)),
        where=f"training {yolo_tiny.NAME}")
    seconds = time.process_time() - cpu
    note = (f"{yolo_tiny.NAME} v{yolo_tiny.VERSION} (one class, digit); data: {digit_canvas.identity('train')}; "
            f"recipe: {RECIPE.describe()}, YOLOv3 loss")
    digest = zoo.save_weights(model, args.out, note)
    print(f"trained on {len(inputs)} canvases ({sum(map(len, boxes))} digits) in {seconds:.1f} s of CPU")
    print(f"float mAP@0.5 on {digit_canvas.SIZES['test']} test canvases: {test_map50(model):.2f} %")
    recorded = "the recorded one" if digest == yolo_tiny.WEIGHTS_SHA256 else f"NOT the recorded {yolo_tiny.WEIGHTS_SHA256!r}"
    print(f"wrote {args.out} ({args.out.stat().st_size:,} bytes), sha256 {digest}: {recorded}; "
          f"{time.perf_counter() - started:.0f} s in all")
