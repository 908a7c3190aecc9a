"""The ``sensors`` entry point: registers the pack's models from its snapshot, torch- and numpy-free."""

from __future__ import annotations

from collections.abc import Callable

from zoo import ModelSpec, hookimpl
from zoo_sensors import ad_autoencoder, har
from zoo_sensors.series_models import APPLIANCE_ID, SPEAKER_ID


@hookimpl
def register_models(register: Callable[[ModelSpec], None]) -> None:
    register(har.spec())
    register(ad_autoencoder.spec())
    register(SPEAKER_ID.spec())
    register(APPLIANCE_ID.spec())
