"""A remote that misbehaves costs only itself (issue 13): a bad remote listed
first is skipped with one notice naming it and why, and the next source (a good
remote, or a local build) is tried; one bad record fails only its own artifact.
Downloads stop at the declared size and at ZOO_HTTP_DEADLINE, and a publish
cleans up what a killed one left. Real loopback servers and directories, on the
fast tier: the artifacts are ``add``'s, from the fake compile.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import isolate
from tests.fake_compile import FakeCompile
from tests.hub_server import HubTestServer, git_blob_sha1
from tests.remotes.helpers import artifact_dir, load_index, record, rewrite_manifest, save_index
from tests.remotes.servers import StaticServer
from zoo import Artifact, IntegrityError, Zoo
from zoo._errors import ConfigError, ZooError
from zoo._version import __version__
from zoo.registry.remotes.base import deadline_s, timeout_s
from zoo.registry.remotes.directory import LOCK, STAGING
from zoo.registry.remotes.index import Index
from zoo.registry.request.keys import canonical_json
from zoo.registry.store.cache import Cache

PTE = "add_u55-128.pte"
REPO = "team/ethos-zoo"


@dataclass
class Published:
    cache: Path
    """Holds add for u55-128 and for portable."""
    good: Path
    """A directory remote with add for u55-128."""

    def bad_copy(self, tmp_path: Path) -> Path:
        return Path(shutil.copytree(self.good, tmp_path / "bad"))


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory, refusing_endpoint: str) -> Published:
    """Built and published once for the module (by the fake compile); tests get copies (``published``)."""
    import zoo.registry.compile

    root = tmp_path_factory.mktemp("published-template")
    with pytest.MonkeyPatch.context() as monkeypatch:
        isolate(monkeypatch, root, refusing_endpoint)
        monkeypatch.setattr(zoo.registry.compile, "compile_targets", FakeCompile())
        Zoo().fetch_many(["add"], ["u55-128", "portable"], notice=lambda m: None)
        Zoo().publish(str(root / "good"), model="add", target="u55-128", notice=lambda m: None)
    return Published(root / "cache", root / "good")


@pytest.fixture
def published(template: Published, fake_compile: FakeCompile, tmp_path: Path) -> Published:
    """This test's own copies of the template; ZOO_CACHE_DIR stays an empty cache, to fetch into."""
    return Published(Path(shutil.copytree(template.cache, tmp_path / "source-cache")),
                     Path(shutil.copytree(template.good, tmp_path / "good")))


def fetch(*remotes: str, build: bool = False) -> tuple[Artifact, list[str]]:
    notes: list[str] = []
    art = Zoo().fetch("add", "u55-128", remotes=remotes, build=build, notice=notes.append)
    return art, notes


def assert_skipped(notes: list[str], bad: str, *reasons: str) -> None:
    """One line names the bad remote and why, and says it was skipped."""
    lines = [n for n in notes if n.startswith(bad)]
    assert lines, notes
    for line in lines:
        assert "\n" not in line and "; skipping this " in line, line
    for reason in reasons:
        assert any(reason in line for line in lines), (reason, lines)


def assert_from(art: Artifact, notes: list[str], remote: str) -> None:
    assert art.source == "remote"
    assert any(n.startswith("downloaded add for ethos-u55-128 from " + remote) for n in notes), notes


# 1. Bad input from a remote: skipped for the next.

def _deep_index(root: Path) -> None:
    (root / "index.json").write_text("[" * 100_000 + "]" * 100_000)


def _record_change(change: Callable[[dict[str, Any]], None]) -> Callable[[Path], None]:
    def apply(root: Path) -> None:
        index = load_index(root)
        key, _ = record(root, "add", "u55-128")
        change(index["models"]["add"]["u55-128"][key])
        save_index(root, index)
    return apply


