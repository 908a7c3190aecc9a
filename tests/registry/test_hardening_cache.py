"""Issue 13, the cache side: manifests checked as a schema, leftovers of killed
writers cleaned without racing live ones, and the structural check in
``cache verify`` and ``publish``.

Fast tier: entries come from the fake compile (tests/fake_compile.py); the CLI
runs in process (CliRunner) or, where a process must die or stay alive, for real.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from tests.conftest import isolate, run_zoo
from tests.fake_compile import DATA, FakeCompile
from tests.memory_remote import MemoryRemote
from zoo import Artifact, VerificationError, Zoo
from zoo._fs import remove_stale_staging, staging_dir
from zoo.cli import main
from zoo.registry.store import seal
from zoo.registry.store.cache import Cache, CorruptEntry
from zoo.registry.store.manifest import Manifest


def _cli(*args: str) -> Result:
    result = CliRunner().invoke(main, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result


def _edit_manifest(entry_dir: Path, change: Callable[[dict[str, Any]], None]) -> None:
    path = entry_dir / "manifest.json"
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


# --- defect 4: a manifest with valid JSON but wrong types is a corrupt entry ---------------------

def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def change(data: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        node: Any = data
        for p in parents:
            node = node[int(p)] if isinstance(node, list) else node[p]
        if isinstance(node, list):
            node[int(last)] = value
        else:
            node[last] = value
    return change


WRONG_TYPES = [
    ("build", "x", "field 'build' should be an object"),
    ("vela", "x", "field 'vela' should be an object or null"),
    ("vela.total", [1, 2], "field 'vela.total' should be an object or null"),
    ("vela.total.sram_bytes", "32", "field 'vela.total.sram_bytes' should be an integer or null"),
    ("delegation", [], "field 'delegation' should be an object"),
    ("delegation.partitions", "1", "field 'delegation.partitions' should be an integer or null"),
    ("header", "x", "field 'header' should be an object"),
    ("header.macros", ["x"], "field 'header.macros' should be an object"),
    ("verification", 7, "field 'verification' should be an object or null"),
    ("verification.structure", "ok", "field 'verification.structure' should be an object or null"),
    ("verification.numerics", {"npu_program": "passed"},
     "field 'verification.numerics.npu_program' should be an object or null"),
    ("verification.numerics", {"npu_program": {"outcome": 1}},
     "field 'verification.numerics.npu_program.outcome' should be a string"),
    ("key_inputs", "x", "field 'key_inputs' should be an object"),
    ("key_inputs.target", "ethos-u55-128", "field 'key_inputs.target' should be an object or null"),
    ("key_inputs.target.extra_flags", "--x", "field 'key_inputs.target.extra_flags' should be a list of strings or null"),
    ("cpu_operators", "aten::add", "field 'cpu_operators' should be a list of strings"),
    ("cpu_operators.0", 5, "field 'cpu_operators[0]' should be a string, not an integer 5"),
    ("warnings", {"a": 1}, "field 'warnings' should be a list of strings"),
    ("labels", "7", "field 'labels' should be a list of strings or null"),
    ("calibration", 9, "field 'calibration' should be an object or null"),
    ("memory_fit", [], "field 'memory_fit' should be an object or null"),
    ("io", "int8", "field 'io' should be an object or null"),
    ("model", 1, "field 'model' should be a string"),
    ("files", {"a": 1}, "field 'files' should be a list of objects"),
    ("files.0", "add_u55-128.pte", "field 'files[0]' should be an object"),
    ("files.0.name", 3, "field 'files[0].name' should be a string"),
    ("files.0.size", "100", "field 'files[0].size' should be an integer"),
    ("files.0.size", True, "field 'files[0].size' should be an integer, not a boolean"),
    ("files.0.sha256", None, "field 'files[0].sha256' should be a string, not null"),
    ("build.payloads", "x", "field 'build.payloads' should be a list of objects or null"),
    # Issue 20: what a header is rendered from keeps a grammar, and only zoo writes a signer of this shape.
    ("header.macros.model", "add\nint injected = 42;", "field 'header.macros': macro model holds '\\n'"),
    ("header.macros.q x", 1, "field 'header.macros': macro name 'q x' is not a lower-case C identifier"),
    ("header.macros.len", 5, "field 'header.macros': macro name 'len' is zoo's own"),
    ("header.macros.scale", float("inf"), "field 'header.macros': macro scale: inf is not a finite number"),
    ("header.array", "model pte", "field 'header': header array name 'model pte' is not a C identifier"),
    ("header.array", "model_pte\n", "field 'header': header array name 'model_pte\\n' is not a C identifier"),
    ("labels", ['a";\nint x;'], "field 'labels': label 0 holds '\\n'"),
    ("verification.signature", 5, "field 'verification.signature' should be an object or null"),
    ("verification.signature", {"key": "ab"}, "field 'verification.signature' has no 'key_file', which is required"),
]


@dataclass(frozen=True)
class Template:
    cache: Path
    artifact: Artifact


@pytest.fixture(scope="module")
def add_template(tmp_path_factory: pytest.TempPathFactory, refusing_endpoint: str) -> Template:
    """add for u55-128, built once for the module (by the fake compile, in a cache of its own): the tests
    change only their own copies of it (``add_entry``)."""
    import zoo.registry.compile

    root = tmp_path_factory.mktemp("add-template")
    with pytest.MonkeyPatch.context() as monkeypatch:
        isolate(monkeypatch, root, refusing_endpoint)
        monkeypatch.setattr(zoo.registry.compile, "compile_targets", FakeCompile())
        art = Zoo().fetch("add", "u55-128")
    return Template(root / "cache", art)


@pytest.fixture
def add_entry(add_template: Template, fake_compile: FakeCompile, isolated: Path) -> Artifact:
    """The built entry in this test's own cache, a copy of the module's template: no build yet in this test."""
    shutil.copytree(add_template.cache, isolated / "cache")
    art = Zoo().fetch("add", "u55-128")
    assert art.source == "cache" and art.key == add_template.artifact.key and not fake_compile.calls
    return art


@pytest.mark.parametrize(("path", "value", "message"), WRONG_TYPES, ids=[f"{p}={v!r}" for p, v, _ in WRONG_TYPES])
def test_from_json_names_the_field_and_what_it_should_be(add_template: Template, path: str, value: Any,
                                                         message: str) -> None:
    data = add_template.artifact.manifest.to_json()
    _set(path, value)(data)
    with pytest.raises(ValueError, match=f"^{re.escape(message)}"):
        Manifest.from_json(data)


@pytest.mark.parametrize(("path", "value", "message"), WRONG_TYPES, ids=[f"{p}={v!r}" for p, v, _ in WRONG_TYPES])
def test_a_manifest_of_wrong_types_is_a_corrupt_entry_everywhere(
    add_entry: Artifact, fake_compile: FakeCompile, path: str, value: Any, message: str
) -> None:
    cache = Cache(Zoo().cache_dir)
    entry_dir = cache.entry_path(add_entry.key)
    _edit_manifest(entry_dir, _set(path, value))

    with pytest.raises(CorruptEntry, match=re.escape(f"manifest.json is unreadable ({message}")):
        cache.get(add_entry.key)
    listed = _cli("cache", "ls")
    assert listed.exit_code == 0 and f"{add_entry.key[:12]}" in listed.stdout and "corrupt:" in listed.stdout
    checked = _cli("cache", "verify")
    assert checked.exit_code == 1 and f"{add_entry.key[:12]}  CORRUPT" in checked.stdout and message in checked.stdout

    notes: list[str] = []
    again = Zoo().fetch("add", "u55-128", notice=notes.append)  # reported, evicted, rebuilt
    assert again.source == "build" and len(fake_compile.calls) == 1
    assert any("is corrupt" in n and message in n and "building again" in n for n in notes), notes

    _edit_manifest(entry_dir, _set(path, value))
    pruned = _cli("cache", "prune", "--corrupt")
    assert pruned.exit_code == 0 and "removed 1 entries" in pruned.stdout
    assert not entry_dir.exists()


def test_a_manifest_nested_too_deeply_is_unreadable_not_a_crash(add_entry: Artifact) -> None:
    cache = Cache(Zoo().cache_dir)
    (cache.entry_path(add_entry.key) / "manifest.json").write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(CorruptEntry, match="nests too deeply"):
        cache.get(add_entry.key)


# --- leftovers: staging of a killed writer is cleaned, a live writer's is not ------------------

# Cache.put, stopped just before its staging folder would be renamed into place:
# it says "staged", then waits for GO to exist (or forever) before going on.
_WRITER = textwrap.dedent("""
    import hashlib, sys, time
    from pathlib import Path
    import zoo.registry.store.cache as cache_module
    from zoo.registry.store.cache import Cache
    from zoo.registry.store.manifest import FileRecord, Manifest

    root, key, go = Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3])
    real_publish = cache_module.publish_dir

    def stalled(staging, final, **kw):
        print("staged", flush=True)
        while not go.exists():
            time.sleep(0.02)
        return real_publish(staging, final, **kw)

    cache_module.publish_dir = stalled
    data = b"x" * 5000
    manifest = Manifest(key=key, model="m", target="t", key_inputs={},
                        files=[FileRecord("m.pte", "pte", len(data), hashlib.sha256(data).hexdigest())])
    Cache(root).put(manifest, {"m.pte": data})
