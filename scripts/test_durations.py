"""The suite's cost from a run's JUnit XML: the slowest tests, and the time per tier and per folder,
as Markdown for docs/development.md.

    .venv/bin/python -m pytest -n 2 --dist loadscope --no-loadscope-reorder --junitxml=run.xml
    .venv/bin/python scripts/test_durations.py run.xml [--top 40]

A test's time is JUnit's: setup, call and teardown together, so the first test to use a session fixture
carries its cost. Under pytest-xdist the times add up to about twice the wall time (two workers).
The tiers are read from the collected tests' marks (the root conftest.py's), in this order.
"""

from __future__ import annotations

import argparse
import sys
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path
from typing import Any

TIERS = ("compile", "ray", "browser", "heavy", "stack", "server", "slow", "fast")


class _Tiers:
    """A pytest plugin that records each collected test's tier by its JUnit address."""

    def __init__(self) -> None:
        self.tier: dict[tuple[str, str], str] = {}

    def pytest_collection_finish(self, session: Any) -> None:
        from _pytest.junitxml import mangle_test_address

        for item in session.items:
            names = mangle_test_address(item.nodeid)
            tier = next((t for t in TIERS if item.get_closest_marker(t)), "fast")
            self.tier[".".join(names[:-1]), names[-1]] = tier


def tiers() -> dict[tuple[str, str], str]:
    import contextlib
    import io

    import pytest

    plugin = _Tiers()
    with contextlib.redirect_stdout(io.StringIO()):  # the collected ids, which this does not print
        code = pytest.main(["--collect-only", "-q", "-p", "no:cacheprovider"], plugins=[plugin])
    if code != 0:
        sys.exit(f"collecting the tests failed ({code})")
    return plugin.tier


def folder(classname: str) -> str:
    parts = classname.split(".")
    if parts[0] == "plugins":
        return "/".join(parts[:3])
    return "/".join(parts[:2]) if len(parts) > 2 else "tests (top level)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("junit", type=Path)
    parser.add_argument("--top", type=int, default=40)
    args = parser.parse_args()
    cases = [(c.get("classname", ""), c.get("name", ""), float(c.get("time", 0)))
             for c in ET.parse(args.junit).getroot().iter("testcase")]
    tier_of = tiers()
    by_tier: dict[str, list[float]] = defaultdict(list)
    by_folder: dict[str, list[float]] = defaultdict(list)
    for classname, name, seconds in cases:
        by_tier[tier_of.get((classname, name), "?")].append(seconds)
        by_folder[folder(classname)].append(seconds)
    total = sum(s for *_, s in cases)
    print(f"{len(cases)} tests, {total:,.0f} s of test time\n")
    print(f"| the {args.top} slowest tests | tier | s |\n| --- | --- | ---: |")
    for classname, name, seconds in sorted(cases, key=lambda c: -c[2])[:args.top]:
        print(f"| `{classname.replace('.', '/')}.py::{name}` | {tier_of.get((classname, name), '?')} | {seconds:,.1f} |")
    for title, groups in (("tier", by_tier), ("folder", by_folder)):
        print(f"\n| {title} | tests | s | share |\n| --- | ---: | ---: | ---: |")
        for key, times in sorted(groups.items(), key=lambda kv: -sum(kv[1])):
            print(f"| {key} | {len(times)} | {sum(times):,.0f} | {100 * sum(times) / max(total, 1e-9):.0f} % |")


if __name__ == "__main__":
    main()
