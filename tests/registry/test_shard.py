"""``--shard K/N``: each of N CI jobs builds a deterministic, balanced 1/N of the
build units of the real catalogue, and together they build every one exactly once."""

from __future__ import annotations

import random
import time
from collections import Counter
from pathlib import Path

import pytest

from zoo import Zoo
from zoo._errors import UsageError
from zoo.registry.build_units.shard import (
    assign,
    in_shard,
    parse_shard,
    shard,
    unit_cost,
    unit_identity,
)
from zoo.registry.build_units.unit import BuildUnit
from zoo.registry.request.keys import BuildRequest
from zoo.registry.resolve import Resolver, _Pending

ONE_TARGET_PER_FAMILY = ("u55-128", "u85-256")
TWO_U55S = ("u55-128", "u55-256", "u85-256")  # u55-128 and u55-256 share a lowering: units of unequal cost


def requests_for(targets: tuple[str, ...]) -> list[BuildRequest]:
    """Every model of the catalogue for every target, as ``zoo build --all-models`` asks."""
    zoo = Zoo()
    models = [spec.name for spec in zoo.models()]
    return [zoo.request(m, t) for m in models for t in targets]


def units_of(requests: list[BuildRequest]) -> list[BuildUnit]:
    """The build units exactly as the resolver makes them."""
    resolver = Resolver(Zoo().cache)
    units, _ = resolver._units([_Pending(r, r.key(), None, [i]) for i, r in enumerate(requests)])
    return units


@pytest.fixture(scope="module", params=[ONE_TARGET_PER_FAMILY, TWO_U55S], ids=["u55-128,u85-256", "two-u55s"])
def catalogue(request: pytest.FixtureRequest) -> tuple[list[BuildRequest], list[BuildUnit]]:
    requests = requests_for(request.param)
    return requests, units_of(requests)


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5])
def test_shards_are_disjoint_and_cover_every_unit(
    catalogue: tuple[list[BuildRequest], list[BuildUnit]], n: int
) -> None:
    _, units = catalogue
    assert len(units) >= 54  # 27 models × 2 families
    shards = [shard(units, k, n) for k in range(1, n + 1)]
    seen = Counter(unit_identity(u) for s in shards for u in s)
    assert sorted(seen) == sorted(unit_identity(u) for u in units)
    assert set(seen.values()) == {1}


@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_shards_are_balanced_within_one_unit(catalogue: tuple[list[BuildRequest], list[BuildUnit]], n: int) -> None:
    _, units = catalogue
    shards = [shard(units, k, n) for k in range(1, n + 1)]
    loads = [sum(unit_cost(u) for u in s) for s in shards]
    assert max(loads) - min(loads) <= max(unit_cost(u) for u in units), loads
    if len({unit_cost(u) for u in units}) == 1:
        counts = [len(s) for s in shards]
        assert max(counts) - min(counts) <= 1, counts


def test_the_partition_does_not_depend_on_the_order_of_the_units(
    catalogue: tuple[list[BuildRequest], list[BuildUnit]]
) -> None:
    _, units = catalogue
    expected = [{unit_identity(u) for u in shard(units, k, 4)} for k in range(1, 5)]
    for seed in range(5):
        shuffled = units[:]
        random.Random(seed).shuffle(shuffled)
        assert [{unit_identity(u) for u in shard(shuffled, k, 4)} for k in range(1, 5)] == expected
    # the units come back in the order they were given
    assert shard(units[::-1], 2, 4) == shard(units, 2, 4)[::-1]


