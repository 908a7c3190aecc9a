"""A spectrum's magnitude, sqrt(re² + im²), as silero-vad's STFT front end computes it:
the operator ExecuTorch 1.5.1 lowers wrongly at 16-bit activations (docs/upstream.md).
Small enough to lower in seconds, so the tests can show the defect and zoo's answer to it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from zoo import Dataset, InputSpec, ModelSpec, WeightsVariant, hookimpl

SHAPE = (1, 2, 256)
SAMPLES = 16


class Magnitude:
    @staticmethod
    def build(variant: str) -> Any:
        import torch

        class Module(torch.nn.Module):
            def forward(self, x: torch.Tensor) -> torch.Tensor:
                re, im = x[:, 0], x[:, 1]
                return torch.sqrt(re * re + im * im)

        return Module().eval()


def _samples() -> list[tuple[Any, ...]]:
    """Seeded spectra: most bins quiet, a few loud, as audio's are."""
    import torch

    g = torch.Generator().manual_seed(5)
    return [(torch.randn(SHAPE, generator=g) * torch.rand(1, 1, SHAPE[-1], generator=g) ** 3 * 3,)
            for _ in range(SAMPLES)]


@hookimpl
def register_models(register: Callable[[ModelSpec], None]) -> None:
    data = Dataset(size=SAMPLES, description=f"{SAMPLES} seeded spectra", load=_samples,
                   identity=lambda: "magnitude-spectra-v1")
    register(ModelSpec(
        name="magnitude",
        version="1",
        description="tests: sqrt(re² + im²) over 256 bins",
        task="operator",
        inputs=(InputSpec("spectrum", SHAPE, "float32"),),
        build=Magnitude.build,
        example_inputs=lambda: _samples()[0],
        calibration=data,
        weights=(WeightsVariant("none", "no weights", "n/a", "n/a", identity=lambda: "none"),),
    ))
