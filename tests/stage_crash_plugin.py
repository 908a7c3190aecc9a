"""Models whose build crashes in native code at one stage, as Vela 5.1.0 does on
MobileViT-XS for a U55. A stand-in for that crash: each model's ``build`` (which runs
only in the worker) swaps one step of zoo's pipeline for a read of address zero.

``vela-crash`` dies in Vela's report for ``ethos-u55-128`` alone, so its sibling targets
build; ``check-crash`` dies in the numerical check, whose data is not in the key."""

from __future__ import annotations

import ctypes
from collections.abc import Callable
from typing import Any

from zoo import Dataset, InputSpec, ModelSpec, WeightsVariant, hookimpl

CRASHING_TARGET = "ethos-u55-128"


def _sample() -> tuple[Any, ...]:
    import torch

    return (torch.linspace(-1, 1, 16).reshape(1, 16),)


def _network() -> Any:
    import torch

    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(16, 8), torch.nn.ReLU()).eval()


def _vela_crash(variant: str) -> Any:
    from zoo.registry.npu import vela_report
    real = vela_report.run_vela

    def run_vela(graph: Any, target: Any, *args: Any, **kwargs: Any) -> Any:
        if target.name == CRASHING_TARGET:
            ctypes.string_at(0)  # SIGSEGV
        return real(graph, target, *args, **kwargs)

    vela_report.run_vela = run_vela
    return _network()


def _check_crash(variant: str) -> Any:
    from zoo.registry import numerics

    def check_ethosu(*args: Any, **kwargs: Any) -> Any:
        ctypes.string_at(0)  # SIGSEGV

    numerics.check_ethosu = check_ethosu
    return _network()


def _spec(name: str, build: Callable[[str], Any]) -> ModelSpec:
    return ModelSpec(
        name=name, version="1", description=f"test model that crashes: {name}", task="test",
        inputs=(InputSpec("x", (1, 16)),), build=build, example_inputs=_sample,
        calibration=Dataset(1, "one ramp", lambda: [_sample()], lambda: "ramp"),
        weights=(WeightsVariant("none", "none", "generated", "n/a", lambda: "none"),),
    )


@hookimpl
def register_models(register: Callable[[ModelSpec], None]) -> None:
    register(_spec("vela-crash", _vela_crash))
    register(_spec("check-crash", _check_crash))
