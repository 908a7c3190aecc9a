"""A repeated light command is answered from its snapshot (zoo.cli.snapshot), and
every change that could alter its answer makes it run in full again."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.conftest import ROOT, FakeCompile, run_zoo

TRACE = {"ZOO_SNAPSHOT_TRACE": "1"}


def replayed(proc: subprocess.CompletedProcess[str]) -> bool:
    return "zoo: snapshot: replayed" in proc.stderr


def imports(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> tuple[str, set[str]]:
    """The command's stdout, and the modules it imported (python -X importtime)."""
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "zoo", *args], capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, cwd=cwd, timeout=120)
    assert proc.returncode == 0, proc.stderr
    loaded = {line.split("|")[-1].strip() for line in proc.stderr.splitlines() if line.startswith("import time:")}
    return proc.stdout, loaded


def write_plugin(folder: Path, description: str) -> None:
    folder.mkdir(exist_ok=True)
    (folder / "snap_plugin.py").write_text(textwrap.dedent(f"""
        from zoo import Dataset, InputSpec, ModelSpec, WeightsVariant, hookimpl

        @hookimpl
        def register_models(register):
            register(ModelSpec(
                name="snapmodel", version="1", description={description!r}, task="operator",
                inputs=(InputSpec("x", (1, 4), "float32"),), build=lambda *args: None,
                example_inputs=lambda: (), calibration=Dataset(size=1, description="one", load=lambda: [], identity=lambda: "none"),
                weights=(WeightsVariant("random", "untrained", "generated", "n/a", identity=lambda: "seed:0"),),
            ))
    """))


@pytest.mark.slow
def test_a_repeated_listing_is_replayed_without_loading_plugins_or_click() -> None:
    first = run_zoo("list")
    assert first.returncode == 0 and "mnist" in first.stdout
    again, loaded = imports("list", env=TRACE)
    assert again == first.stdout
    assert not {"click", "pluggy", "zoo._spec", "zoo._metric", "zoo._board", "zoo.plugins.mnist"} & loaded, sorted(loaded)
    assert replayed(run_zoo("list", env=TRACE))


@pytest.mark.slow
def test_snapshots_can_be_turned_off(isolated: Path) -> None:
    off = {"ZOO_SNAPSHOTS": "0", **TRACE}
    assert run_zoo("targets", env=off).returncode == 0
    assert not replayed(run_zoo("targets", env=off))
    assert not (isolated / "cache" / "snapshots").exists()


@pytest.mark.slow
def test_a_changed_plugin_module_is_loaded_afresh(tmp_path: Path) -> None:
    site = tmp_path / "site"
    write_plugin(site, "first words")
    env = {"ZOO_PLUGINS": "snap_plugin", **TRACE}
    assert "first words" in run_zoo("info", "snapmodel", env=env, pythonpath=site).stdout
    assert replayed(run_zoo("info", "snapmodel", env=env, pythonpath=site))
    write_plugin(site, "second, longer words")
    changed = run_zoo("info", "snapmodel", env=env, pythonpath=site)
    assert "second, longer words" in changed.stdout and not replayed(changed)
    assert "snap_plugin.py changed" in changed.stderr


@pytest.mark.slow
def test_a_new_zoo_toml_in_the_working_folder_is_read(tmp_path: Path) -> None:
    work = tmp_path / "project" / "firmware"
    work.mkdir(parents=True)
    assert "my-board" not in run_zoo("targets", cwd=work).stdout
    assert replayed(run_zoo("targets", cwd=work, env=TRACE))
    # In a parent, as zoo.toml is looked for there too.
    (tmp_path / "project" / "zoo.toml").write_text(
        '[boards.my-board]\ntarget = "ethos-u55-128"\nsram = "512KiB"\ndescription = "a board"\n')
    assert "my-board" in run_zoo("targets", cwd=work).stdout


@pytest.mark.slow
def test_a_distribution_installed_later_is_found(tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    assert "tiny-linear" not in run_zoo("list", pythonpath=site).stdout
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation",
                    "--target", str(site), str(ROOT / "tests" / "plugin_dist")], check=True, capture_output=True)
    listed = run_zoo("list", pythonpath=site, env=TRACE)
    assert not replayed(listed)
    assert "tiny-linear" in listed.stdout


@pytest.mark.slow
def test_a_corrupt_snapshot_is_ignored(isolated: Path) -> None:
    first = run_zoo("list")
    (snap,) = (isolated / "cache" / "snapshots").glob("*.snap")
    snap.write_bytes(snap.read_bytes()[:100])
    again = run_zoo("list", env=TRACE)
    assert again.returncode == 0 and again.stdout == first.stdout and not replayed(again)


def test_a_failed_command_is_not_recorded(isolated: Path) -> None:
    assert run_zoo("info", "no-such-model").returncode != 0
    assert not list((isolated / "cache" / "snapshots").glob("*.snap"))


# --- fetch from the cache ---------------------------------------------------------------------


@pytest.fixture
def cached_add(fake_compile: FakeCompile) -> None:
    """add for u55-128 in this test's cache (a real compile result, stored by the real pipeline)."""
    from zoo import Zoo

    Zoo().fetch("add", "u55-128")


