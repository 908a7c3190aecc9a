"""The MediaPipe pack's tests: registered by handing the module to the plugin manager, as the
vision pack's are, so they do not depend on what is installed."""

from __future__ import annotations

import io

import pytest

# zoo's own fixtures: every test isolated from the user's config and cache (and the
# reproducible numerics pinned before torch computes, for the compile tier).
from tests.conftest import isolated, refusing_endpoint  # noqa: F401
from zoo import Zoo
from zoo.registry.catalog.plugin_loader import Registry


def mediapipe_registry() -> Registry:
    import zoo_mediapipe.plugin

    registry = Registry(stderr=io.StringIO())
    status = registry.add_plugin(zoo_mediapipe.plugin, "mediapipe")
    assert status.status == "ok", status.error
    return registry


@pytest.fixture
def mediapipe_zoo() -> Zoo:
    return Zoo(registry=mediapipe_registry())