""")


def _writer(root: Path, key: str, go: Path) -> subprocess.Popen[str]:
    proc = subprocess.Popen([sys.executable, "-c", _WRITER, str(root), key, str(go)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "staged"
    return proc


@pytest.mark.parametrize("mode", [["--corrupt"], ["--failures"], ["--older-than", "30"], ["--all"]])
@pytest.mark.slow
def test_prune_removes_the_staging_of_a_killed_writer_and_says_so(isolated: Path, mode: list[str]) -> None:
    root = isolated / "cache"
    proc = _writer(root, "ab" * 32, isolated / "never")
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    tmp = root / "v1" / "tmp"
    [staging] = [p for p in tmp.iterdir() if p.is_dir()]
    assert (staging / "m.pte").is_file()

    pruned = run_zoo("cache", "prune", *mode)
    assert pruned.returncode == 0, pruned.stderr
    assert "cleaned up 1 leftover(s) of interrupted writes (" in pruned.stdout, pruned.stdout
    assert list(tmp.iterdir()) == []


@pytest.mark.slow
def test_prune_leaves_a_live_writer_alone(isolated: Path) -> None:
    root, key, go = isolated / "cache", "cd" * 32, isolated / "go"
    proc = _writer(root, key, go)
    try:
        pruned = run_zoo("cache", "prune", "--all")
        assert pruned.returncode == 0, pruned.stderr
        assert "leftover" not in pruned.stdout
        assert any(p.is_dir() for p in (root / "v1" / "tmp").iterdir())
        go.touch()
        assert proc.wait(timeout=30) == 0
    finally:
        proc.kill()
    entry = Cache(root).get(key)
    assert entry is not None and entry.file("pte").read_bytes() == b"x" * 5000  # type: ignore[union-attr]
    assert list((root / "v1" / "tmp").iterdir()) == []


def test_staging_of_this_process_is_live_too(tmp_path: Path) -> None:
    with staging_dir(tmp_path, "pull-abc") as staging:
        (staging / "f").write_bytes(b"1234")
        assert remove_stale_staging(tmp_path) == (0, 0)
        assert staging.is_dir()
    assert list(tmp_path.iterdir()) == []


def test_trash_goes_at_once_and_unlocked_folders_only_when_old(tmp_path: Path) -> None:
    trash, legacy, old = tmp_path / "evicted-abc-1-2", tmp_path / "abc.xyz", tmp_path / "abc.old"
    for folder in (trash, legacy, old):
        folder.mkdir()
        (folder / "f").write_bytes(b"12345678")
    os.utime(old, (0, 0))
    assert remove_stale_staging(tmp_path, trash_prefix="evicted-") == (2, 16)
    assert [p.name for p in tmp_path.iterdir()] == ["abc.xyz"]


# --- cache verify and publish run the structural check, not only the hashes ---------------------

@pytest.fixture
def swapped(add_entry: Artifact) -> Artifact:
    """The u55-128 entry with the portable program's bytes as its .pte, every hash updated to match."""
    pte = (DATA / "add_portable.pte").read_bytes()
    entry_dir = Cache(Zoo().cache_dir).entry_path(add_entry.key)
    (entry_dir / add_entry.pte.name).write_bytes(pte)

    def rehash(data: dict[str, Any]) -> None:
        record = next(f for f in data["files"] if f["kind"] == "pte")
        record.update(size=len(pte), sha256=hashlib.sha256(pte).hexdigest())

    _edit_manifest(entry_dir, rehash)
    # Sealed again as zoo seals what it writes, so that only the structural check can tell (issue 55's seal
    # would refuse the edited manifest first).
    sealed = seal.seal_text(add_entry.key, (entry_dir / "manifest.json").read_bytes())
    if sealed is not None:
        (entry_dir / seal.SEAL).write_bytes(sealed)
    assert Cache(Zoo().cache_dir).get(add_entry.key) is not None  # every hash agrees
    return add_entry


