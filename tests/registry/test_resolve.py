"""The resolve policy and the unit of work, on the fast tier: the real resolver,
executor, assembly, checks and cache, with a compile step that lowers nothing
(tests/fake_compile.py) and a remote in memory (tests/memory_remote.py)."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import pickle
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import run_zoo
from tests.fake_compile import DATA, FakeCompile
from tests.memory_remote import MemoryRemote
from zoo import BuildError, FetchArgs, FetchOptions, IntegrityError, UsageError, Zoo
from zoo.registry.build_units.accept import accept
from zoo.registry.build_units.run import run_unit
from zoo.registry.build_units.unit import BuildUnit, BuiltArtifact, UnitFailure, UnitTarget
from zoo.registry.resolve import Resolver
from zoo.registry.store.cache import Cache


def _unit(zoo: Zoo, *targets: str) -> BuildUnit:
    reqs = [zoo.request("add", t) for t in targets]
    return BuildUnit("add", reqs[0].weights.name, tuple(UnitTarget(r.target, r.key_inputs()) for r in reqs),
                     plugins=zoo.load_options)


def test_a_fetch_builds_once_then_the_cache_answers(fake_compile: FakeCompile) -> None:
    zoo = Zoo()
    first = zoo.fetch("add", "u55-128")
    again = zoo.fetch("add", "u55-128")
    assert (first.source, again.source) == ("build", "cache")
    assert fake_compile.calls == [("add", ["ethos-u55-128"])]
    assert first.pte.read_bytes() == (DATA / "add_u55-128.pte").read_bytes()
    assert first.verification is not None and first.verification.passed
    # Printed in a notebook or a log: one line, not the manifest's kilobytes.
    assert repr(again) == f"Artifact('add' for 'ethos-u55-128', weights 'none', from cache, pte={str(again.pte)!r})"


def test_each_tosa_specification_is_its_own_unit(fake_compile: FakeCompile) -> None:
    arts = Zoo().fetch_many(["add"], ["u55-128", "portable"])
    assert fake_compile.calls == [("add", ["ethos-u55-128"]), ("add", ["portable"])]
    for art in arts:
        assert art.manifest.build["built_with"] == ["ethos-u55-128", "portable"]


def test_force_build_replaces_the_cached_entry(fake_compile: FakeCompile) -> None:
    Zoo().fetch("add", "u55-128")
    rebuilt = Zoo().fetch("add", "u55-128", force_build=True)
    assert rebuilt.source == "build" and len(fake_compile.calls) == 2


def test_no_build_on_an_empty_cache_fails_and_stores_nothing(fake_compile: FakeCompile, isolated: Path) -> None:
    # No zoo.toml: the default remote is tried (refused on loopback, see tests/conftest.py) and named.
    with pytest.raises(BuildError, match=r"not in the cache; hf://\S+: cannot reach .+; and building was ruled out"):
        Zoo().fetch("add", "u55-128", build=False)
    assert fake_compile.calls == []
    assert list(Cache(isolated / "cache").keys()) == []


def test_a_corrupt_entry_is_evicted_and_built_again(fake_compile: FakeCompile) -> None:
    art = Zoo().fetch("add", "u55-128")
    cached = Cache(Zoo().cache_dir).entry_path(art.key) / art.pte.name
    data = cached.read_bytes()
    cached.write_bytes(data[:-1] + bytes([data[-1] ^ 1]))
    notes: list[str] = []
    again = Zoo().fetch("add", "u55-128", notice=notes.append)
    assert again.source == "build" and len(fake_compile.calls) == 2
    assert any("is corrupt" in n and "building again" in n for n in notes), notes


def test_with_no_build_a_corrupt_entry_is_removed_without_promising_a_build(fake_compile: FakeCompile) -> None:
    art = Zoo().fetch("add", "u55-128")
    cached = Cache(Zoo().cache_dir).entry_path(art.key) / art.pte.name
    cached.write_bytes(b"not a program")
    notes: list[str] = []
    with pytest.raises(BuildError, match=r"building was ruled out \(--no-build\)"):
        Zoo().fetch("add", "u55-128", build=False, notice=notes.append)
    assert any("is corrupt" in n and n.endswith("; removing it") for n in notes), notes
    assert len(fake_compile.calls) == 1


def test_a_failed_unit_raises_the_error_it_raised_with_its_fields(fake_compile: FakeCompile, isolated: Path) -> None:
    fake_compile.fail = BuildError("model 'add': lowering failed in pass FoldPass", stage="lower",
                                   operator="aten.add.Tensor", pass_name="FoldPass")
    with pytest.raises(BuildError) as caught:
        Zoo().fetch("add", "u55-128")
    assert str(caught.value) == "model 'add': lowering failed in pass FoldPass"
    assert (caught.value.stage, caught.value.operator, caught.value.pass_name) == ("lower", "aten.add.Tensor", "FoldPass")
    assert list(Cache(isolated / "cache").keys()) == []


def test_run_unit_returns_failures_as_data(fake_compile: FakeCompile) -> None:
    zoo = Zoo()
    fake_compile.fail = BuildError("nothing fits", stage="memory fit")
    result = run_unit(_unit(zoo, "u55-128"), catalog=zoo.registry.catalog)
    assert result.outcomes == (UnitFailure("BuildError", "nothing fits", stage="memory fit"),)


def test_a_unit_is_small_plain_data(fake_compile: FakeCompile) -> None:
    unit = _unit(Zoo(), "u55-128", "u65-256")
    data = pickle.dumps(unit)
    assert pickle.loads(data) == unit
    assert len(data) < 16_000, len(data)


def test_a_fresh_process_finds_the_model_from_the_unit_alone(fake_compile: FakeCompile) -> None:
    result = run_unit(_unit(Zoo(), "u55-128"))  # no catalog: the unit's plugin options load it
    [built] = result.outcomes
    assert isinstance(built, BuiltArtifact) and built.manifest.model == "add"


@pytest.fixture
def built_unit(fake_compile: FakeCompile) -> tuple[BuiltArtifact, UnitTarget]:
    zoo = Zoo()
    unit = _unit(zoo, "u55-128")
    [built] = run_unit(unit, catalog=zoo.registry.catalog).outcomes
    assert isinstance(built, BuiltArtifact)
    return built, unit.targets[0]


def test_accept_stores_what_checks_out(built_unit: tuple[BuiltArtifact, UnitTarget], tmp_path: Path) -> None:
    built, wanted = built_unit
    entry = accept(built, wanted, Cache(tmp_path / "c"))
    assert entry.key == wanted.key and entry.file("pte") is not None


def test_accept_refuses_bytes_that_do_not_match_the_manifest(built_unit: tuple[BuiltArtifact, UnitTarget], tmp_path: Path) -> None:
    built, wanted = built_unit
    name = next(n for n in built.files if n.endswith(".pte"))
    tampered = BuiltArtifact(built.manifest, {**built.files, name: built.files[name][:-1] + bytes([built.files[name][-1] ^ 1])})
    with pytest.raises(BuildError, match=f"{name} does not match its manifest record"):
        accept(tampered, wanted, Cache(tmp_path / "c"))
    assert list(Cache(tmp_path / "c").keys()) == []


def test_accept_names_the_key_inputs_a_worker_got_wrong(built_unit: tuple[BuiltArtifact, UnitTarget], tmp_path: Path) -> None:
    built, wanted = built_unit
    other = {**wanted.key_inputs, "tools": {**wanted.key_inputs["tools"], "torch": "2.0.0"}}
    with pytest.raises(BuildError, match=r"tools\.torch is '2\.0\.0' here, '[^']+' in the build"):
        accept(built, dataclasses.replace(wanted, key_inputs=other), Cache(tmp_path / "c"))


def test_accept_refuses_a_structure_record_that_is_not_what_the_pte_shows(
    built_unit: tuple[BuiltArtifact, UnitTarget], tmp_path: Path
) -> None:
    built, wanted = built_unit
    m = dataclasses.replace(built.manifest, verification={"structure": {"passed": True, "checks": []}})
    with pytest.raises(BuildError, match="differ from the ones it recorded"):
        accept(BuiltArtifact(m, built.files), wanted, Cache(tmp_path / "c"))


def test_a_published_artifact_is_fetched_instead_of_built(fake_compile: FakeCompile, tmp_path: Path) -> None:
    zoo = Zoo()
    art = zoo.fetch("add", "u55-128")
    remote = MemoryRemote()
    remote.publish([Cache(zoo.cache_dir).get(art.key)], say=lambda m: None)  # type: ignore[list-item]
    fresh = Cache(tmp_path / "elsewhere")
    resolver = Resolver(fresh, FetchOptions(), remotes=[remote], catalog=zoo.registry.catalog, notice=lambda m: None)
    [(entry, source)] = resolver.resolve([zoo.request("add", "u55-128")])
    assert source == "remote" and entry.key == art.key and len(fake_compile.calls) == 1


def test_publish_without_a_target_publishes_what_the_cache_holds_of_the_model(fake_compile: FakeCompile,
                                                                             tmp_path: Path) -> None:
    zoo = Zoo()
    built = {zoo.fetch("add", t).key for t in ("u55-128", "portable")}
    report = zoo.publish(str(tmp_path / "remote"), model="add")
    assert {r.key for r in report.added} == built and report.already == []
    assert {r.key for r in zoo.publish(str(tmp_path / "remote"), model="add").already} == built
    with pytest.raises(UsageError, match=r"no cached artifact of add matches: fetch one first \('zoo fetch add -t TARGET'\)"):
        zoo.publish(str(tmp_path / "remote"), model="add", memory_mode="Dedicated_Sram")


def test_a_tampered_download_is_refused_and_nothing_is_cached(fake_compile: FakeCompile, tmp_path: Path) -> None:
    zoo = Zoo()
    art = zoo.fetch("add", "u55-128")
    remote = MemoryRemote()
    remote.publish([Cache(zoo.cache_dir).get(art.key)], say=lambda m: None)  # type: ignore[list-item]
    pte = next(p for p in remote.files if p.endswith(".pte"))
    remote.files[pte] = remote.files[pte][:-1] + bytes([remote.files[pte][-1] ^ 1])
    fresh = Cache(tmp_path / "elsewhere")
    resolver = Resolver(fresh, FetchOptions(build=False), remotes=[remote], catalog=zoo.registry.catalog,
                        notice=lambda m: None)
    with pytest.raises(IntegrityError, match="nothing of it was cached"):
        resolver.resolve([zoo.request("add", "u55-128")])
    assert list(fresh.keys()) == []


def test_fetch_keyword_arguments_are_exactly_the_options() -> None:
    assert set(FetchArgs.__annotations__) == {f.name for f in dataclasses.fields(FetchOptions)}


def test_an_unknown_fetch_option_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="unknown fetch option"):
        Zoo().fetch("add", "u55-128", colour="red")  # type: ignore[call-arg]


def _rewrite_header(entry_path: Path, change: Callable[[str], str], kind: str = "header") -> None:
    """Change the cached header (or .s) and update the manifest's record of it: every hash agrees."""
    manifest_path = entry_path / "manifest.json"
    data = json.loads(manifest_path.read_text())
    record = next(f for f in data["files"] if f["kind"] == kind)
    header = entry_path / record["name"]
    header.write_text(change(header.read_text()))
    record["size"] = header.stat().st_size
    record["sha256"] = hashlib.sha256(header.read_bytes()).hexdigest()
    manifest_path.write_text(json.dumps(data))