@pytest.mark.slow
def test_a_repeated_hit_into_a_folder_is_replayed_and_restores_a_missing_file(cached_add: None, tmp_path: Path) -> None:
    out = tmp_path / "out"
    first = run_zoo("fetch", "add", "-t", "u55-128", "-o", str(out))
    assert first.returncode == 0, first.stderr
    files = {p.name: p.read_bytes() for p in out.iterdir()}
    (out / "add_u55-128.h").unlink()
    again = run_zoo("fetch", "add", "-t", "u55-128", "-o", str(out), env=TRACE)
    assert replayed(again) and again.stdout == first.stdout
    assert {p.name: p.read_bytes() for p in out.iterdir()} == files


@pytest.mark.slow
def test_a_file_changed_in_the_folder_goes_to_the_full_command(cached_add: None, tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert run_zoo("fetch", "add", "-t", "u55-128", "-o", str(out)).returncode == 0
    header = out / "add_u55-128.h"
    header.write_text("/* edited by hand */\n")
    again = run_zoo("fetch", "add", "-t", "u55-128", "-o", str(out), env=TRACE)
    assert not replayed(again) and "differs from the artifact" in again.stderr


@pytest.mark.slow
def test_a_tampered_cache_entry_is_never_handed_out_from_a_snapshot(cached_add: None, isolated: Path) -> None:
    first = run_zoo("fetch", "add", "-t", "u55-128", "--no-build")
    assert first.returncode == 0, first.stderr
    pte = Path(first.stdout.splitlines()[0])
    st = pte.stat()
    data = bytearray(pte.read_bytes())
    data[-1] ^= 0xFF
    pte.write_bytes(bytes(data))
    os.utime(pte, ns=(st.st_atime_ns, st.st_mtime_ns))  # same size and mtime: only the bytes tell
    again = run_zoo("fetch", "add", "-t", "u55-128", "--no-build", env=TRACE)
    assert not replayed(again)
    assert "no longer has the sha256" in again.stderr
    assert again.returncode != 0 or again.stdout != first.stdout or "corrupt" in again.stderr.lower()


# --- what a snapshot holds, and what it proves --------------------------------------------------


@pytest.mark.slow
def test_credentials_in_the_environment_never_reach_the_cache(isolated: Path) -> None:
    secrets = {"HF_TOKEN": "hf_canary0123456789", "AWS_SECRET_ACCESS_KEY": "aws-canary-0123456789",
               "MY_SERVICE_PASSWORD": "pw-canary-0123456789"}
    for _ in range(2):
        assert run_zoo("list", env=secrets).returncode == 0
    assert replayed(run_zoo("list", env={**secrets, **TRACE}))
    stored = b"".join(p.read_bytes() for p in (isolated / "cache").rglob("*") if p.is_file())
    assert stored, "the listing recorded nothing"
    for value in secrets.values():
        assert value.encode() not in stored
    # Nor the rest of the environment in clear: the key is stored only as its hash.
    assert b"XDG_CONFIG_HOME" not in stored


@pytest.mark.slow
def test_an_edited_snapshot_is_not_replayed(isolated: Path) -> None:
    first = run_zoo("list")
    (snap,) = (isolated / "cache" / "snapshots").glob("*.snap")
    data = snap.read_bytes()
    assert b"mnist" in data
    snap.write_bytes(data.replace(b"mnist", b"FORGD"))
    again = run_zoo("list", env=TRACE)
    assert again.returncode == 0 and not replayed(again)
    assert again.stdout == first.stdout and "FORGD" not in again.stdout
    assert "not sealed by this user's key" in again.stderr


@pytest.mark.slow
def test_a_forged_handout_in_a_snapshot_writes_nothing(cached_add: None, isolated: Path, tmp_path: Path) -> None:
    """The handout names the cache file and its sha256: pointing it at other bytes, with a digest
    to match, breaks the seal, and the full command hands out the real, checked artifact."""
    import hashlib
    import marshal

    out = tmp_path / "out"
    first = run_zoo("fetch", "add", "-t", "u55-128", "-o", str(out))
    assert first.returncode == 0, first.stderr
    real = {p.name: p.read_bytes() for p in out.iterdir()}
    for p in out.iterdir():
        p.unlink()
    forged = tmp_path / "forged.pte"
    forged.write_bytes(b"not a program")
    (snap,) = (isolated / "cache" / "snapshots").glob("*.snap")
    data = snap.read_bytes()
    digest, deps, handouts, chunks = marshal.loads(data[32:])
    handouts = [(dest, str(forged), hashlib.sha256(b"not a program").hexdigest(), None) if dest and dest.endswith(".pte")
                else (dest, source, sha, stat) for dest, source, sha, stat in handouts]
    snap.write_bytes(data[:32] + marshal.dumps((digest, deps, handouts, chunks)))
    again = run_zoo("fetch", "add", "-t", "u55-128", "-o", str(out), env=TRACE)
    assert again.returncode == 0 and not replayed(again), again.stderr
    assert {p.name: p.read_bytes() for p in out.iterdir()} == real
