"""``mnist-ft``: zoo's mnist with the 4,000 digits its weights were trained on declared as its
training data, so ``--qat`` and the fine-tuned weight recipes can run on it
(``benchmarks/weight_recipes.py`` loads it with ``ZOO_PLUGINS``).

The built-in mnist declares none. Declaring them there would change its build key (the key holds
the plugin's source), so the benchmark uses this twin: the same code, weights, calibration and
evaluation data, and the same bytes for every choice without training.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from zoo import Dataset, ModelSpec, hookimpl
from zoo.plugins import _mnist5k, mnist

NAME = "mnist-ft"


def _training() -> list[tuple[Any, ...]]:
    images, _ = _mnist5k.load(_mnist5k.train_indices())
    return [(images[i : i + 1].clone(),) for i in range(images.shape[0])]


def spec() -> ModelSpec:
    count = len(_mnist5k.train_indices())
    return dataclasses.replace(mnist.spec(), name=NAME, training=Dataset(
        size=count, description=f"the {count:,} MNIST digits the weights were trained on (labels unused)",
        load=_training, identity=lambda: f"{_mnist5k.data_identity()};training;mnist-plugin={mnist.VERSION}"))


@hookimpl
def register_models(register: Callable[[ModelSpec], None]) -> None:
    register(spec())