def test_cache_verify_runs_the_structural_check_and_prune_removes_what_fails(swapped: Artifact) -> None:
    checked = _cli("cache", "verify")
    assert checked.exit_code == 1
    line = next(line for line in checked.stdout.splitlines() if "CORRUPT" in line)
    assert line.startswith(swapped.key[:12]) and "add for ethos-u55-128 fails its structural check" in line
    assert "no EthosUBackend delegate" in line, line
    assert "0 of 1 entries verified, 1 corrupt" in checked.stdout
    pruned = _cli("cache", "prune", "--corrupt")
    assert "removed 1 entries" in pruned.stdout and not Cache(Zoo().cache_dir).entry_path(swapped.key).exists()


@pytest.mark.slow
def test_publish_refuses_an_artifact_that_fails_its_structural_check_and_pushes_nothing(
    swapped: Artifact, tmp_path: Path
) -> None:
    memory = MemoryRemote()
    entry = Cache(Zoo().cache_dir).get(swapped.key)
    assert entry is not None
    with pytest.raises(VerificationError, match=r"nothing was published .*add for ethos-u55-128 \(key "
                       + swapped.key[:12] + r".*fails its structural check: delegates: no EthosUBackend delegate"):
        memory.publish([entry], say=lambda m: None)
    assert memory.files == {}

    remote = tmp_path / "remote"
    proc = run_zoo("publish", "add", "-t", "u55-128", "--to", str(remote))
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    [line] = [line for line in proc.stderr.splitlines() if line.startswith("zoo: error:")]
    assert swapped.key[:12] in line and "fails its structural check" in line
    assert not (remote / "index.json").exists() and not list(remote.rglob("*.pte"))


