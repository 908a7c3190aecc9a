"""``softmax``: the ExecuTorch Arm tutorial's SoftmaxModule on a 2×2 input."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from zoo import BuildError, Dataset, InputSpec, ModelSpec, WeightsVariant, hookimpl

VERSION = "1"
SHAPE = (2, 2)
CALIBRATION_SEED = 0
CALIBRATION_RANDOM = 8


def _build(variant: str) -> Any:
    import torch

    if variant != "none":
        raise BuildError(f"softmax has no weights variant {variant!r}; it only has 'none'")

    class SoftmaxModule(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            # The tutorial's implicit dim picks the last one for 2-D input; say so.
            self.softmax = torch.nn.Softmax(dim=-1)

        def forward(self, x: Any) -> Any:
            return self.softmax(x)

    return SoftmaxModule().eval()


def _example_inputs() -> tuple[Any, ...]:
    import torch

    return (torch.ones(SHAPE),)


def _calibration() -> list[tuple[Any, ...]]:
    import torch

    generator = torch.Generator().manual_seed(CALIBRATION_SEED)
    samples = [(torch.rand(SHAPE, generator=generator) * 2 - 1,) for _ in range(CALIBRATION_RANDOM)]
    return [*samples, _example_inputs()]


def spec() -> ModelSpec:
    return ModelSpec(
        name="softmax",
        version=VERSION,
        description=(
            "Softmax over the last dimension of a 2×2 tensor: the ExecuTorch Arm tutorial's "
            "SoftmaxModule; ones(2, 2) gives 0.5 everywhere. No weights."
        ),
        task="operator",
        inputs=(InputSpec("x", SHAPE, "float32", range=(-1.0, 1.0)),),
        build=_build,
        example_inputs=_example_inputs,
        calibration=Dataset(
            size=CALIBRATION_RANDOM + 1,
            description=(
                f"{CALIBRATION_RANDOM} tensors uniform in [-1, 1] from torch.Generator seed "
                f"{CALIBRATION_SEED}, plus the all-ones example"
            ),
            load=_calibration,
            identity=lambda: (
                f"torch.Generator({CALIBRATION_SEED}).rand*2-1 x{CALIBRATION_RANDOM} + ones;"
                f"shape={SHAPE};softmax-plugin={VERSION}"
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
