"""``--sram-budget`` answered from the cached default build when its own Vela options
win (``zoo/registry/build_units/derive.py``): no compile, the default's .pte, the budget's
header and manifest. The compile tier checks the bytes against a real budget build
(tests/test_multi_target.py)."""

from __future__ import annotations

import json

import pytest

from tests.fake_compile import DATA, FakeCompile
from zoo import BuildError, Failure, Zoo

ADD_VELA = json.loads((DATA / "add_u55-128.json").read_text())["vela"]


def test_a_budget_the_default_build_meets_best_is_answered_from_it_without_compiling(
    fake_compile: FakeCompile,
) -> None:
    default = Zoo().fetch("add", "u55-128")
    notes: list[str] = []
    budgeted = Zoo().fetch("add", "u55-128", sram_budget=1 << 20, notice=notes.append)
    assert fake_compile.calls == [("add", ["ethos-u55-128"])]  # the default's build only
    assert budgeted.key != default.key and budgeted.pte.read_bytes() == default.pte.read_bytes()
    fit = budgeted.manifest.memory_fit
    assert fit is not None and fit["sram_budget_bytes"] == 1 << 20 and fit["selected_flags"] == []
    assert [c["flags"] for c in fit["candidates"]] == [[], ["--optimise=Size"]]
    assert "SRAM_BUDGET_BYTES 1048576" in budgeted.header.read_text()
    assert budgeted.manifest.build["derived_from"] == default.key
    assert "alternatives" not in (budgeted.manifest.vela or {})
    assert any("the artifact for this budget (no compile)" in n for n in notes)
    assert budgeted.verification is not None and budgeted.verification.passed
    again = Zoo().fetch("add", "u55-128", sram_budget=1 << 20)
    assert again.source == "cache" and again.key == budgeted.key


def test_a_budget_nothing_fits_fails_from_the_default_build_without_compiling(fake_compile: FakeCompile) -> None:
    """Issue 31: an unfittable --sram-budget compiled again (9.5 s for mv2) although the default
    build had recorded every candidate's SRAM."""
    Zoo().fetch("add", "u55-128")
    smallest = min(ADD_VELA["total"]["sram_bytes"], *(a["sram_bytes"] for a in ADD_VELA["alternatives"]))
    with pytest.raises(BuildError, match=r"model 'add' \(weights 'none'\) for target 'ethos-u55-128': nothing fits") as caught:
        Zoo().fetch("add", "u55-128", sram_budget=smallest - 1)
    assert caught.value.stage == "memory fit"
    assert len(fake_compile.calls) == 1  # only the default's build
    (failure,) = Zoo().fetch_outcomes(["add"], ["u55-128"], sram_budget=smallest - 1, keep_going=True)
    assert isinstance(failure, Failure) and failure.recorded and failure.source == "cache"
    assert len(fake_compile.calls) == 1


def test_force_build_never_takes_the_default(fake_compile: FakeCompile) -> None:
    Zoo().fetch("add", "u55-128")
    with pytest.raises(BuildError, match="the fake compile only has add for u55-128"):
        Zoo().fetch("add", "u55-128", sram_budget=1 << 20, force_build=True)


def test_the_summary_says_what_a_budget_covers_and_where_the_rest_lives(fake_compile: FakeCompile) -> None:
    """Issue 31: "fits" read as if the planned buffers were in the budget, and "Cortex-M"
    was said of boards whose runtime runs on a Cortex-A55."""
    from zoo.cli.format import _summary

    Zoo().fetch("add", "u55-128")
    text = _summary(Zoo().fetch("add", "u55-128", sram_budget=1 << 20), layouts=("nchw",))
    assert "RAM to reserve for ExecuTorch's runtime: planned " in text and "Cortex-M" not in text
    assert "SRAM budget 1.0 MiB (--sram-budget): the NPU's own SRAM, " in text and " fits with Vela's default" in text
    assert "the budget covers the NPU's scratch (the temp allocator); the planned buffers and the method allocator" in text
