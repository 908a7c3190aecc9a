"""The test tiers, for the repo's tests and the model packs' alike."""

from __future__ import annotations

import pytest

_SLOW_MARKS = ("compile", "ray", "browser", "heavy", "stack", "server", "slow")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Everything without a slow mark is the fast tier: `pytest -m fast -n 2`."""
    for item in items:
        if not any(item.get_closest_marker(m) for m in _SLOW_MARKS):
            item.add_marker(pytest.mark.fast)
