"""A tiny fully connected network of one feature vector, as ad-autoencoder-spar is: its 32 → 64
layer is one zoo widens on the U85 (compile/widen_linear.py), so it shows in seconds that the
widened program costs fewer cycles and verifies. ``vector-tiny-seq`` is the same network over 4
vectors (``[1, 4, 16]``), which zoo widens too (pipeline 17)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from zoo import Dataset, InputSpec, ModelSpec, WeightsVariant, hookimpl

FEATURES = 16
SAMPLES = 24
VECTORS = 4


def vector_network(variant: str) -> Any:
    """16 → 32 → 64 → 8 features, ReLU between; seeded."""
    import torch

    torch.manual_seed(5)
    return torch.nn.Sequential(
        torch.nn.Linear(FEATURES, 32), torch.nn.ReLU(), torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 8),
    ).eval()


def _vectors() -> list[tuple[Any, ...]]:
    import torch

    g = torch.Generator().manual_seed(9)
    return [(torch.randn(1, FEATURES, generator=g),) for _ in range(SAMPLES)]


def _sequences() -> list[tuple[Any, ...]]:
    import torch

    g = torch.Generator().manual_seed(10)
    return [(torch.randn(1, VECTORS, FEATURES, generator=g),) for _ in range(SAMPLES)]


@hookimpl
def register_models(register: Callable[[ModelSpec], None]) -> None:
    register(ModelSpec(
        name="vector-tiny",
        version="1",
        description="tests: three linear layers of one 16-feature vector",
        task="custom",
        inputs=(InputSpec("features", (1, FEATURES), "float32"),),
        outputs=("scores",),
        build=vector_network,
        example_inputs=lambda: _vectors()[0],
        calibration=Dataset(size=SAMPLES, description=f"{SAMPLES} seeded normal vectors", load=_vectors,
                            identity=lambda: "vectors-tiny-v1"),
        weights=(WeightsVariant("seeded", "torch.manual_seed(5)", "tests", "MIT", identity=lambda: "seed-5"),),
    ))
    register(ModelSpec(
        name="vector-tiny-seq",
        version="1",
        description=f"tests: the same three linear layers over {VECTORS} vectors of 16 features",
        task="custom",
        inputs=(InputSpec("features", (1, VECTORS, FEATURES), "float32"),),
        outputs=("scores",),
        build=vector_network,
        example_inputs=lambda: _sequences()[0],
        calibration=Dataset(size=SAMPLES, description=f"{SAMPLES} seeded normal sequences", load=_sequences,
                            identity=lambda: "sequences-tiny-v1"),
        weights=(WeightsVariant("seeded", "torch.manual_seed(5)", "tests", "MIT", identity=lambda: "seed-5"),),
    ))
