"""A plugin author's slips (issue 21 §1b), loaded with ZOO_PLUGINS=tests.authoring_plugin:
add's network under other names, one whose weights identity() fails."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from zoo import ModelSpec, WeightsVariant, hookimpl
from zoo.plugins import add


def _missing_file() -> str:
    raise FileNotFoundError("[Errno 2] No such file or directory: 'weights/kws.safetensors'")


@hookimpl
def register_models(register: Callable[[ModelSpec], None]) -> None:
    register(dataclasses.replace(add.spec(), name="add-ok"))
    register(dataclasses.replace(add.spec(), name="add-missing", weights=(
        WeightsVariant("trained", "trained here", "weights/kws.safetensors", "MIT", _missing_file),)))
    register(dataclasses.replace(add.spec(), name="add-named", outputs=("total",)))
    register(dataclasses.replace(add.spec(), name="add-misnamed", outputs=("total", "carry")))
    register(dataclasses.replace(add.spec(), name="add-zero", weights=(
        WeightsVariant("trained", "trained here", "here", "MIT", lambda: str(1 / 0)),)))