# --- issue 20: the labels header is checked like the model header ----------------------------------

def _add_labels(entry_dir: Path, labels: list[str], header: bytes) -> None:
    """A labels header and the manifest's labels, every hash redone: consistent, so only the check can tell."""
    (entry_dir / "add_labels.h").write_bytes(header)
    record = {"name": "add_labels.h", "kind": "labels_header", "size": len(header),
              "sha256": hashlib.sha256(header).hexdigest()}
    _edit_manifest(entry_dir, lambda m: m.update(labels=labels, files=[
        *(f for f in m["files"] if f["name"] != "add_labels.h"), record]))


def test_a_labels_header_with_code_appended_is_corrupt(add_entry: Artifact) -> None:
    from zoo.registry.firmware.c_header import labels_header

    entry_dir = Cache(Zoo().cache_dir).entry_path(add_entry.key)
    honest = labels_header(["sum"], file_name="add_labels.h", array="add_labels").encode()
    _add_labels(entry_dir, ["sum"], honest)
    art = Zoo().fetch("add", "u55-128", labels_header=True)
    assert art.labels_header is not None and art.labels_header.read_bytes() == honest

    _add_labels(entry_dir, ["sum"], honest + b"int steal(void) { return 42; }\n")
    checked = _cli("cache", "verify")
    assert checked.exit_code == 1 and f"{add_entry.key[:12]}  CORRUPT" in checked.stdout
    assert "labels header: add_labels.h is not what zoo renders from the manifest's 1 labels" in checked.stdout
    with pytest.raises(VerificationError, match=r"labels header: add_labels\.h is not what zoo renders"):
        Zoo().fetch("add", "u55-128", labels_header=True)


def test_verify_header_refuses_a_line_zoo_never_writes(add_entry: Artifact, tmp_path: Path) -> None:
    pte = tmp_path / "add.pte"
    pte.write_bytes(add_entry.pte.read_bytes())
    header = tmp_path / "add.h"
    text = add_entry.header.read_text()
    header.write_text(text)
    ok = _cli("verify", str(pte), "--header", str(header))
    assert ok.exit_code == 0, ok.stdout
    header.write_text(text.replace("\n\nextern ", '\n#define MODEL_PTE_Q ""\nint injected = 42;\n\nextern ', 1))
    bad = _cli("verify", str(pte), "--header", str(header))
    assert bad.exit_code == 1 and "is not one zoo writes ('int injected = 42;')" in bad.stdout, bad.stdout


def test_a_tmp_file_in_the_cache_is_named_with_what_to_do(add_entry: Artifact, fake_compile: FakeCompile) -> None:
    cache = Cache(Zoo().cache_dir)
    tmp = cache.base / "tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.write_text("not a folder")
    result = _cli("build", "add", "-t", "u55-128")
    assert result.exit_code == 1
    assert f"{tmp} is a file where zoo keeps a folder; move it away" in result.output, result.output
