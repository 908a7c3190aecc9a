"""The ``sensors`` entry point: registers the pack's models from its snapshot, torch- and numpy-free."""

from __future__ import annotations

from collections.abc import Callable

from zoo import ModelSpec, hookimpl
from zoo_sensors import raw_windows
from zoo_sensors.series_models import SPEAKER_ID


@hookimpl
def register_models(register: Callable[[ModelSpec], None]) -> None:
    register(raw_windows.har_spec())
    register(raw_windows.ad_autoencoder_spec())
    register(SPEAKER_ID.spec())
    register(raw_windows.appliance_spec())