def _deep_key_inputs(root: Path) -> None:
    """Key inputs nested 600 deep, under a key that is really their hash."""
    index = load_index(root)
    _key, rec = record(root, "add", "u55-128")
    deep: Any = "bottom"
    for _ in range(600):
        deep = [deep]
    rec["key_inputs"]["model"]["deep"] = deep
    new_key = hashlib.sha256(canonical_json(rec["key_inputs"])).hexdigest()
    index["models"]["add"]["u55-128"] = {new_key: rec}
    (root / "index.json").write_text(json.dumps(index))  # json's C encoder: indent would recurse in Python


def _manifest_change(change: Callable[[dict[str, Any]], None]) -> Callable[[Path], None]:
    return lambda root: rewrite_manifest(root, "add", "u55-128", change)


def _size_as_text(files: list[dict[str, Any]]) -> None:
    files[0]["size"] = str(files[0]["size"])


BAD_DIRECTORIES = {
    "deeply nested index.json": (_deep_index, "nested too deeply"),
    "key inputs nested 600 deep": (_deep_key_inputs, "nested more than 32 levels deep"),
    "index: a size as text": (_record_change(lambda r: _size_as_text(r["files"])), "size must be a whole number"),
    "index: a list for the manifest path": (_record_change(lambda r: r.update(manifest=["a"])), "not a relative path"),
    "index: a number for a file name": (_record_change(lambda r: r["files"][0].update(name=5)), "names the file 5"),
    "index: ../ in the manifest path": (_record_change(lambda r: r.update(manifest="../x/manifest.json")),
                                         "paths must stay inside the remote"),
    # Whichever check catches these (the manifest's schema or a later one), it names the artifact.
    "manifest: a size as text": (_manifest_change(lambda m: _size_as_text(m["files"])), "nothing of it was cached"),
    "manifest: a list for delegation": (_manifest_change(lambda m: m.update(delegation=["npu"])),
                                        "nothing of it was cached"),
    "manifest: text for the header record": (_manifest_change(lambda m: m.update(header="x")),
                                             "nothing of it was cached"),
}


@pytest.mark.parametrize("case", BAD_DIRECTORIES)
@pytest.mark.slow
def test_a_remote_with_bad_input_is_skipped_for_the_next(case: str, published: Published, tmp_path: Path) -> None:
    spoil, reason = BAD_DIRECTORIES[case]
    bad = published.bad_copy(tmp_path)
    spoil(bad)
    art, notes = fetch(str(bad), str(published.good))
    assert_from(art, notes, str(published.good))
    assert_skipped(notes, str(bad), reason)
    assert not any(n.startswith(str(published.good)) for n in notes), notes


def test_a_redirect_loop_is_skipped_for_the_next(published: Published) -> None:
    with StaticServer(published.good) as server:
        server.redirects = {"/index.json": "/loop-a", "/loop-a": "/loop-b", "/loop-b": "/loop-a"}
        art, notes = fetch(server.url, str(published.good))
    assert_from(art, notes, str(published.good))
    assert_skipped(notes, f"reading {server.url}/index.json", "redirects (a redirect loop?)")


@pytest.mark.slow
def test_a_redirect_to_another_scheme_is_refused_at_once(published: Published) -> None:
    with StaticServer(published.good) as server:
        server.redirects = {"/index.json": "file:///etc/passwd"}
        art, notes = fetch(server.url, str(published.good))
    assert_from(art, notes, str(published.good))
    assert_skipped(notes, f"{server.url}/index.json redirects to file:///etc/passwd",
                   "follows redirects to http(s) URLs only")
    assert server.requests == ["/index.json"], "a refusal is not retried"


# 2. One bad record costs only its own artifact.

def test_an_unsafe_record_for_another_model_blocks_nothing(published: Published, tmp_path: Path) -> None:
    bad = published.bad_copy(tmp_path)
    index = load_index(bad)
    _key, rec = record(bad, "add", "u55-128")
    index["models"]["mnist"] = {"u55-128": {"f" * 64: {**rec, "manifest": "../../etc/manifest.json"}}}
    save_index(bad, index)
    art, notes = fetch(str(bad))
    assert_from(art, notes, str(bad))
    assert not any("mnist" in n for n in notes), notes

    # Publishing only adds: the record it cannot read is written back as it was.
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ZOO_CACHE_DIR", str(published.cache))
        report = Zoo().publish(str(bad), model="add", target="portable", notice=lambda m: None)
    assert len(report.added) == 1
    after = load_index(bad)
    assert after["models"]["mnist"] == index["models"]["mnist"]
    assert set(after["models"]["add"]) == {"u55-128", "portable"}
    assert [r.path[0] for r in Index.loads((bad / "index.json").read_bytes(), source="t").rejected] == ["mnist"]


