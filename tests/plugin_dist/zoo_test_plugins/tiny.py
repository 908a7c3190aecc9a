"""A well-behaved third-party plugin: one small linear model."""

from zoo import Dataset, InputSpec, ModelSpec, WeightsVariant, hookimpl


def _build(weights: str):
    import torch

    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.ReLU()).eval()


def _example():
    import torch

    return (torch.ones(1, 4),)


def _calibration():
    import torch

    g = torch.Generator().manual_seed(1)
    return [(torch.rand(1, 4, generator=g),) for _ in range(4)]


@hookimpl
def register_models(register):
    register(
        ModelSpec(
            name="tiny-linear",
            aliases=("tiny",),
            version="1",
            description="A 4→3 linear layer with ReLU",
            task="test",
            inputs=(InputSpec("x", (1, 4), range=(0.0, 1.0)),),
            build=_build,
            example_inputs=_example,
            calibration=Dataset(4, "4 seeded uniform samples", _calibration, lambda: "seed:1;n=4"),
            weights=(WeightsVariant("seed0", "seeded init", "generated", "MIT", lambda: "seed:0"),),
        )
    )
