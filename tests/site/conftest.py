"""A cache for the site's tests, made of real manifests from the fast tier's fake compile: add on
u55-128 (float I/O), a failure recorded for portable, two variants of that build (int8 I/O, an SRAM
budget) and a build whose every name and word a hostile plugin or tampered cache chose."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import pytest

from tests.conftest import isolate
from tests.fake_compile import FakeCompile
from zoo import Artifact, BuildError, Zoo
from zoo.registry.request.keys import key_of
from zoo.registry.store.cache import Cache
from zoo.registry.store.manifest import Manifest

HOSTILE = "<script>alert(1)</script>\"'&"


def variant(cache: Cache, m: Manifest, **changes: object) -> Manifest:
    """Store ``m``'s files again as another build: ``changes`` to its key inputs and fields."""
    key_inputs = {**m.key_inputs, **{k: v for k, v in changes.items() if k in ("io", "target")}}
    fields = {k: v for k, v in changes.items() if k not in ("io", "target")}
    if "io" in changes:
        fields["io"] = {"inputs": [], "outputs": [], **(m.io or {}), **changes["io"]}  # type: ignore[dict-item]
    new = dataclasses.replace(m, key=key_of(key_inputs), key_inputs=key_inputs, **fields)  # type: ignore[arg-type]
    entry = cache.get(m.key)
    assert entry is not None
    cache.put(new, {f.name: (entry.path / f.name).read_bytes() for f in m.files})
    return new


@dataclasses.dataclass(frozen=True)
class SiteTemplate:
    cache: Path
    manifests: dict[str, Manifest]


@pytest.fixture(scope="session")
def site_template(tmp_path_factory: pytest.TempPathFactory, refusing_endpoint: str) -> SiteTemplate:
    """The cache below, built once per worker (by the fake compile, in a folder of its own); tests copy it."""
    import zoo.registry.compile

    root = tmp_path_factory.mktemp("site-template")
    with pytest.MonkeyPatch.context() as monkeypatch:
        isolate(monkeypatch, root, refusing_endpoint)
        fake = FakeCompile()
        monkeypatch.setattr(zoo.registry.compile, "compile_targets", fake)
        manifests = _fill(fake)
    return SiteTemplate(root / "cache", manifests)


@pytest.fixture
def site_cache(site_template: SiteTemplate, fake_compile: FakeCompile, isolated: Path) -> dict[str, Manifest]:
    """This test's own copy of the template, in its ZOO_CACHE_DIR."""
    shutil.copytree(site_template.cache, isolated / "cache")
    return dict(site_template.manifests)


def _fill(fake_compile: FakeCompile) -> dict[str, Manifest]:
    fake_compile.fail_on["portable"] = BuildError(
        f"add for portable: lowering failed in aten.add {HOSTILE}", stage="lower", operator="aten.add.Tensor")
    zoo = Zoo()
    outcomes = zoo.fetch_outcomes(["add"], ["u55-128", "portable"], keep_going=True)
    m: Manifest = next(o.manifest for o in outcomes if isinstance(o, Artifact))
    cache = zoo.cache
    int8 = variant(cache, m, io={"mode": "int8", "layout": "nchw"})
    budget = variant(cache, m, target={**m.key_inputs["target"], "sram_budget": 262144},
                     memory_fit={"sram_budget_bytes": 262144, "selected_flags": ["--optimise=Size"]})
    hostile_inputs = {**m.key_inputs, "model": {**m.key_inputs["model"], "name": HOSTILE},
                      "weights": {**m.key_inputs["weights"], "name": HOSTILE}}
    hostile = dataclasses.replace(
        m, model=HOSTILE, key=key_of(hostile_inputs), key_inputs=hostile_inputs, target=f"u55-128{HOSTILE}",
        weights_info={"name": "none", "description": HOSTILE, "origin": f"https://x.invalid/{HOSTILE}",
                      "licence": HOSTILE})
    entry = cache.get(m.key)
    assert entry is not None
    cache.put(hostile, {f.name: (entry.path / f.name).read_bytes() for f in m.files})
    return {"float": m, "int8": int8, "budget": budget, "hostile": hostile}