@pytest.mark.slow
def test_a_body_cut_short_is_skipped_for_the_next_remote_or_a_build(published: Published) -> None:
    with StaticServer(published.good) as server:
        server.cut_short = PTE
        art, notes = fetch(server.url, str(published.good))
        assert_from(art, notes, str(published.good))
        assert_skipped(notes, server.url, f"{PTE} is", "truncated or altered; nothing of it was cached")

        Cache(Path(os.environ["ZOO_CACHE_DIR"])).evict(art.key)
        built, notes = fetch(server.url, build=True)
    assert built.source == "build"
    assert_skipped(notes, server.url, "truncated or altered")


def test_with_no_other_source_a_bad_artifact_is_an_integrity_error(published: Published) -> None:
    with StaticServer(published.good) as server:
        server.cut_short = PTE
        with pytest.raises(IntegrityError, match=r"truncated or altered; nothing of it was cached.*--no-build"):
            fetch(server.url)
    assert list(Cache(Path(os.environ["ZOO_CACHE_DIR"])).keys()) == []


# 3. Every download has a size cap and a deadline.

def test_an_endless_body_stops_at_the_declared_size(published: Published, tmp_path: Path) -> None:
    size = next(f["size"] for f in record(published.good, "add", "u55-128")[1]["files"] if f["name"] == PTE)
    with StaticServer(published.good) as server:
        server.endless = PTE
        start = time.monotonic()
        art, notes = fetch(server.url, str(published.good))
        elapsed = time.monotonic() - start
        path = next(p for p in server.requests if p.endswith(PTE))
        sent = server.sent[path]
    assert_from(art, notes, str(published.good))
    assert_skipped(notes, server.url, f"sends more than the {size} bytes its manifest lists")
    # What the client took, plus what the kernel buffers on loopback: far from the 128 MiB on offer.
    assert sent < size + (4 << 20), sent
    assert elapsed < 10


def test_a_manifest_cannot_declare_more_than_the_index(published: Published, tmp_path: Path) -> None:
    bad = published.bad_copy(tmp_path)

    def huge(m: dict[str, Any]) -> None:
        next(f for f in m["files"] if f["name"] == PTE)["size"] = 10**12

    rewrite_manifest(bad, "add", "u55-128", huge)
    with StaticServer(bad) as server:
        server.endless = PTE
        art, notes = fetch(server.url, str(published.good))
    assert_from(art, notes, str(published.good))
    assert_skipped(notes, server.url, "lists other files (names, sizes or sha256) than index.json does")
    assert server.sent == {}, "nothing of the .pte was asked for"


@pytest.mark.server
def test_a_trickling_server_is_cut_at_the_deadline(published: Published, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ZOO_HTTP_DEADLINE", "1.5")
    monkeypatch.setenv("ZOO_HTTP_TIMEOUT", "3")
    with StaticServer(published.good) as server:
        server.trickle = PTE
        start = time.monotonic()
        art, notes = fetch(server.url, str(published.good))
        elapsed = time.monotonic() - start
    assert_from(art, notes, str(published.good))
    assert_skipped(notes, f"downloading {server.url}/", "not done after 1.5 s (ZOO_HTTP_DEADLINE); giving up")
    assert 1.5 <= elapsed < 6, elapsed


@pytest.mark.slow
def test_a_hub_download_stops_at_the_declared_size(published: Published, hub: HubTestServer, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    import huggingface_hub.constants

    # The client read these when it was first imported; the hub fixture's variables come too late in-process.
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path / "hf-cache"))
    monkeypatch.setattr(huggingface_hub.constants, "ENDPOINT", hub.url)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ZOO_CACHE_DIR", str(published.cache))
        Zoo().publish(f"hf://{REPO}", model="add", target="u55-128", notice=lambda m: None)
    path = next(p for p in hub.files(REPO) if p.endswith(PTE))
    size = len(hub.files(REPO)[path])
    longer = hub.files(REPO)[path] + b"\0" * (4 << 20)
    hub.tamper(REPO, path, longer)
    art, notes = fetch(f"hf://{REPO}", str(published.good))
    assert_from(art, notes, str(published.good))
    assert_skipped(notes, f"hf://{REPO}: {path} is longer than the {size} bytes its manifest lists")
    # The Hub's cache names a blob by its ETag: the longer file never got there, nor more than `size` of it.
    blobs = {p.name: p.stat().st_size for p in (tmp_path / "hf-cache").rglob("blobs/*")}
    assert git_blob_sha1(longer) not in blobs, blobs
    assert all(n <= size for name, n in blobs.items() if name.startswith(git_blob_sha1(longer))), blobs


