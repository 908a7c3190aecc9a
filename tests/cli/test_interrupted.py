"""Issue 55, also-review: Ctrl-C at each stage of a build, of a hand-out into -o and of ``zoo firmware``.

Whatever stage it lands in, zoo exits with 130 and ``zoo: interrupted``, and nothing half-written is
visible: no cache entry, no file in -o or the project folder that is not the whole set. A set of files
is swapped in by renames, and a Ctrl-C during them waits for the last (``zoo._fs.uninterrupted``).
The subprocesses build with the fast tier's fake compile (tests/fake_compile.py), paused at a marker
file at the stage under test; the test sends SIGINT then.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import ROOT
from zoo import _fs

# --- the renames that swap a set in: in process ----------------------------------------------------


@pytest.fixture
def python_sigint() -> Iterator[None]:
    """Python's own Ctrl-C handler in this test (a pytest-xdist worker may run with SIGINT ignored)."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


def _ctrl_c_after_first(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    """``os.<name>`` that delivers a Ctrl-C to this process right after its first call."""
    real = getattr(os, name)
    calls = []

    def renaming(*args: object, **kwargs: object) -> None:
        real(*args, **kwargs)
        calls.append(args)
        if len(calls) == 1:
            os.kill(os.getpid(), signal.SIGINT)

    monkeypatch.setattr(os, name, renaming)


def test_a_ctrl_c_between_the_renames_of_a_set_waits_for_the_last(python_sigint: None, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "out"
    plan: list[tuple[Path, bytes | Path]] = [(out / f"f{i}", f"new {i}".encode()) for i in range(4)]
    _ctrl_c_after_first(monkeypatch, "replace")
    with pytest.raises(KeyboardInterrupt):
        _fs.replace_all(plan)
    monkeypatch.undo()
    assert sorted(p.name for p in out.iterdir()) == ["f0", "f1", "f2", "f3"]  # all four: no temporary left


def test_a_ctrl_c_while_a_folder_is_swapped_never_loses_it(python_sigint: None, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    site = tmp_path / "site"
    _fs.replace_folder(site, {"index.html": b"old"})
    _ctrl_c_after_first(monkeypatch, "rename")  # the old folder moved aside: the new one not yet in
    with pytest.raises(KeyboardInterrupt):
        _fs.replace_folder(site, {"index.html": b"new"})
    monkeypatch.undo()
    assert (site / "index.html").read_bytes() == b"new"
    assert [p.name for p in tmp_path.iterdir()] == ["site"]


# --- each stage of a real command, in a subprocess -------------------------------------------------

# Runs zoo's CLI with the fake compile, paused at the stage ``where``: it touches MARKER and sleeps.
_LAUNCHER = textwrap.dedent("""
    import pathlib, sys, time
    marker, where = pathlib.Path(sys.argv[1]), sys.argv[2]

    def pause():
        marker.touch()
        time.sleep(60)

    import zoo.registry.compile
    from tests.fake_compile import FakeCompile
    zoo.registry.compile.compile_targets = FakeCompile(on_call=pause if where == "compile" else None)
    import zoo._fs
    real_temp = zoo._fs._temp_file
    staged = []

    def temp_file(folder, name):  # the second file staged in the folder named by ``where``: half a set there
        if folder.name == where or (where == "cache entry" and folder.parent.name == "tmp"):
            staged.append(name)
            if len(staged) == 2:
                pause()
        return real_temp(folder, name)

    zoo._fs._temp_file = temp_file
    real_stage = zoo._fs._stage

    def stage(fd, name, data, mode):  # the project's third file: the record, then half of its files
        if where == "firmware":
            staged.append(name)
            if len(staged) == 3:
                pause()
        return real_stage(fd, name, data, mode)

    zoo._fs._stage = stage
    from zoo.cli import main
    main(sys.argv[3:], prog_name="zoo")
""")


def _interrupted(tmp_path: Path, where: str, *args: str) -> str:
    """zoo ARGS stopped by SIGINT at ``where``: its stderr, after checking the exit code."""
    marker = tmp_path / "paused"
    env = {**os.environ, "ZOO_CACHE_DIR": str(tmp_path / "cache"),
           "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    proc = subprocess.Popen([sys.executable, "-c", _LAUNCHER, str(marker), where, *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env, cwd=tmp_path,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline = time.monotonic() + 120
        while not marker.exists():
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                pytest.fail(f"zoo never reached the {where}: {proc.communicate()}")
            time.sleep(0.01)
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130, stderr
    assert "zoo: interrupted" in stderr and "Traceback" not in stderr, stderr
    return stderr


def _visible(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*")) if folder.exists() else []


def _entries(cache: Path) -> list[str]:
    return _visible(cache / "v1" / "entries")


@pytest.mark.slow
@pytest.mark.parametrize("where", ["compile", "cache entry"])
def test_a_build_stopped_leaves_no_entry(tmp_path: Path, where: str) -> None:
    _interrupted(tmp_path, where, "fetch", "add", "-t", "u55-128", "-o", str(tmp_path / "out"))
    assert _entries(tmp_path / "cache") == [] and not (tmp_path / "out").exists()
    leftovers = [n for n in _visible(tmp_path / "cache" / "v1" / "tmp") if not n.endswith(".lock")]
    assert leftovers == [], leftovers  # the staging folder is gone too


@pytest.mark.slow
def test_a_hand_out_stopped_leaves_nothing_in_o(tmp_path: Path) -> None:
    _interrupted(tmp_path, "out", "fetch", "add", "-t", "u55-128", "-o", str(tmp_path / "out"))
    assert _visible(tmp_path / "out") == []
    (entry,) = (tmp_path / "cache" / "v1" / "entries").glob("*/*")  # built before: stored whole
    assert (entry / "manifest.seal").is_file()


@pytest.mark.stack  # zoo firmware loads the model's samples: torch
def test_zoo_firmware_stopped_leaves_no_half_project(tmp_path: Path) -> None:
    project = tmp_path / "fw"
    _interrupted(tmp_path, "firmware", "firmware", "add", "-t", "u55-128", "-o", str(project))
    assert _visible(project) == ["zoo-firmware.json"]  # the record naming what a rerun may replace; no file of the set
    from tests.conftest import run_zoo

    again = run_zoo("firmware", "add", "-t", "u55-128", "-o", str(project),
                    env={"ZOO_CACHE_DIR": str(tmp_path / "cache")})
    assert again.returncode == 0, again.stderr  # zoo's own folder: no --force needed to finish it
    assert "CMakeLists.txt" in _visible(project)

