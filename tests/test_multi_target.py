"""Many targets for the cost of one, parallel builds, and fitting a board's SRAM.

mnist is built for two targets of each TOSA specification in one pipeline run;
the targets that were retargeted (Vela rerun, not lowered) must be
byte-identical to builds of their own. mv2's memory fit comes from the shared
``built`` fixture (its u55-1000k board shares the u55-128 lowering).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import run_zoo
from tests.split_model import SPLIT_MODEL
from zoo import Artifact, BuildError, Zoo
from zoo.registry.compile import lower
from zoo.registry.npu.memory_fit import SIZE

pytestmark = pytest.mark.compile

FAMILIES = {"u55-128": "u55", "u55-64": "u55", "u65-256": "u55", "u85-256": "u85", "u85-128": "u85"}
RETARGETED = ["u55-64", "u65-256", "u85-128"]  # the first of each family is the one lowered


@pytest.fixture(scope="module")
def multi(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[dict[str, Artifact], list[str]]]:
    """mnist for FAMILIES in one `zoo build --target ...`, counting the lowerings."""
    lowered: list[str] = []
    real = lower._lower_ethosu

    def counting(*args: Any, **kwargs: Any) -> Any:
        result = real(*args, **kwargs)
        lowered.append(result.target.name)
        return result

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ZOO_CACHE_DIR", str(tmp_path_factory.mktemp("multi-cache")))
        mp.setattr(lower, "_lower_ethosu", counting)
        arts = Zoo().fetch_many(["mnist"], list(FAMILIES), force_build=True)
    yield dict(zip(FAMILIES, arts, strict=True)), lowered


def test_one_lowering_per_tosa_specification(multi: tuple[dict[str, Artifact], list[str]]) -> None:
    arts, lowered = multi
    assert lowered == ["ethos-u55-128", "ethos-u85-256"]
    accelerators = [a.manifest.key_inputs["target"]["accelerator"] for a in arts.values()]
    assert accelerators == [f"ethos-{t}" for t in FAMILIES]
    for target, art in arts.items():
        assert art.source == "build"
        assert art.manifest.build["built_with"] == [f"ethos-{t}" for t in FAMILIES]
        assert f"--accelerator-config=ethos-{target}".encode() in art.pte.read_bytes()
    # Vela really ran per target: the estimates differ within a family.
    times = {t: a.manifest.vela["total"]["inference_time_ms"] for t, a in arts.items()}  # type: ignore[index]
    assert times["u55-64"] > times["u55-128"] and times["u85-128"] > times["u85-256"]


@pytest.mark.parametrize("target", RETARGETED)
def test_retargeted_artifact_is_byte_identical_to_its_own_build(
    multi: tuple[dict[str, Artifact], list[str]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    monkeypatch.setenv("ZOO_CACHE_DIR", str(tmp_path / "single"))
    single = Zoo().fetch("mnist", target)
    retargeted = multi[0][target]
    assert single.source == "build" and single.key == retargeted.key
    assert single.pte.read_bytes() == retargeted.pte.read_bytes()
    assert single.header.read_bytes() == retargeted.header.read_bytes()
    assert single.manifest.vela == retargeted.manifest.vela
    assert single.manifest.cpu_operators == retargeted.manifest.cpu_operators


def test_the_lowered_targets_match_the_shared_single_family_builds(
    multi: tuple[dict[str, Artifact], list[str]], built: dict[tuple[str, str], Artifact]
) -> None:
    for target in ("u55-128", "u85-256"):
        assert multi[0][target].pte.read_bytes() == built[("mnist", target)].pte.read_bytes()


def test_parallel_jobs_build_the_same_bytes(built: dict[tuple[str, str], Artifact], tmp_path: Path) -> None:
    r = run_zoo("build", "add", "--target", "u55-128,u85-256,portable", "--jobs", "2", "--json",
                env={"ZOO_CACHE_DIR": str(tmp_path / "cache")})
    assert r.returncode == 0, r.stderr
    arts = json.loads(r.stdout)
    assert [a["source"] for a in arts] == ["build"] * 3
    for a, target in zip(arts, ("u55-128", "u85-256", "portable"), strict=True):
        assert Path(a["pte"]).read_bytes() == built[("add", target)].pte.read_bytes()
    again = run_zoo("fetch", "add", "--target", "u55-128,u85-256,portable", "-q",
                    env={"ZOO_CACHE_DIR": str(tmp_path / "cache")})
    assert again.returncode == 0
    assert again.stdout.split() == [p for a in arts for p in (a["pte"], a["header"], a.get("model_asm"), a["io_header"], a["io_source"]) if p]


# --- memory fit ---------------------------------------------------------------------------------


def test_mv2_budget_between_size_and_performance_selects_size(built: dict[tuple[str, str], Artifact]) -> None:
    art = built[("mv2", "u55-1000k")]
    fit = art.manifest.memory_fit
    assert fit is not None and fit["sram_budget_bytes"] == 1000 * 1024 and fit["budget_from"] == "board u55-1000k"
    tried = {tuple(c["flags"]): c for c in fit["candidates"]}
    performance, size = tried[()], tried[(SIZE,)]
    # The premise, as Vela measured it: the budget lies between the two.
    assert size["sram_bytes"] < fit["sram_budget_bytes"] < performance["sram_bytes"]
    assert performance["inference_time_ms"] < size["inference_time_ms"]
    assert fit["selected_flags"] == [SIZE] and fit["fits"] and fit["sram_bytes"] == size["sram_bytes"]
    total = art.manifest.vela["total"]  # type: ignore[index]
    assert total["sram_bytes"] == size["sram_bytes"] and total["inference_time_ms"] == size["inference_time_ms"]
    assert b"--optimise=Size" in art.pte.read_bytes()  # Vela compiled the delegate with it
    assert "--optimise=Size" in art.header.read_text()
    # The plain u55-128 build is Vela's default candidate, from the same lowering.
    plain = built[("mv2", "u55-128")]
    assert plain.manifest.memory_fit is None
    assert plain.manifest.vela["total"]["sram_bytes"] == performance["sram_bytes"]  # type: ignore[index]
    assert plain.pte.read_bytes() != art.pte.read_bytes() and b"--optimise" not in plain.pte.read_bytes()


def test_a_board_with_sram_gets_the_fastest_build_that_fits(built: dict[tuple[str, str], Artifact]) -> None:
    for model in ("add", "mv2"):
        fit = built[(model, "imx93")].manifest.memory_fit
        assert fit is not None and fit["sram_budget_bytes"] == 640 * 1024 and fit["budget_from"] == "board imx93"
        fitting = [c for c in fit["candidates"] if c["fits"]]
        fastest = min(fitting, key=lambda c: (c["inference_time_ms"], c["sram_bytes"]))
        assert fit["fits"] and fit["selected_flags"] == fastest["flags"]
        assert all(c["fits"] == (c["sram_bytes"] <= fit["sram_budget_bytes"]) for c in fit["candidates"])


def test_a_budget_below_the_smallest_sram_fails_and_leaves_nothing(
    built: dict[tuple[str, str], Artifact], tmp_path: Path
) -> None:
    cache, out = tmp_path / "cache", tmp_path / "out"
    r = run_zoo("fetch", "mnist", "-t", "u55-128", "--sram-budget", "1KiB", "-o", str(out),
                env={"ZOO_CACHE_DIR": str(cache)})
    assert r.returncode == 1
    m = re.search(r"nothing fits ethos-u55-128's SRAM budget of 1\.0 KiB \(1024 bytes\): the smallest SRAM Vela "
                  r"achieved is [\d.]+ KiB \((\d+) bytes\) with --optimise=Size", r.stderr)
    assert m, r.stderr
    smallest = int(m.group(1))
    performance = built[("mnist", "u55-128")].manifest.vela["total"]["sram_bytes"]  # type: ignore[index]
    assert 1024 < smallest < performance
    assert not out.exists()
    assert list(cache.glob("v1/entries/*/*")) == []


def test_the_api_raises_the_same_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("ZOO_CACHE_DIR", str(tmp_path / "cache"))
    with pytest.raises(BuildError, match="nothing fits ethos-u55-128's SRAM budget of 16 B"):
        Zoo().fetch("add", "u55-128", sram_budget=16)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--target", "u55-128,nope"), "unknown target 'nope'"),
        (("--target", "u55-128", "--sram-budget", "lots"), "--sram-budget: expected a size"),
        (("--target", "portable", "--sram-budget", "1MiB"), "takes no --system-config, --memory-mode or --sram-budget"),
        (("--all-models", "--target", "u55-128"), "give a MODEL or --all-models, not both"),
    ],
)
def test_bad_multi_target_input_fails_before_compiling(args: tuple[str, ...], message: str) -> None:
    r = run_zoo("build", "add", *args)
    assert r.returncode == 2 and message in r.stderr, r.stderr
    assert "lower" not in r.stderr


def test_verify_a_file_built_for_a_budget(built: dict[tuple[str, str], Artifact], tmp_path: Path) -> None:
    from zoo.registry.npu.targets import TargetTable
    from zoo.registry.verify.verification import verify_file

    art = built[("mv2", "u55-1000k")]
    out = tmp_path / "out"
    out.mkdir()
    for src in (art.pte, art.header, art.pte.parent / "manifest.json"):
        (out / src.name).write_bytes(src.read_bytes())
    pte = out / art.pte.name
    table = TargetTable()
    with_budget = table.resolve("u55-128", sram_budget=1000 * 1024)
    assert verify_file(pte, target=with_budget).passed  # the manifest says which options the budget chose
    plain = verify_file(pte, target=table.resolve("u55-128"))
    assert not plain.passed and "add --optimise=Size, which the --target does not say" in " ".join(plain.problems())
    (out / "manifest.json").unlink()
    alone = verify_file(pte, target=with_budget)
    assert alone.passed and any("--optimise and --arena-cache-size are not compared" in n for n in alone.notes)
    assert not verify_file(pte, target=table.resolve("u55-64", sram_budget=1000 * 1024)).passed


def test_a_failure_in_a_worker_process_is_reported_and_caches_nothing(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    r = run_zoo("build", "add", "--target", "u55-128,u85-256", "--sram-budget", "16", "--jobs", "2",
                env={"ZOO_CACHE_DIR": str(cache)})
    assert r.returncode == 1, r.stderr
    assert "zoo: error: model 'add' (weights 'none') for target 'ethos-u55-128': nothing fits" in r.stderr
    assert "(1 more build(s) failed too)" in r.stderr and "Traceback" not in r.stderr
    assert list(cache.glob("v1/entries/*/*")) == []


def test_a_budget_answered_from_the_cached_default_is_byte_identical_to_a_real_budget_build(
    built: dict[tuple[str, str], Artifact], tmp_path: Path
) -> None:
    """mnist's default build fits 512 KiB with its own Vela options, so the budget is
    answered from it (build_units/derive.py); a real budget build in an empty cache must give
    the very .pte and header."""
    import shutil

    default = built["mnist", "u55-128"]
    cache = tmp_path / "derived"
    entry = default.pte.parent
    shutil.copytree(entry, cache / entry.relative_to(entry.parents[3]))
    derived = run_zoo("fetch", "mnist", "-t", "u55-128", "--sram-budget", "512KiB", "-o", str(tmp_path / "d"),
                      env={"ZOO_CACHE_DIR": str(cache)})
    assert derived.returncode == 0, derived.stderr
    assert "the artifact for this budget (no compile)" in " ".join(derived.stderr.split())
    real = run_zoo("build", "mnist", "-t", "u55-128", "--sram-budget", "512KiB", "-o", str(tmp_path / "r"),
                   env={"ZOO_CACHE_DIR": str(tmp_path / "real")})
    assert real.returncode == 0, real.stderr
    for name in ("mnist_u55-128.pte", "mnist_u55-128.h"):
        assert (tmp_path / "d" / name).read_bytes() == (tmp_path / "r" / name).read_bytes(), name
    made, compiled = (json.loads((tmp_path / d / "manifest.json").read_text()) for d in ("d", "r"))
    assert made["key"] == compiled["key"] and made["memory_fit"] == compiled["memory_fit"]


def test_a_model_with_two_partitions_is_retargeted_delegate_by_delegate(tmp_path: Path) -> None:
    """Each delegate gets Vela with its own compile spec: ExecuTorch's vela_compile appends a
    graph's output folder and .tosa path to the spec's flags, so a shared spec broke the second."""
    model = tmp_path / "split_net.py"
    model.write_text(SPLIT_MODEL)
    built = run_zoo("--model-file", str(model), "build", "-t", "u55-128,u65-256", "--json",
                    env={"ZOO_CACHE_DIR": str(tmp_path / "cache")})
    assert built.returncode == 0, built.stderr
    arts = json.loads(built.stdout)
    assert [a["manifest"]["target"] for a in arts] == ["ethos-u55-128", "ethos-u65-256"]
    assert [a["manifest"]["delegation"]["partitions"] for a in arts] == [2, 2]
    assert arts[1]["manifest"]["build"]["built_with"] == ["ethos-u55-128", "ethos-u65-256"]
