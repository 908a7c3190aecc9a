"""``add``: ``x + y``, the smallest model that exercises the whole flow (NXP's example)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from zoo import BuildError, Dataset, InputSpec, ModelSpec, WeightsVariant, hookimpl

VERSION = "1"
SHAPE = (1, 1, 1, 1)
CALIBRATION_SEED = 0
CALIBRATION_RANDOM = 8


def _build(variant: str) -> Any:
    import torch

    if variant != "none":
        raise BuildError(f"add has no weights variant {variant!r}; it only has 'none'")

    class AddModule(torch.nn.Module):
        def forward(self, x: Any, y: Any) -> Any:
            return x + y

    return AddModule().eval()


def _example_inputs() -> tuple[Any, ...]:
    import torch

    return (torch.ones(SHAPE), torch.ones(SHAPE))


def _calibration() -> list[tuple[Any, ...]]:
    import torch

    generator = torch.Generator().manual_seed(CALIBRATION_SEED)
    samples = [
        (torch.rand(SHAPE, generator=generator) * 2 - 1, torch.rand(SHAPE, generator=generator) * 2 - 1)
        for _ in range(CALIBRATION_RANDOM)
    ]
    return [*samples, _example_inputs()]


def spec() -> ModelSpec:
    return ModelSpec(
        name="add",
        version=VERSION,
        description="x + y on two 1×1×1×1 tensors, as in NXP's Ethos-U65 example; no weights.",
        task="operator",
        inputs=(
            InputSpec("x", SHAPE, "float32", range=(-1.0, 1.0)),
            InputSpec("y", SHAPE, "float32", range=(-1.0, 1.0)),
        ),
        build=_build,
        example_inputs=_example_inputs,
        calibration=Dataset(
            size=CALIBRATION_RANDOM + 1,
            description=(
                f"{CALIBRATION_RANDOM} pairs uniform in [-1, 1] from torch.Generator seed "
                f"{CALIBRATION_SEED}, plus the all-ones example"
            ),
            load=_calibration,
            identity=lambda: (
                f"torch.Generator({CALIBRATION_SEED}).rand*2-1 x{CALIBRATION_RANDOM} pairs + ones;"
                f"shape={SHAPE};add-plugin={VERSION}"
            ),
        ),
        weights=(
            WeightsVariant(
                name="none",
                description="the model has no parameters",
                origin="n/a",
                licence="n/a",
                identity=lambda: "none",
            ),
        ),
    )


@hookimpl
def register_models(register: Callable[[ModelSpec], None]) -> None:
    register(spec())
