"""The test tiers, and how pytest-xdist shares the work, for the repo's tests and the model packs' alike."""

from __future__ import annotations

import os

import pytest

# Two workers on two cores: each computes on one thread, so torch's, OpenMP's and BLAS's pools
# do not oversubscribe the machine (builds pin one thread already; see zoo/registry/reproducible.py).
if os.environ.get("PYTEST_XDIST_WORKER"):
    for _name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ.setdefault(_name, "1")

_SLOW_MARKS = ("compile", "ray", "browser", "heavy", "stack", "server", "slow")
_SHARED_SCOPES = ("module", "class", "package", "session")
GROUPED_FIXTURES = {"runtime_cache": "firmware-runtime"}
"""Session fixtures shared by several test modules that one worker should own: ExecuTorch's runtime for
the Cortex-M is built once per run (tests/firmware/), and the tests that link it wait for nothing."""


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist reads the xdist_group marks
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Everything without a slow mark is the fast tier: `pytest -m fast -n 2`. Under
    `--dist loadgroup`, the tests that share an expensive fixture run on one worker."""
    for item in items:
        if not any(item.get_closest_marker(m) for m in _SLOW_MARKS):
            item.add_marker(pytest.mark.fast)
        group = xdist_group(item)
        if group is not None and item.get_closest_marker("xdist_group") is None:
            item.add_marker(pytest.mark.xdist_group(group))


def xdist_group(item: pytest.Item) -> str | None:
    """The worker group of a test: a named one for GROUPED_FIXTURES, else the module that defines a
    module-, class- or session-scoped fixture it uses, so that fixture is made once per run rather than
    once per worker. Fixtures of a conftest.py are shared through the disk instead (tests/conftest.py's
    run_dir and the zoo cache's file locks), and group nothing."""
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return None
    for name in item.fixturenames:  # type: ignore[attr-defined]
        if name in GROUPED_FIXTURES:
            return GROUPED_FIXTURES[name]
    for name in item.fixturenames:  # type: ignore[attr-defined]
        defs = info.name2fixturedefs.get(name)
        if not defs:
            continue
        fixture = defs[-1]
        if fixture.scope in _SHARED_SCOPES and fixture.baseid.endswith(".py"):
            return str(fixture.baseid)
    return None