@pytest.mark.slow
def test_requests_are_sharded_by_whole_units_as_the_resolver_groups_them(
    catalogue: tuple[list[BuildRequest], list[BuildUnit]]
) -> None:
    requests, units = catalogue
    for n in (1, 3, 4):
        chosen_by_k = [in_shard(requests, k, n) for k in range(1, n + 1)]
        # every request is in exactly one shard
        assert all(sum(c[i] for c in chosen_by_k) == 1 for i in range(len(requests)))
        for k, chosen in enumerate(chosen_by_k, start=1):
            picked = [r for r, c in zip(requests, chosen, strict=True) if c]
            # the chosen requests make exactly the units shard() picks
            assert sorted(map(unit_identity, units_of(picked))) == sorted(map(unit_identity, shard(units, k, n)))
    order = list(range(len(requests)))
    random.Random(1).shuffle(order)
    shuffled = in_shard([requests[i] for i in order], 2, 3)
    assert [shuffled[order.index(i)] for i in range(len(requests))] == in_shard(requests, 2, 3)


def test_more_shards_than_units_leaves_some_empty_and_still_covers_all() -> None:
    units = units_of(requests_for(("u55-128",)))[:3]
    shards = [shard(units, k, 5) for k in range(1, 6)]
    assert [len(s) for s in shards] == [1, 1, 1, 0, 0]


def test_assign_prefers_the_least_loaded_shard_then_the_lowest_index() -> None:
    # costs 5, 5, 3, 2: 5 → shard 0, 5 → shard 1, 3 → shard 0 (tie: lowest), 2 → shard 1 (least loaded)
    assert assign([("a",), ("b",), ("c",), ("d",)], [5, 5, 3, 2], 2) == [0, 1, 0, 1]
    assert assign([("d",), ("c",), ("b",), ("a",)], [2, 3, 5, 5], 2) == [1, 0, 1, 0]


@pytest.mark.parametrize("text, expected", [("1/1", (1, 1)), ("3/4", (3, 4)), (" 2 / 5 ", (2, 5)), ("10/10", (10, 10))])
def test_parse_shard(text: str, expected: tuple[int, int]) -> None:
    assert parse_shard(text) == expected


@pytest.mark.parametrize("text, says", [
    ("", "is not K/N"), ("3", "is not K/N"), ("a/b", "is not K/N"), ("-1/4", "is not K/N"), ("1/4/2", "is not K/N"),
    ("1.5/4", "is not K/N"), ("0/4", "numbered 1 to 4"), ("5/4", "numbered 1 to 4"), ("1/0", "at least 1"),
])
def test_parse_shard_refuses_what_is_not_k_of_n(text: str, says: str) -> None:
    with pytest.raises(UsageError, match=says) as caught:
        parse_shard(text)
    assert str(caught.value).startswith("--shard ")
    assert "e.g. --shard" in str(caught.value)


@pytest.mark.parametrize("text", ["1/10001", "1/1000000000", "1/99999999999999999999", "1/" + "9" * 5000])
def test_a_shard_count_beyond_the_maximum_is_a_usage_error(text: str) -> None:
    started = time.perf_counter()
    with pytest.raises(UsageError, match=r"the number of shards N must be at most 10,000; give one shard per CI job"):
        parse_shard(text)
    assert time.perf_counter() - started < 0.1
    parse_shard("10000/10000")


def test_dealing_costs_the_same_whatever_the_number_of_shards() -> None:
    # The old dealing scanned every shard for each unit and held a load per shard: N = 10,000 took
    # 10,000 times longer than N = 1, and N = 10^9 a list of 10^9 loads.
    identities = [(f"m{i}",) for i in range(300)]
    costs = [5 + i % 3 for i in range(300)]
    timings = {}
    for n in (1, 10_000):
        started = time.perf_counter()
        for _ in range(20):
            of = assign(identities, costs, n)
        timings[n] = time.perf_counter() - started
    assert sorted(of) == list(range(300))  # 10,000 shards: each unit alone in one of the first 300
    assert timings[10_000] < timings[1] * 5 + 0.05, timings


def test_the_cli_refuses_an_empty_shard_rather_than_build_everything(isolated: Path) -> None:
    from tests.conftest import run_probed

    probed = run_probed("fetch", "add", "-t", "u55-128", "--shard", "", "--no-build")
    assert probed.returncode == 2, probed.stderr
    assert "--shard '' is not K/N" in probed.stderr
