"""Issue 55, defect 6: what zoo prints of a verification comes from a record it can check.

A cache entry's manifest is sealed (a MAC under the user's key, outside the cache:
``zoo/registry/store/seal.py``). A record edited in the cache is reported by ``zoo cache
verify`` and never shown as a result, nor believed by trusted keys. Fast tier: the fake
compile builds ``add``; the CLI runs in process.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from tests.conftest import isolate
from tests.fake_compile import FakeCompile
from zoo import Zoo
from zoo.cli import main
from zoo.registry.remotes.trust import CachePolicy
from zoo.registry.store.cache import Cache, Entry
from zoo.registry.store.seal import SEAL, SealState


def _cli(*args: str) -> Result:
    result = CliRunner().invoke(main, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result


def _numerics(samples: int, calls: int) -> dict[str, Any]:
    """A --verify record as zoo writes one, for add's data (so a fetch --verify counts it)."""
    from zoo.registry.numerics.data import data_identity

    request = Zoo().request("add", "u55-128")
    return {
        "passed": True, "samples": 8, "dataset": "calibration", "method": "tosa_reference_model",
        "data_identity": data_identity(request.spec, request.calibration),
        "checks": [{"name": "npu_program", "passed": True,
                    "detail": f"bit-exact on {samples} samples, {calls} delegate calls"}],
        "npu_program": {"outcome": "passed", "samples": samples, "delegate_calls": calls,
                        "method": "command-stream interpreter, a stand-in for the NPU"},
    }


@pytest.fixture(scope="module")
def verified_template(tmp_path_factory: pytest.TempPathFactory, refusing_endpoint: str) -> Path:
    """A cache holding add for u55-128 with a --verify record, stored as zoo stores every entry
    (sealed); built once per module by the fake compile. Tests change only copies (``verified_add``)."""
    import zoo.registry.compile

    root = tmp_path_factory.mktemp("verified-add")
    with pytest.MonkeyPatch.context() as monkeypatch:
        isolate(monkeypatch, root, refusing_endpoint)
        monkeypatch.setattr(zoo.registry.compile, "compile_targets", FakeCompile())
        art = Zoo().fetch("add", "u55-128")
        cache = Cache(Zoo().cache_dir)
        entry = cache.get(art.key)
        assert entry is not None and entry.seal is SealState.SEALED
        m = entry.manifest
        m.verification = {**(m.verification or {}), "numerics": _numerics(8, 8)}
        cache.put(m, {f.name: (entry.path / f.name).read_bytes() for f in m.files}, replace=True)
    return root / "cache"


@pytest.fixture
def verified_add(verified_template: Path, isolated: Path) -> Entry:
    """This test's own copy of ``verified_template``, as its cache."""
    shutil.copytree(verified_template, isolated / "cache")
    cache = Cache(Zoo().cache_dir)
    (key,) = cache.keys()
    entry = cache.get(key)
    assert entry is not None and entry.sealed
    return entry


def _edit(entry: Entry, change: Any) -> None:
    path = entry.path / "manifest.json"
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")


def _forge(data: dict[str, Any]) -> None:
    level = data["verification"]["numerics"]["npu_program"]
    level.update(samples=999, delegate_calls=999)


def test_a_sealed_record_is_shown(verified_add: Entry, fake_compile: FakeCompile) -> None:
    fetched = _cli("fetch", "add", "-t", "u55-128", "--verify")
    assert fetched.exit_code == 0, fetched.output
    assert "NPU program bit-exact on 8 samples, 8 delegate calls" in fetched.output
    assert not fake_compile.calls  # from the cache: the record counts
    assert _cli("cache", "verify").exit_code == 0


def test_a_forged_record_is_detected_and_never_printed(verified_add: Entry, fake_compile: FakeCompile) -> None:
    _edit(verified_add, _forge)
    checked = _cli("cache", "verify")
    assert checked.exit_code == 1, checked.output
    assert (f"{verified_add.key[:12]}  CORRUPT  add for ethos-u55-128: manifest.json was changed after zoo wrote it "
            "(its seal no longer matches)") in checked.output, checked.output
    fetched = _cli("fetch", "add", "-t", "u55-128", "--verify")
    assert "999" not in fetched.output, fetched.output
    # The record was no result: the check ran again (the fake compile records no numerics).
    assert len(fake_compile.calls) == 1, fake_compile.calls
    assert "cached without numerical results; lowering it again" in fetched.output


def test_a_forged_record_is_not_shown_by_a_fetch_without_verify(verified_add: Entry) -> None:
    _edit(verified_add, _forge)
    fetched = _cli("fetch", "add", "-t", "u55-128")
    assert fetched.exit_code == 0, fetched.output
    assert "999" not in fetched.output
    assert ("numerics not checked: the recorded result is not shown: manifest.json was changed after zoo wrote it "
            "(its seal no longer matches) (--verify runs the check again)") in " ".join(fetched.output.split())


