"""What the two digit models' training scripts share (train_digit_detector.py, train_digit_segmenter.py):
the command line, the training canvases, zoo.train_with_loss, and the weights written and checked
against the digest the model records. Imported by them from this folder; not a script itself."""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from zoo_vision import digit_canvas

import zoo


def train_and_write(doc: str | None, net: ModuleType, recipe: zoo.TrainingRecipe,
                    targets: Callable[[digit_canvas.Canvases], tuple[Any, str]], loss: Callable[[Any, Any], Any],
                    note: str, metric: tuple[str, Callable[[Any], float]], split: str = "train") -> None:
    """Train ``net`` (yolo_tiny or seg_tiny) on the ``split`` canvases (training digits only) to ``targets(canvases)``'s
    tensor under ``loss``, write its weights to ``--out`` with ``{net.NAME} v{net.VERSION}{note}`` as
    their metadata, and print the run: what ``targets`` says it trained on, the float ``metric``
    (its name, its measure of the model) on the test canvases, and whether the digest is the one
    ``net`` records."""
    parser = argparse.ArgumentParser(description=(doc or "").splitlines()[0])
    parser.add_argument("--out", type=Path, default=net.WEIGHTS_FILE)
    args = parser.parse_args()
    started = time.perf_counter()
    train = digit_canvas.canvases(split)
    inputs = digit_canvas.as_floats(train.images)
    tensor, trained_on = targets(train)
    cpu = time.process_time()
    model = zoo.train_with_loss(net.new_network, inputs, tensor, recipe, loss, where=f"training {net.NAME}")
    seconds = time.process_time() - cpu
    digest = zoo.save_weights(model, args.out, f"{net.NAME} v{net.VERSION}{note}")
    print(f"trained on {len(inputs)} canvases{trained_on} in {seconds:.1f} s of CPU")
    print(f"float {metric[0]} on {digit_canvas.SIZES['test']} test canvases: {metric[1](model):.2f} %")
    recorded = "the recorded one" if digest == net.WEIGHTS_SHA256 else f"NOT the recorded {net.WEIGHTS_SHA256!r}"
    print(f"wrote {args.out} ({args.out.stat().st_size:,} bytes), sha256 {digest}: {recorded}; "
          f"{time.perf_counter() - started:.0f} s in all")
