"""Choosing Vela options for an SRAM budget, and what a budget does to targets and keys."""

from __future__ import annotations

import pytest

from zoo import BuildError, UsageError
from zoo._spec import Dataset, InputSpec, ModelSpec, WeightsVariant
from zoo.registry.npu.memory_fit import SIZE, Candidate, candidate_flags, choose, fit_record
from zoo.registry.npu.targets import TargetTable
from zoo.registry.request.keys import BuildRequest


@pytest.fixture
def table() -> TargetTable:
    return TargetTable()


def test_the_fastest_fitting_candidate_wins(table: TargetTable) -> None:
    t = table.resolve("u55-128", sram_budget=1000)
    perf, size = Candidate((), 1500, 20.0), Candidate((SIZE,), 400, 21.0)
    assert choose(t, 2000, [perf, size]) is perf
    assert choose(t, 1000, [perf, size]) is size


def test_ties_go_to_the_smaller_sram_need(table: TargetTable) -> None:
    t = table.resolve("u65-256", sram_budget=1000)
    a, b = Candidate((), 900, 5.0), Candidate(("--arena-cache-size=1000",), 600, 5.0)
    assert choose(t, 1000, [a, b]) is b


def test_nothing_fits_names_the_smallest_sram_achieved(table: TargetTable) -> None:
    t = table.resolve("u55-128", sram_budget=100)
    with pytest.raises(BuildError) as e:
        choose(t, 100, [Candidate((), 18496, 0.27), Candidate((SIZE,), 7728, 0.32)])
    msg = str(e.value)
    assert "budget of 100 B" in msg and "smallest SRAM Vela achieved is 7.5 KiB (7728 bytes) with --optimise=Size" in msg
    assert "--sram-budget" in msg


def test_candidates_add_an_arena_cache_cap_only_where_sram_is_a_cache(table: TargetTable) -> None:
    u55 = table.resolve("u55-128")
    assert candidate_flags(u55, 100_000) == [(), (SIZE,)]
    u65 = table.resolve("u65-256")  # Dedicated_Sram_384KB: the arena lives in DRAM, SRAM caches it
    assert candidate_flags(u65, 100_000) == [(), (SIZE,), ("--arena-cache-size=100000",)]
    assert candidate_flags(u65, 384 * 1024) == [(), (SIZE,)]  # the mode's own cache already fits
    shared = table.resolve("u65-256", memory_mode="Shared_Sram")
    assert candidate_flags(shared, 100_000) == [(), (SIZE,)]


def test_the_record_says_where_the_budget_came_from(table: TargetTable) -> None:
    board = table.resolve("imx93")
    assert board.sram_budget == 640 * 1024
    chosen = Candidate((SIZE,), 300_000, 10.0)
    record = fit_record(board, board.sram_budget, chosen, [Candidate((), 900_000, 9.0), chosen])
    assert record["budget_from"] == "board imx93" and record["fits"] and record["selected_flags"] == [SIZE]
    assert [c["fits"] for c in record["candidates"]] == [False, True]
    explicit = table.resolve("imx93", sram_budget=1 << 20)
    assert fit_record(explicit, 1 << 20, chosen, [chosen])["budget_from"] == "--sram-budget"


def _request(table: TargetTable, **target: object) -> BuildRequest:
    spec = ModelSpec(
        name="tiny", version="1", description="", task="test", inputs=(InputSpec("x", (1, 4)),),
        build=lambda weights: None, example_inputs=lambda: (),
        calibration=Dataset(1, "one", lambda: [], identity=lambda: "fixed"),
        weights=(WeightsVariant("none", "no weights", "generated", "MIT", lambda: "none"),),
    )
    return BuildRequest.create(spec, table.resolve("u55-128", **target))  # type: ignore[arg-type]


def test_a_budget_is_part_of_the_key_and_its_absence_changes_nothing(table: TargetTable) -> None:
    plain = _request(table)
    assert "sram_budget" not in plain.key_inputs()["target"]  # keys of targets without a budget are unchanged
    small, large = _request(table, sram_budget=400 * 1024), _request(table, sram_budget=2 << 20)
    assert len({plain.key(), small.key(), large.key()}) == 3
    assert small.key() == _request(table, sram_budget=400 * 1024).key()


def test_bad_budgets_are_refused(table: TargetTable) -> None:
    with pytest.raises(UsageError, match="positive size"):
        table.resolve("u55-128", sram_budget=0)
    with pytest.raises(UsageError, match="--sram-budget"):
        table.resolve("portable", sram_budget=1024)
