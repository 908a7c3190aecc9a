"""The test tiers, and how pytest-xdist shares the work, for the repo's tests and the model packs' alike."""

from __future__ import annotations

import os
import sys

import pytest

from tests.bytecode import keep_bytecode

# Before pytest-xdist starts its workers: they and the zoo processes the tests start inherit this.
if (_pycache := keep_bytecode(os.environ)) is not None:
    sys.dont_write_bytecode = False
    sys.pycache_prefix = _pycache

# Two workers on two cores: each computes on one thread, so torch's, OpenMP's and BLAS's pools
# do not oversubscribe the machine (builds pin one thread already; see zoo/registry/request/reproducible.py).
if os.environ.get("PYTEST_XDIST_WORKER"):
    for _name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ.setdefault(_name, "1")

_SLOW_MARKS = ("compile", "ray", "browser", "heavy", "stack", "server", "slow")
FIRST = ("runtime_cache",)
"""Fixtures whose tests start the run: ExecuTorch's runtime for the Cortex-M is the longest thing the
suite builds (tests/firmware/test_firmware_project.py), so one worker starts on it at once."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Everything without a slow mark is the fast tier: `pytest -m fast -n 2`. `make test`
    hands out whole modules (`--dist loadscope`), so a module's own fixtures are made once per
    run; the modules that build the firmware's runtime go first."""
    for item in items:
        if not any(item.get_closest_marker(m) for m in _SLOW_MARKS):
            item.add_marker(pytest.mark.fast)
    items.sort(key=lambda item: not any(name in FIRST for name in item.fixturenames))  # type: ignore[attr-defined]


_HAD_TORCH = pytest.StashKey[bool]()


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    item.stash[_HAD_TORCH] = "torch" in sys.modules


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> object:
    """The fast tier never imports torch (3 to 11 s in each worker): a fast test that brings it in fails,
    naming the mark it needs. Only the first such test in a process can tell; torch stays imported."""
    result = yield
    if item.get_closest_marker("fast") and not item.stash.get(_HAD_TORCH, True) and "torch" in sys.modules:
        pytest.fail("this fast test imported torch: mark it stack (see the tiers in docs/development.md), "
                    "or keep torch out of it", pytrace=False)
    return result
