"""The build key covers the model's code, and a build that fails its structure check
is a recorded failure, never an entry: what a plugin author hit (issue 19, part 3).

A plugin module of the test's own declares add's inputs, so the fast tier's fake
compile builds it with add's real bytes."""

from __future__ import annotations

import os
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fake_compile import FakeCompile
from zoo import BuildError, Zoo
from zoo._api import ZooOptions
from zoo.registry.store.cache import Cache

_PLUGIN = textwrap.dedent('''
    from zoo import Dataset, InputSpec, ModelSpec, WeightsVariant, hookimpl

    HIDDEN = {hidden}
    SHAPE = {shape}

    def _build(variant):
        import torch
        return torch.nn.Sequential(torch.nn.Identity())  # HIDDEN units in the real model

    def _example():
        import torch
        return (torch.ones(SHAPE), torch.ones(SHAPE))

    @hookimpl
    def register_models(register):
        register(ModelSpec(
            name="autoencoder", version="1", description="a plugin author's model", task="operator",
            inputs=(InputSpec("x", SHAPE), InputSpec("y", SHAPE)),
            build=_build, example_inputs=_example,
            calibration=Dataset(1, "ones", lambda: [_example()], lambda: "ones"),
            weights=(WeightsVariant("none", "none", "n/a", "n/a", lambda: "none"),),
        ))
''')


@pytest.fixture
def author(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The author's plugin module on sys.path, written with ``write(hidden=..., shape=...)``."""
    folder = tmp_path / "pack"
    folder.mkdir()
    monkeypatch.syspath_prepend(str(folder))
    yield folder / "author_pack.py"
    sys.modules.pop("author_pack", None)


def _write(module: Path, *, hidden: int = 128, shape: tuple[int, ...] = (1, 1, 1, 1)) -> None:
    before = module.stat().st_mtime_ns if module.exists() else 0
    module.write_text(_PLUGIN.format(hidden=hidden, shape=shape))
    later = max(before + 2_000_000_000, module.stat().st_mtime_ns)  # an edit a moment later: no stale bytecode
    os.utime(module, ns=(later, later))


def _zoo() -> Zoo:
    """A new process's view: the plugin module imported afresh."""
    sys.modules.pop("author_pack", None)
    return Zoo(ZooOptions(plugins=("author_pack",)))


@pytest.fixture
def fake(fake_compile: FakeCompile) -> FakeCompile:
    fake_compile.stand_ins = ("add", "autoencoder")
    return fake_compile


def test_changing_the_models_code_alone_builds_again(fake: FakeCompile, author: Path) -> None:
    _write(author, hidden=128)
    first = _zoo().fetch("autoencoder", "u55-128")
    assert _zoo().fetch("autoencoder", "u55-128").source == "cache"
    _write(author, hidden=64)  # the spec's version stays "1"
    again = _zoo().fetch("autoencoder", "u55-128")
    assert again.source == "build" and again.key != first.key
    assert [name for name, _ in fake.calls] == ["autoencoder", "autoencoder"]
    code = again.manifest.key_inputs["model"]["code"]
    assert set(code["modules"]) == {"author_pack"} and code["modules"]["author_pack"].startswith("sha256:")


def test_the_key_names_a_third_partys_distribution_but_not_zoos_own() -> None:
    zoo = Zoo()
    assert zoo.request("add", "u55-128").key_inputs()["model"]["code"]["distribution"] is None
    spec = zoo.model("add")
    from dataclasses import replace

    from zoo.registry.request.code_identity import code_identity

    assert code_identity(replace(spec, distribution="zoo-audio 0.2.0"))["distribution"] == "zoo-audio 0.2.0"


def test_a_build_that_fails_its_structure_check_is_recorded_as_a_failure_not_an_entry(
    fake: FakeCompile, author: Path, isolated: Path
) -> None:
    _write(author, shape=(1, 1, 1, 2))  # declares other inputs than the program it builds takes
    with pytest.raises(BuildError, match=r"fails its structure check .*nothing was cached") as caught:
        _zoo().fetch("autoencoder", "u55-128")
    assert caught.value.stage == "structure check"
    cache = Cache(isolated / "cache")
    assert list(cache.keys()) == []
    with pytest.raises(BuildError, match=r"an earlier build failed and was recorded"):
        _zoo().fetch("autoencoder", "u55-128")
    assert len(fake.calls) == 1  # the recorded failure answered; nothing compiled again
    _write(author, shape=(1, 1, 1, 1))  # the author fixes the plugin
    fixed = _zoo().fetch("autoencoder", "u55-128")
    assert fixed.source == "build" and len(fake.calls) == 2