@pytest.mark.parametrize(("kind", "change", "problem"), [
    ("header", lambda h: h.replace('TARGET "ethos-u55-128"', 'TARGET "ethos-u85-256"'),
     'MODEL_PTE_TARGET is "ethos-u85-256", the manifest says "ethos-u55-128"'),
    ("header", lambda h: h.replace("#define MODEL_PTE_LEN 3584u", "#define MODEL_PTE_LEN 3583u", 1),
     "does not match its .pte"),
    ("model_asm", lambda h: h.replace('.incbin "add_u55-128.pte"', '.incbin "other.pte"'),
     "line 9 is '    .incbin \"other.pte\"', expected '    .incbin \"add_u55-128.pte\"'"),
    ("model_asm", lambda h: h.replace('.section "network_model_sec"', '.section ".data"'),
     "line 4 is '    .section \".data\", \"a\", %progbits'"),
])
@pytest.mark.slow
def test_a_cached_header_is_checked_in_full_by_verify_and_by_cache_verify(
    fake_compile: FakeCompile, kind: str, change: Callable[[str], str], problem: str
) -> None:
    """A hand-out relies on the sha256s the entry was stored with (its header and .s were checked
    in full on entering the cache); zoo verify and zoo cache verify render them again."""
    art = Zoo().fetch("add", "u55-128")
    _rewrite_header(art.pte.parent, change, kind)
    verified = Zoo().verify("add", "u55-128", numerics=False, build=False)
    assert not verified.passed and any(problem in p for p in verified.problems())
    proc = run_zoo("cache", "verify")
    assert proc.returncode == 1 and problem in proc.stderr + proc.stdout


def test_a_build_whose_header_does_not_match_is_refused_before_it_is_cached(
    fake_compile: FakeCompile, isolated: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from zoo.registry.build_units import assemble as assembling

    real = assembling.pte_header

    def wrong_target(*args: object, **kwargs: object) -> str:
        return real(*args, **kwargs).replace('TARGET "ethos-u55-128"', 'TARGET "ethos-u85-256"')  # type: ignore[arg-type]

    monkeypatch.setattr(assembling, "pte_header", wrong_target)
    with pytest.raises(BuildError, match=re.escape('MODEL_PTE_TARGET is "ethos-u85-256", the manifest says "ethos-u55-128"')):
        Zoo().fetch("add", "u55-128")
    assert list(Cache(isolated / "cache").keys()) == []