@pytest.mark.parametrize("value", ["nan", "-1", "soon"])
def test_the_deadline_must_be_a_number(value: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ZOO_HTTP_DEADLINE", value)
    with pytest.raises(ConfigError, match=f"ZOO_HTTP_DEADLINE={value!r} is not a non-negative number"):
        deadline_s()


def test_a_timeout_of_zero_is_refused_not_taken_as_cannot_connect(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ZOO_HTTP_TIMEOUT", "0")
    with pytest.raises(ConfigError, match="ZOO_HTTP_TIMEOUT='0' must be more than 0"):
        timeout_s()
    monkeypatch.setenv("ZOO_HTTP_DEADLINE", "0")
    assert deadline_s() == 0  # no overall limit


# 4. A publish removes what a killed publish left, never what a live one holds.

@pytest.mark.slow
def test_a_publish_removes_the_leftovers_of_a_killed_one(published: Published, tmp_path: Path) -> None:
    share = published.good
    index_before = (share / "index.json").read_bytes()
    leftovers = [share / ".index.json.k1ll3d.zoo-tmp", share / ".index.json.0ld.tmp", share / STAGING / "add.x" / PTE]
    for path in leftovers:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"half")
    kept = share / ".index.json.notes"
    kept.write_text("not a temporary")

    from filelock import FileLock

    done = threading.Event()

    def publish() -> None:
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("ZOO_CACHE_DIR", str(published.cache))
            Zoo().publish(str(share), model="add", target="u55-128", notice=lambda m: None)
        done.set()

    with FileLock(str(share / LOCK)):  # a live publish
        worker = threading.Thread(target=publish)
        worker.start()
        time.sleep(0.5)
        assert all(p.exists() for p in leftovers), "nothing is removed while another publish holds the lock"
    worker.join(30)
    assert done.is_set()
    assert not any(p.exists() for p in leftovers) and not (share / STAGING).exists()
    assert kept.read_text() == "not a temporary"
    assert (share / "index.json").read_bytes() == index_before
    assert artifact_dir(share, record(share, "add", "u55-128")[1]).is_dir()


def test_the_index_keeps_its_shape_through_a_round_trip_with_rejected_parts() -> None:
    data = {"schema": 1, "models": {"Bad Name": {"x": {}}, "add": {"u55-128": []}}}
    index = Index.loads(json.dumps(data), source="t")
    assert len(index) == 0 and len(index.rejected) == 2
    assert json.loads(index.dumps()) == {**data, "written_by": __version__, "readable_by": ">=0.1.0"}


# 5. What a remote sends is data: it never becomes code in a header, nor a signer (issue 20).

def _respin(root: Path, change: Callable[[dict[str, Any]], None], files: dict[str, tuple[str, bytes]]) -> None:
    """Add or replace artifact files (name → kind, bytes) and change the manifest, then redo
    every hash (the manifest's records, the index's files and manifest digest): a consistent forgery."""
    key, rec = record(root, "add", "u55-128")
    folder = artifact_dir(root, rec)
    manifest = json.loads((root / rec["manifest"]).read_text())
    for name, (kind, data) in files.items():
        (folder / name).write_bytes(data)
        entry = {"name": name, "kind": kind, "size": len(data), "sha256": hashlib.sha256(data).hexdigest()}
        manifest["files"] = [f for f in manifest["files"] if f["name"] != name] + [entry]
    change(manifest)
    text = (json.dumps(manifest, indent=2, sort_keys=True) + "\n").encode()
    (root / rec["manifest"]).write_bytes(text)
    index = load_index(root)
    listed = index["models"]["add"]["u55-128"][key]
    listed["files"] = manifest["files"]
    listed["manifest_sha256"] = hashlib.sha256(text).hexdigest()
    save_index(root, index)


def _old_c_string(value: str) -> str:
    """How zoo quoted a macro before it had a grammar: newlines passed through."""
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


INJECTED = '\nint injected_by_remote = 42;\n#define MODEL_PTE_Q '


@pytest.mark.parametrize("case", ["newline in a value", "name that is no identifier", "zoo's own LEN", "a list"])
def test_a_macro_outside_the_grammar_is_refused_from_a_remote(case: str, published: Published) -> None:
    name, value, line = {
        "newline in a value": ("q", INJECTED, f"#define MODEL_PTE_Q {_old_c_string(INJECTED)}"),
        "name that is no identifier": ("q x", 1, "#define MODEL_PTE_Q X 1"),
        "zoo's own LEN": ("len", 5, "#define MODEL_PTE_LEN 5"),
        "a list": ("q", [1], "#define MODEL_PTE_Q [1]"),
    }[case]
    share = published.good
    rec = record(share, "add", "u55-128")[1]
    header = (artifact_dir(share, rec) / "add_u55-128.h").read_text()
    # Rendered as zoo rendered it before: the new macro last, after the manifest's others.
    forged = header.replace("\n\n__attribute__", f"\n{line}\n\n__attribute__", 1).encode()
    _respin(share, lambda m: m["header"]["macros"].update({name: value}), {"add_u55-128.h": ("header", forged)})

    with pytest.raises(ZooError) as caught:  # malformed, so refused: what is not data never reaches a header
        fetch(str(share))
    assert "header.macros" in str(caught.value) and "nothing of it was cached" in str(caught.value), caught.value
    assert not any(Cache(Path(os.environ["ZOO_CACHE_DIR"])).scan())


def _labels_header(labels: list[str]) -> bytes:
    from zoo.registry.firmware.c_header import labels_header

    return labels_header(labels, file_name="add_labels.h", array="add_labels").encode()


def test_a_labels_header_is_checked_against_the_manifests_labels(published: Published, tmp_path: Path) -> None:
    labels = ["sum", "carry"]
    honest = published.bad_copy(tmp_path)
    _respin(honest, lambda m: m.update(labels=labels), {"add_labels.h": ("labels_header", _labels_header(labels))})
    art = Zoo().fetch("add", "u55-128", remotes=(str(honest),), build=False, labels_header=True,
                      notice=lambda m: None)
    assert art.labels_header is not None and art.labels_header.read_bytes() == _labels_header(labels)
    assert any(c.name == "labels header" and c.passed for c in (art.verification.checks if art.verification else []))

    appended = _labels_header(labels) + b"\nint steal(void) { return 42; }\n"
    _respin(published.good, lambda m: m.update(labels=labels), {"add_labels.h": ("labels_header", appended)})
    cache = tmp_path / "second-cache"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ZOO_CACHE_DIR", str(cache))
        with pytest.raises(IntegrityError, match=r"labels header: add_labels\.h is not what zoo renders from the "
                                                 r"manifest's 2 labels.*nothing of it was cached"):
            fetch(str(published.good))


def test_a_label_with_a_newline_is_a_corrupt_manifest(published: Published) -> None:
    labels = ['x";\nint injected = 1;\nconst char *y = "']
    body = "\n".join(f"    {_old_c_string(label)}," for label in labels)
    forged = _labels_header(["x"]).decode().replace('    "x",', body).encode()
    _respin(published.good, lambda m: m.update(labels=labels), {"add_labels.h": ("labels_header", forged)})
    with pytest.raises(ZooError, match=r"field 'labels': label 0 holds '\\n'"):
        fetch(str(published.good))


@pytest.mark.parametrize("claim", [
    {"key": "71b7" * 16, "key_file": "keys/a.pub", "format": "model-signing/ec-key"},
    {"key": "deadbeef" * 8, "key_file": "/etc/trusted/ci.pub"},
    5, "x", [1],
])
def test_a_remotes_claim_about_its_signer_is_dropped(claim: object, published: Published) -> None:
    _respin(published.good, lambda m: m["verification"].update(signature=claim, local_build=True), {})
    art, notes = fetch(str(published.good))
    assert art.source == "remote"
    assert "signature" not in (art.manifest.verification or {}) and "local_build" not in (art.manifest.verification or {})
    assert not any("signed by" in n for n in notes), notes
    # What is cached reads back, and hands out again without a claim.
    again, _ = fetch(str(published.good))
    assert again.source == "cache" and "signature" not in (again.manifest.verification or {})


@pytest.mark.slow
def test_zoo_toml_trusted_keys_apply_however_the_remote_is_spelled(published: Published, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("model_signing")
    from tests.remotes.helpers import make_key_pair

    key = make_key_pair(tmp_path / "keys", "ci")
    project = tmp_path / "project"
    project.mkdir()
    (project / "zoo.toml").write_text(f'remotes = [{{url = "../good", trusted_keys = ["{key.public}"]}}]\n')
    monkeypatch.chdir(project)
    for spelling in ("../good", "../good/", str(published.good), f"file://{published.good}", "./../good"):
        with pytest.raises(IntegrityError, match="it is unsigned, and this remote's artifacts must be signed"):
            fetch(spelling)


# 6. Every figure of a header from a remote is the .pte's own (issue 29): a consistent forgery,
#    its header and I/O helpers rendered by zoo itself from forged macros, is refused.

def _forge_macros(root: Path, change: dict[str, Any]) -> None:
    from zoo.registry.firmware.c_header import HeaderOptions, pte_header
    from zoo.registry.firmware.model_io import io_names, render_io

    rec = record(root, "add", "u55-128")[1]
    folder = artifact_dir(root, rec)
    macros = json.loads((root / rec["manifest"]).read_text())["header"]["macros"]
    macros.update(change)
    pte = (folder / PTE).read_bytes()
    files = {"add_u55-128.h": ("header", pte_header(pte, file_name="add_u55-128.h", options=HeaderOptions(),
                                                      macros=macros).encode())}
    for name, text in zip(io_names("add_u55-128.h"), render_io("add_u55-128.h", HeaderOptions(), macros), strict=True):
        files[name] = ("io_header" if name.endswith(".h") else "io_source", text.encode())
    _respin(root, lambda m: m["header"]["macros"].update(change), files)


@pytest.mark.parametrize("change", [
    {"method_allocator_bytes": 64}, {"temp_allocator_bytes": 1}, {"planned_bytes": 4}, {"planned_buffer0_bytes": 4},
    {"input0_bytes": 28}, {"input0_dim3": 7}, {"input0_dtype_code": 1}, {"output0_elements": 2},
    {"target": "ethos-u85-256"}, {"memory_mode": "Dedicated_Sram"}, {"scratch_bytes": 16}, {"delegates": 0},
    {"cpu_kernels": 0}, {"flash_bytes": 1}, {"sha256": "0" * 64},
    {"define": 1}, {"h_": 1}, {"io_h_": 1}, {"input_x": 1},
], ids=lambda c: next(iter(c)))
def test_a_header_figure_a_remote_rewrote_is_refused(change: dict[str, Any], published: Published, tmp_path: Path) -> None:
    share = published.bad_copy(tmp_path)
    _forge_macros(share, change)
    with pytest.raises(ZooError) as caught:
        fetch(str(share))
    name = next(iter(change))
    assert "the header's macros are not the .pte's" in str(caught.value), caught.value
    assert name.upper() in str(caught.value) or repr(name) in str(caught.value), caught.value
    assert not any(Cache(Path(os.environ["ZOO_CACHE_DIR"])).scan())
    art, _ = fetch(str(share), str(published.good))  # the next remote's honest header is taken
    assert change.items() - art.manifest.header["macros"].items()


def test_cache_verify_finds_a_header_figure_rewritten_in_the_cache(published: Published) -> None:
    from zoo.registry.firmware.c_header import HeaderOptions, pte_header
    from zoo.registry.verify.verification import verify_entry

    (entry,) = [e for _, e, _ in Cache(published.cache).scan() if e and e.manifest.target == "ethos-u55-128"]
    manifest_path = entry.path / "manifest.json"
    data = json.loads(manifest_path.read_text())
    data["header"]["macros"]["method_allocator_bytes"] = 16
    pte = entry.file("pte").read_bytes()
    header = pte_header(pte, file_name="add_u55-128.h", options=HeaderOptions(), macros=data["header"]["macros"]).encode()
    entry.file("header").write_bytes(header)
    for f in data["files"]:
        if f["kind"] == "header":
            f["size"], f["sha256"] = len(header), hashlib.sha256(header).hexdigest()
    manifest_path.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    (again,) = [e for _, e, _ in Cache(published.cache).scan() if e and e.manifest.target == "ethos-u55-128"]
    result = verify_entry(again)
    (header_check,) = [c for c in result.checks if c.name == "header"]
    assert not header_check.passed and "METHOD_ALLOCATOR_BYTES is 16" in header_check.detail, header_check.detail


# 7. A directory remote holds only regular files (issue 29): a FIFO or a device never hangs
#    a fetch or fills memory, and a full cache disk is named as such, not as the remote's fault.

def _fetch_within(seconds: float, *remotes: str) -> tuple[Artifact | None, list[str], BaseException | None]:
    out: dict[str, Any] = {"notes": []}

    def run() -> None:
        try:
            out["art"] = Zoo().fetch("add", "u55-128", remotes=remotes, build=False, notice=out["notes"].append)
        except BaseException as exc:
            out["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"the fetch still runs after {seconds} s"
    return out.get("art"), out["notes"], out.get("error")


@pytest.mark.parametrize("what", ["index fifo", "index device", "pte fifo"])
@pytest.mark.slow
def test_a_pipe_or_a_device_in_a_directory_remote_is_refused_at_once(what: str, published: Published,
                                                                    tmp_path: Path) -> None:
    share = published.bad_copy(tmp_path)
    if what.startswith("index"):
        target = share / "index.json"
    else:
        target = artifact_dir(share, record(share, "add", "u55-128")[1]) / PTE
    target.unlink()
    if what.endswith("fifo"):
        os.mkfifo(target)
    else:
        target.symlink_to("/dev/zero")
    art, notes, error = _fetch_within(30, str(share), str(published.good))
    assert error is None and art is not None, error
    assert_from(art, notes, str(published.good))
    assert any("is not a regular file" in n for n in notes), notes


@pytest.mark.slow
def test_a_full_cache_disk_during_a_download_is_named_as_the_cache(published: Published, tmp_path: Path) -> None:
    """RLIMIT_FSIZE makes every write past 2 KiB fail, as a full disk does (the manifest is larger)."""
    import subprocess
    import sys

    script = (
        "import resource, signal\n"
        "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
        "resource.setrlimit(resource.RLIMIT_FSIZE, (2048, 2048))\n"
        "from zoo import Zoo, ZooError\n"
        f"try:\n    Zoo().fetch('add', 'u55-128', remotes=[{str(published.good)!r}], build=False, notice=print)\n"
        "except ZooError as exc:\n    print('ERROR', type(exc).__name__, exc)\n"
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "ZOO_SNAPSHOTS": "0"})
    assert "ERROR CacheError cannot write manifest.json into the cache (" in proc.stdout, proc.stdout + proc.stderr
    assert "File too large" in proc.stdout and "cannot read" not in proc.stdout
