"""The content-addressed cache: atomic entries, verified hits, pruning."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from zoo.registry.store.cache import Cache, CorruptEntry
from zoo.registry.store.manifest import FileRecord, Manifest


def _manifest(key: str, files: dict[str, bytes]) -> Manifest:
    return Manifest(
        key=key, model="m", target="t", key_inputs={"k": 1},
        files=[FileRecord(n, "pte" if n.endswith(".pte") else "header", len(d), hashlib.sha256(d).hexdigest()) for n, d in files.items()],
    )


@pytest.fixture
def stored(tmp_path: Path) -> tuple[Cache, str]:
    cache = Cache(tmp_path / "c")
    files = {"m.pte": b"\x00" * 4 + b"ET12" + b"x" * 100, "m.h": b"/* h */"}
    cache.put(_manifest("ab" * 32, files), files)
    return cache, "ab" * 32


def test_put_then_get_verifies(stored: tuple[Cache, str]) -> None:
    cache, key = stored
    entry = cache.get(key)
    assert entry is not None
    assert entry.file("pte") is not None and entry.file("pte").read_bytes()[4:8] == b"ET12"  # type: ignore[union-attr]
    assert list(cache.keys()) == [key]
    assert not list((cache.base / "tmp").iterdir()), "staging left behind"


def test_missing_key_is_none(stored: tuple[Cache, str]) -> None:
    assert stored[0].get("cd" * 32) is None


@pytest.mark.parametrize(
    ("damage", "problem"),
    [
        (lambda p: p.joinpath("m.pte").write_bytes(p.joinpath("m.pte").read_bytes()[:-1] + b"y"), "m.pte has sha256"),
        (lambda p: p.joinpath("m.pte").write_bytes(b"short"), "m.pte is 5 bytes"),
        (lambda p: p.joinpath("m.h").unlink(), "m.h is missing"),
        (lambda p: p.joinpath("manifest.json").write_text("{not json"), "manifest.json is unreadable"),
        (lambda p: p.joinpath("manifest.json").unlink(), "manifest.json is missing"),
    ],
)
def test_corruption_is_detected(stored: tuple[Cache, str], damage, problem: str) -> None:  # type: ignore[no-untyped-def]
    cache, key = stored
    damage(cache.entry_path(key))
    with pytest.raises(CorruptEntry) as err:
        cache.get(key)
    assert problem in str(err.value) and key[:12] in str(err.value)
    assert next(p for _, _, p in cache.scan(verify=True)) is not None


def test_evict_removes_the_entry(stored: tuple[Cache, str]) -> None:
    cache, key = stored
    cache.evict(key)
    assert cache.get(key) is None
    assert not cache.entry_path(key).exists()


def test_failed_put_leaves_nothing(tmp_path: Path) -> None:
    cache = Cache(tmp_path / "c")
    with pytest.raises(Exception, match="refusing"):
        cache.put(_manifest("ef" * 32, {"../evil": b"x"}), {"../evil": b"x"})
    assert cache.get("ef" * 32) is None
    assert not list((cache.base / "tmp").iterdir())


def test_second_put_of_same_key_keeps_the_first(stored: tuple[Cache, str]) -> None:
    cache, key = stored
    files = {"m.pte": b"\x00" * 4 + b"ET12" + b"x" * 100, "m.h": b"/* h */"}
    cache.put(_manifest(key, files), files)
    assert cache.get(key) is not None
    assert not list((cache.base / "tmp").iterdir())


def test_an_entry_from_a_later_zoo_with_more_manifest_fields_still_reads(stored: tuple[Cache, str]) -> None:
    cache, key = stored
    path = cache.entry_path(key) / "manifest.json"
    data = json.loads(path.read_text())
    data["a_field_from_the_future"] = {"x": 1}
    path.write_text(json.dumps(data))
    entry = cache.get(key)
    assert entry is not None and entry.manifest.key == key
