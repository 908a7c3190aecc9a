"""Sharding for CI matrices (``--shard K/N``): each of N jobs builds a
deterministic, balanced 1/N of the build units, and together they build all.

Every job computes the same partition on its own, from the units' identities
alone (strings: model, weights, TOSA family, I/O boundary and target names),
never from their order, the machine or what its cache holds. The units are
dealt out largest first, each to the least-loaded shard (the lowest index on a
tie), by an estimated cost: a fixed cost for the lowering plus one per target
(each further target only reruns Vela). Dealt that way, the loads of any two
shards differ by at most one unit's cost; with equal costs, their unit counts
by at most one.

The resolver shards *before* it looks anything up, so that jobs with different
caches still agree on the partition; the requests of the other shards are
skipped, not failed.
"""

from __future__ import annotations

import heapq
import re
from collections.abc import Sequence

from zoo._errors import UsageError
from zoo.registry.build_units.unit import BuildUnit
from zoo.registry.npu.targets import PORTABLE
from zoo.registry.request.keys import BuildRequest
from zoo.registry.request.precision import DEFAULT as DEFAULT_PRECISION
from zoo.registry.request.precision import Precision

Identity = tuple[str, ...]

LOWERING_COST = 4
"""A unit's cost besides its targets, counted in Vela runs: export, calibration and
lowering happen once per unit, and cost several times what one more target does."""

MAX_SHARDS = 10_000
"""The most shards ``--shard K/N`` takes: far beyond any CI matrix (GitHub allows 256
jobs), and small enough that no N can exhaust memory or overflow."""

_SHARD = re.compile(r"\s*([0-9]+)\s*/\s*([0-9]+)\s*")  # ASCII digits: int() would also take other scripts' digits


def parse_shard(text: str) -> tuple[int, int]:
    """``"K/N"`` as ``(K, N)``, with 1 ≤ K ≤ N; a UsageError otherwise."""
    match = _SHARD.fullmatch(text)
    if match is None:
        raise UsageError(f"--shard {text!r} is not K/N: give this job's shard and the number of shards, "
                         "e.g. --shard 2/4 for the second of four")
    if len(match[2].lstrip("0")) > len(str(MAX_SHARDS)):  # too long to be a shard count: never parse it
        _too_many(text)
    k, n = int(match[1]), int(match[2])
    check_shard(k, n, text)
    return k, n


def check_shard(k: int, n: int, text: str | None = None) -> None:
    """A UsageError unless 1 ≤ ``k`` ≤ ``n`` ≤ ``MAX_SHARDS``."""
    given = text if text is not None else f"{k}/{n}"
    if n < 1:
        raise UsageError(f"--shard {given}: the number of shards N must be at least 1, e.g. --shard 1/4")
    if n > MAX_SHARDS:
        _too_many(given)
    if not 1 <= k <= n:
        raise UsageError(f"--shard {given}: shards are numbered 1 to {n}, so K must be one of those, "
                         f"e.g. --shard 1/{n}")


def _too_many(given: str) -> None:
    raise UsageError(f"--shard {given}: the number of shards N must be at most {MAX_SHARDS:,}; give one shard per CI "
                     "job, e.g. --shard 1/4")


def _precision(precision: Precision) -> tuple[str, ...]:
    """Empty for int8, so units from before ``--precision`` keep their shards."""
    return () if precision == DEFAULT_PRECISION else (f"precision {precision.name}",)


def unit_identity(unit: BuildUnit) -> Identity:
    """What a unit is, as strings that every job computes the same way."""
    return (unit.model, unit.weights, unit.family, unit.boundary.mode, unit.boundary.layout,
            *_precision(unit.precision), *sorted(t.target.name for t in unit.targets))


def unit_cost(unit: BuildUnit) -> int:
    return _cost(len(unit.targets))


def _cost(targets: int) -> int:
    return LOWERING_COST + targets


def assign(identities: Sequence[Identity], costs: Sequence[int], n: int) -> list[int]:
    """The shard (0 to ``n`` - 1) of each item: largest cost first, then by identity, each
    goes to the least-loaded shard, the lowest on a tie. Depends only on the items, not
    their order. Its time and memory depend on the items alone, never on ``n``."""
    check_shard(1, n)
    if len(identities) != len(costs):
        raise ValueError(f"{len(identities)} identities but {len(costs)} costs")
    if any(c <= 0 for c in costs):
        raise ValueError(f"every cost must be positive, got {sorted(set(costs))[0]}")
    # Only the shards dealt something are held (a heap of (load, shard)): every cost is positive, so
    # an untouched shard, at load 0, is the least loaded, and the lowest untouched one is the next.
    used: list[tuple[int, int]] = []
    untouched = 0
    shard_of = [0] * len(identities)
    for i in sorted(range(len(identities)), key=lambda i: (-costs[i], identities[i])):
        if untouched < n:
            s, load = untouched, 0
            untouched += 1
        else:
            load, s = heapq.heappop(used)
        shard_of[i] = s
        heapq.heappush(used, (load + costs[i], s))
    return shard_of


def shard(units: Sequence[BuildUnit], k: int, n: int) -> list[BuildUnit]:
    """The units of shard ``k`` of ``n`` (1-based), in their given order."""
    check_shard(k, n)
    of = assign([unit_identity(u) for u in units], [unit_cost(u) for u in units], n)
    return [u for u, s in zip(units, of, strict=True) if s == k - 1]


def request_groups(requests: Sequence[BuildRequest]) -> dict[Identity, list[int]]:
    """The requests' positions by the unit they build in: model, weights, TOSA family and
    boundary, as the resolver groups them (``Resolver._units``)."""
    groups: dict[Identity, list[int]] = {}
    for i, r in enumerate(requests):
        key = (r.spec.name, r.weights.name, r.target.tosa_spec or PORTABLE, r.boundary.mode, r.boundary.layout,
               *_precision(r.precision))
        groups.setdefault(key, []).append(i)
    return groups


def in_shard(requests: Sequence[BuildRequest], k: int, n: int) -> list[bool]:
    """Whether each request is in shard ``k`` of ``n``: whole units are sharded, so the
    targets that share a lowering stay together."""
    check_shard(k, n)
    groups = request_groups(requests)
    targets = [sorted({requests[i].target.name for i in members}) for members in groups.values()]
    identities = [(*key, *names) for key, names in zip(groups, targets, strict=True)]
    costs = [_cost(len(names)) for names in targets]
    chosen = [False] * len(requests)
    for members, s in zip(groups.values(), assign(identities, costs, n), strict=True):
        if s == k - 1:
            for i in members:
                chosen[i] = True
    return chosen