def test_a_removed_seal_makes_the_record_unbelieved_not_the_entry_corrupt(verified_add: Entry) -> None:
    _edit(verified_add, _forge)
    (verified_add.path / SEAL).unlink()
    checked = _cli("cache", "verify")
    assert checked.exit_code == 0, checked.output
    assert f"{verified_add.key[:12]}  UNSEALED  manifest.json is not sealed under this user's key" in checked.output
    said = " ".join(_cli("verify", "add", "-t", "u55-128", "--structure-only", "--no-build").output.split())
    assert "999" not in said and "numerics not checked" in said


def test_a_local_build_written_in_by_hand_is_not_believed_by_trusted_keys(verified_add: Entry) -> None:
    cache = Cache(Zoo().cache_dir)
    m = verified_add.manifest
    m.verification = {k: v for k, v in (m.verification or {}).items() if k != "local_build"}  # as if downloaded unsigned
    entry = cache.put(m, {f.name: (verified_add.path / f.name).read_bytes() for f in m.files}, replace=True)
    policy = CachePolicy((Path("ci.pub"),))
    assert "zoo never checked a signature for it" in str(policy.refusal(entry))
    _edit(entry, lambda data: data["verification"].update(local_build=True))
    edited = cache.get(entry.key)
    assert edited is not None and edited.seal is SealState.EDITED
    refusal = policy.refusal(edited)
    assert refusal is not None and "manifest.json was changed after zoo wrote it" in refusal


def test_a_seal_names_its_entry(verified_add: Entry) -> None:
    """A seal copied onto another entry's manifest (the same bytes under another key) does not check."""
    from zoo.registry.store.seal import state_of

    raw = (verified_add.path / "manifest.json").read_bytes()
    assert state_of(verified_add.path, verified_add.key, raw) is SealState.SEALED
    assert state_of(verified_add.path, "0" * 64, raw) is SealState.EDITED


def test_an_edited_evaluation_on_the_users_data_is_measured_again(tmp_path: Path) -> None:
    """``--eval-dir`` results live apart from the entry (``store/evaluations.py``), sealed the same way."""
    from zoo.registry.store import evaluations

    key, data = "ab" * 32, "eval:digest"
    evaluations.record(tmp_path, key, data, {"passed": True, "samples": 8})
    assert evaluations.recorded(tmp_path, key, data) == {"passed": True, "samples": 8}
    (path,) = (tmp_path / "evaluations").rglob("*.json")
    path.write_text(path.read_text().replace('"samples": 8', '"samples": 999'))
    assert evaluations.recorded(tmp_path, key, data) is None


def test_an_entry_whose_record_was_edited_is_not_published(verified_add: Entry, tmp_path: Path) -> None:
    """Published, the forged record would reach every fetch from that remote as the publisher's word."""
    from zoo import VerificationError

    _edit(verified_add, _forge)
    with pytest.raises(VerificationError, match=r"nothing was published to .*manifest.json was changed after zoo "
                                                r"wrote it \(its seal no longer matches\) \(rebuild it: zoo build add"):
        Zoo().publish(str(tmp_path / "remote"), everything=True, notice=lambda msg: None)
    assert not (tmp_path / "remote" / "index.json").exists()


def test_a_report_shows_no_edited_record(verified_add: Entry) -> None:
    from zoo.registry.report import collect

    _edit(verified_add, _forge)
    (row,) = collect(Cache(Zoo().cache_dir), Zoo().model("add")).rows
    assert row.npu_program is None and "delegate_calls" not in json.dumps(row.to_json())


def test_a_bundle_header_is_never_rendered_from_an_edited_tolerance(verified_add: Entry, tmp_path: Path,
                                                                     fake_compile: FakeCompile) -> None:
    """The self-test's tolerance on the board is the record's (``bundle_atol``): for header options other
    than the stored ones zoo renders the bundle's header from it, so only from a sealed record; an edited
    one sends --bundle to lower the model again, as a missing one does."""
    from zoo import BuildError

    cache = Cache(Zoo().cache_dir)
    m = verified_add.manifest
    files = {f.name: (verified_add.path / f.name).read_bytes() for f in m.files}
    bpte = files["add_u55-128.pte"]  # stands in for the .bpte: the hand-out renders a header around its bytes
    macros = {"bundle_atol": 0.01, "bundle_rtol": 0.001, "bundle_test_cases": 3}
    for name, kind, data in (("add_u55-128.bpte", "bundle", bpte), ("add_u55-128_bundle.h", "bundle_header", b"/* */\n")):
        files[name] = data
        m.files.append(type(m.files[0])(name, kind, len(data), hashlib.sha256(data).hexdigest()))
    m.verification = {**(m.verification or {}), "bundle": {"file": "add_u55-128.bpte", "macros": macros}}
    entry = cache.put(m, files, replace=True)
    art = Zoo().fetch("add", "u55-128", bundle=True, header_array="other_pte", out_dir=tmp_path / "good")
    assert art.bundle_header is not None and "0.01" in art.bundle_header.read_text() and not fake_compile.calls
    _edit(entry, lambda data: data["verification"]["bundle"]["macros"].update(bundle_atol=1e9))
    fake_compile.fail = BuildError("lowered again")
    with pytest.raises(BuildError, match="lowered again"):
        Zoo().fetch("add", "u55-128", bundle=True, header_array="other_pte", out_dir=tmp_path / "forged")
    assert not (tmp_path / "forged").exists()
