"""Train ``yolo-tiny-mcu``'s shipped digit-detection weights, deterministically, and measure its mAP@0.5.

Trains on the training canvases (the 4,000 training MNIST digits on scikit-image's photos) with
zoo.train_with_loss and YOLOv3's loss (zoo_vision.yolo_targets), writes
``src/zoo_vision/weights/yolo_tiny_mcu_digits.safetensors`` and prints the float mAP@0.5 on the test
canvases (held-out digits only). zoo's training helpers pin the numerics, so any x86_64 host with
the same stack, Intel or AMD, writes identical bytes.

    python plugins/zoo-vision/scripts/train_digit_detector.py [--out PATH]
"""

from __future__ import annotations

import zoo

zoo.pin_numerics()  # before torch computes anything: the same kernels on every x86_64 host

import torch  # noqa: E402
from _digit_training import train_and_write  # noqa: E402
from zoo_vision import digit_canvas, yolo_targets, yolo_tiny  # noqa: E402

RECIPE = zoo.TrainingRecipe(epochs=8, batch=8, learning_rate=3e-3, weight_decay=1e-4, seed=0)


def test_map50(model: torch.nn.Module) -> float:
    samples = yolo_tiny._evaluation()
    with torch.no_grad():
        outputs = [[o[0] for o in model(inputs[0])] for inputs, _ in samples]
    return zoo.map_at(yolo_tiny.decode, 0.5).compute(outputs, [truth for _, truth in samples])


def targets(train: digit_canvas.Canvases) -> tuple[torch.Tensor, str]:
    boxes = [[(*b[:4], 0) for b in found] for found in train.boxes]
    return (torch.from_numpy(yolo_targets.encode(boxes, yolo_tiny.HEADS, yolo_tiny.SIDE)),
            f" ({sum(map(len, boxes))} digits)")


if __name__ == "__main__":
    train_and_write(
        __doc__, yolo_tiny, RECIPE, targets,
        lambda outputs, target: yolo_targets.loss(outputs, target, yolo_tiny.HEADS, len(yolo_tiny.CLASSES)),
        f" (one class, digit); data: {digit_canvas.identity('train')}; recipe: {RECIPE.describe()}, YOLOv3 loss",
        ("mAP@0.5", test_map50))
