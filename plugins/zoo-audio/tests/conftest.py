"""The audio pack's tests: registered the way simonw/llm's tests register a plugin, by
handing the module to the plugin manager, so they do not depend on what is installed."""

from __future__ import annotations

import io
from collections.abc import Callable

import pytest

# zoo's own fixtures: every test isolated from the user's config and cache (and the
# reproducible numerics pinned before torch computes, for the compile tier).
from tests.conftest import isolated, refusing_endpoint  # noqa: F401
from zoo import ModelSpec, Zoo, hookimpl
from zoo.registry.catalog.plugin_loader import Registry


def audio_registry() -> Registry:
    import zoo_audio.plugin

    registry = Registry(stderr=io.StringIO())
    status = registry.add_plugin(zoo_audio.plugin, "audio")
    assert status.status == "ok", status.error
    return registry


@pytest.fixture
def audio_zoo() -> Zoo:
    return Zoo(registry=audio_registry())


@pytest.fixture
def zoo_with() -> Callable[[ModelSpec], Zoo]:
    """A Zoo whose only plugin, named ``audio`` as the pack is, registers ``spec``:
    the pack's spec with one thing changed."""

    def make(spec: ModelSpec) -> Zoo:
        class Plugin:
            @hookimpl
            def register_models(self, register: Callable[[ModelSpec], None]) -> None:
                register(spec)

        registry = Registry(stderr=io.StringIO())
        status = registry.add_plugin(Plugin(), "audio")
        assert status.status == "ok", status.error
        return Zoo(registry=registry)

    return make
