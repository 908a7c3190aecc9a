"""A plugin whose models fail in several ways: ``crasher`` ends its worker process
without a result, ``segfaults`` crashes it in native code while it is exported (as
Vela 5.1.0 does on MobileViT-XS for a U55), ``broken`` raises an ordinary error,
``exits`` calls ``sys.exit()``, and ``chatty`` prints before it fails."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any

from zoo import BuildError, Dataset, InputSpec, ModelSpec, WeightsVariant, hookimpl


def _sample() -> tuple[Any, ...]:
    import torch

    return (torch.zeros(1, 4),)


def _spec(name: str, build: Callable[[str], Any]) -> ModelSpec:
    return ModelSpec(
        name=name, version="1", description=f"test model that fails: {name}", task="test",
        inputs=(InputSpec("x", (1, 4)),), build=build, example_inputs=_sample,
        calibration=Dataset(1, "one zero sample", lambda: [_sample()], lambda: "zeros"),
        weights=(WeightsVariant("none", "none", "generated", "n/a", lambda: "none"),),
    )


def _crash(variant: str) -> Any:
    os._exit(70)


def _segfault(variant: str) -> Any:
    import ctypes

    import torch

    class ReadsAddressZero(torch.nn.Module):
        def forward(self, x: Any) -> Any:
            ctypes.string_at(0)  # SIGSEGV, in native code
            return x

    return ReadsAddressZero()


def _raise(variant: str) -> Any:
    raise BuildError("broken: no weights here")


def _exit(variant: str) -> Any:
    sys.exit(0)


def _chat(variant: str) -> Any:
    print("chatty: building")
    raise BuildError("chatty: no weights here")


@hookimpl
def register_models(register: Callable[[ModelSpec], None]) -> None:
    register(_spec("crasher", _crash))
    register(_spec("segfaults", _segfault))
    register(_spec("broken", _raise))
    register(_spec("exits", _exit))
    register(_spec("chatty", _chat))
