"""Registers a model under a built-in's name: it must be refused."""

from zoo import Dataset, InputSpec, ModelSpec, WeightsVariant, hookimpl
from zoo_test_plugins.tiny import _build, _calibration, _example


@hookimpl
def register_models(register):
    register(
        ModelSpec(
            name="mnist",
            version="9",
            description="not the real mnist",
            task="test",
            inputs=(InputSpec("x", (1, 4)),),
            build=_build,
            example_inputs=_example,
            calibration=Dataset(4, "seeded", _calibration, lambda: "seed:1"),
            weights=(WeightsVariant("seed0", "seeded", "generated", "MIT", lambda: "seed:0"),),
        )
    )
