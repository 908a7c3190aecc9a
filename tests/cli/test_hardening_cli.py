"""Issue 13, the command line: ``-o`` written safely and concurrently, OS errors
as one ``zoo: error`` line, ``verify --sram-budget`` and a broken ``--model-file``.

Fast tier: the artifact is built by the fake compile (tests/fake_compile.py) in
this process; the real CLI then runs in fresh processes and finds it cached.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from tests.conftest import run_zoo
from tests.fake_compile import FakeCompile
from zoo import Artifact, SpecError, Zoo
from zoo._fs import not_a_folder
from zoo.registry.model_files.py_file import spec_from_model_file


@pytest.fixture
def cached(fake_compile: FakeCompile) -> Artifact:
    return Zoo().fetch("add", "u55-128")


def _one_error_line(proc: subprocess.CompletedProcess[str]) -> str:
    assert "Traceback" not in proc.stderr, proc.stderr
    errors = [line for line in proc.stderr.splitlines() if line.startswith("zoo: error:")]
    assert len(errors) == 1, proc.stderr
    return errors[0]


# --- defects 1 and 6: the -o folder ---------------------------------------------------------------

@pytest.mark.slow
def test_planted_symlinks_in_the_output_folder_are_replaced_never_followed(cached: Artifact, tmp_path: Path) -> None:
    out, victim = tmp_path / "shared-out", tmp_path / "victim.txt"
    out.mkdir()
    victim.write_text("precious")
    names = [cached.pte.name, cached.header.name, "manifest.json"]
    for name in names:
        (out / name).symlink_to(victim)
        (out / f".{name}.zoo-tmp").symlink_to(victim)  # the temporary names zoo used to use

    refused = run_zoo("fetch", "add", "-t", "u55-128", "-o", str(out))  # files no manifest there describes
    assert refused.returncode != 0 and "Pass --force to replace it" in refused.stderr
    assert victim.read_text() == "precious"
    proc = run_zoo("fetch", "add", "-t", "u55-128", "-o", str(out), "--force")
    assert proc.returncode == 0, proc.stderr
    assert victim.read_text() == "precious"
    for name in names:
        assert not (out / name).is_symlink()
    assert (out / cached.pte.name).read_bytes() == cached.pte.read_bytes()
    assert (out / cached.header.name).read_bytes() == cached.header.read_bytes()


_FETCHER = textwrap.dedent("""
    import sys
    from pathlib import Path
    from zoo import Zoo
    for _ in range(int(sys.argv[2])):
        Zoo().fetch("add", "u55-128", out_dir=Path(sys.argv[1]))
""")


@pytest.mark.slow
def test_concurrent_fetches_into_one_output_folder_all_succeed_and_no_reader_sees_a_partial_file(
    cached: Artifact, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    want = {
        cached.pte.name: hashlib.sha256(cached.pte.read_bytes()).hexdigest(),
        cached.header.name: hashlib.sha256(cached.header.read_bytes()).hexdigest(),
    }
    assert cached.model_asm is not None
    want[cached.model_asm.name] = hashlib.sha256(cached.model_asm.read_bytes()).hexdigest()
    for helper in (cached.io_header, cached.io_source):
        assert helper is not None
        want[helper.name] = hashlib.sha256(helper.read_bytes()).hexdigest()
    seen: list[str] = []
    stop = threading.Event()

    def read() -> None:
        while not stop.is_set():
            for name, digest in want.items():
                try:
                    data = (out / name).read_bytes()
                except FileNotFoundError:
                    continue
                seen.append("whole" if hashlib.sha256(data).hexdigest() == digest else f"partial {name}: {len(data)} bytes")

    reader = threading.Thread(target=read)
    reader.start()
    try:
        procs = [subprocess.Popen([sys.executable, "-c", _FETCHER, str(out), "10"], stderr=subprocess.PIPE, text=True)
                 for _ in range(4)]
        errors = [p.communicate(timeout=300)[1] for p in procs]
    finally:
        stop.set()
        reader.join()
    assert [p.returncode for p in procs] == [0, 0, 0, 0], errors
    assert seen and set(seen) == {"whole"}, sorted(set(seen))
    assert sorted(p.name for p in out.iterdir()) == sorted([*want, "manifest.json"])  # no temporaries left


@pytest.mark.slow
def test_a_folder_made_by_another_writer_meanwhile_is_never_taken_for_a_blocker(tmp_path: Path) -> None:
    """The check before -o is written looks at each name once: a parent that a
    concurrent fetch creates between two looks is a folder, not a file in the way."""
    target = tmp_path / "a" / "b" / "out"
    stop = threading.Event()

    def churn() -> None:
        while not stop.is_set():
            (tmp_path / "a" / "b").mkdir(parents=True, exist_ok=True)
            shutil.rmtree(tmp_path / "a", ignore_errors=True)

    churner = threading.Thread(target=churn)
    churner.start()
    try:
        blockers = {str(not_a_folder(target)) for _ in range(20_000)}
    finally:
        stop.set()
        churner.join()
    assert blockers == {"None"}, blockers


def test_what_blocks_an_output_folder_is_named(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    (tmp_path / "linked").symlink_to(tmp_path, target_is_directory=True)
    assert not_a_folder(tmp_path / "file" / "out") == tmp_path / "file"
    assert not_a_folder(tmp_path / "dangling" / "out") == tmp_path / "dangling"
    assert not_a_folder(tmp_path / "linked" / "out") is None
    assert not_a_folder(tmp_path / "new" / "deeper") is None


# --- raw tracebacks for OS errors -----------------------------------------------------------------

@pytest.mark.slow
def test_zoo_cache_dir_pointing_at_a_file_is_a_usage_error(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("x")
    for cache, args in ((blocker, ("fetch", "add", "-t", "u55-128")), (blocker / "sub", ("cache", "ls"))):
        proc = run_zoo(*args, env={"ZOO_CACHE_DIR": str(cache)})
        assert proc.returncode == 2, proc.stderr
        line = _one_error_line(proc)
        assert f"the cache folder {cache} cannot be used" in line and "is not a folder" in line, line
        assert "ZOO_CACHE_DIR" in line


@pytest.mark.slow
def test_output_folder_under_a_file_is_a_usage_error(cached: Artifact, tmp_path: Path) -> None:
    blocker = tmp_path / "firmware.bin"
    blocker.write_text("x")
    proc = run_zoo("fetch", "add", "-t", "u55-128", "-o", str(blocker / "out"))
    assert proc.returncode == 2, proc.stderr
    line = _one_error_line(proc)
    assert f"-o {blocker / 'out'}: {blocker} is not a folder" in line and "choose another output folder" in line


def test_an_os_error_no_layer_expected_still_names_its_path(cached: Artifact, tmp_path: Path) -> None:
    blocker = tmp_path / "report-file"
    blocker.write_text("x")
    proc = run_zoo("report", "--all", "--html", str(blocker / "catalogue.html"))
    assert proc.returncode == 1, proc.stderr
    line = _one_error_line(proc)
    assert str(blocker) in line and "Check that the path exists" in line


def _run_read_only(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The real CLI, with ``folder`` read-only. Mode bits do not stop root, so as root
    the folder is bind-mounted read-only in a mount namespace of that process alone."""
    cmd = [sys.executable, "-m", "zoo", *args]
    if os.geteuid() != 0:
        dirs = [folder, *(p for p in folder.rglob("*") if p.is_dir())]
        for d in dirs:
            d.chmod(d.stat().st_mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
        try:
            return subprocess.run(cmd, capture_output=True, text=True, timeout=300, check=False)
        finally:
            for d in dirs:
                d.chmod(d.stat().st_mode | stat.S_IWUSR)
    probe = subprocess.run(["unshare", "--mount", "--propagation", "private", "true"], capture_output=True, check=False) \
        if shutil.which("unshare") else None
    if probe is None or probe.returncode != 0:
        pytest.skip("running as root without unshare(1) and mount namespaces: cannot make a folder read-only")
    script = 'mount --bind "$0" "$0" && mount -o remount,ro,bind "$0" "$0" && exec "$@"'
    return subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c", script, str(folder), *cmd],
                          capture_output=True, text=True, timeout=300, check=False)


@pytest.mark.slow
def test_a_read_only_cache_or_output_folder_is_one_error_line(cached: Artifact, isolated: Path) -> None:
    cache = isolated / "cache"
    hit = _run_read_only(cache, "fetch", "add", "-t", "u55-128", "--json")
    assert hit.returncode == 0, hit.stderr
    assert str(cached.pte) in hit.stdout

    for args in (("fetch", "add", "-t", "u55-64"), ("cache", "prune", "--all")):  # a build, then an eviction
        proc = _run_read_only(cache, *args)
        assert proc.returncode == 1, proc.stderr
        line = _one_error_line(proc)
        assert f"cannot write to the cache at {cache}" in line and "ZOO_CACHE_DIR" in line, line

    out = isolated / "read-only-out"
    out.mkdir()
    proc = _run_read_only(out, "fetch", "add", "-t", "u55-128", "-o", str(out))
    assert proc.returncode == 1, proc.stderr
    line = _one_error_line(proc)
    assert f"cannot write the artifact into -o {out}" in line and "choose a folder you can write" in line, line


# --- verify --sram-budget -------------------------------------------------------------------------

@pytest.mark.parametrize("with_manifest", [True, False])
@pytest.mark.slow
def test_verify_sram_budget_fails_an_artifact_whose_scratch_does_not_fit(
    cached: Artifact, tmp_path: Path, with_manifest: bool
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    shutil.copy(cached.pte, out)
    if with_manifest:
        shutil.copy(cached.pte.parent / "manifest.json", out)
    pte = str(out / cached.pte.name)

    fits = run_zoo("verify", pte, "-t", "u55-128", "--sram-budget", "1KiB")
    assert fits.returncode == 0, fits.stdout + fits.stderr
    assert "within the SRAM budget of 1.0 KiB" in fits.stdout

    over = run_zoo("verify", pte, "-t", "u55-128", "--sram-budget", "16")
    assert over.returncode == 1, over.stdout + over.stderr
    basis = "Vela's SRAM estimate in the manifest" if with_manifest else "the scratch area of its Vela payload"
    assert f"it needs 32 B (32 bytes, {basis}), more than the SRAM budget of 16 B (16 bytes)" in over.stdout


# --- a --model-file that fails to load ------------------------------------------------------------

@pytest.mark.stack
def test_a_model_file_with_a_syntax_error_says_so_not_unknown_model(tmp_path: Path) -> None:
    path = tmp_path / "syntax.py"
    path.write_text("import torch\ndef forward(:\n    pass\n")
    proc = run_zoo("--model-file", str(path), "fetch", "-t", "u55-128")
    assert proc.returncode == 2
    line = _one_error_line(proc)
    assert line == f"zoo: error: model file {path} failed to load at line 2: SyntaxError: invalid syntax"
    assert "unknown model" not in proc.stderr


@pytest.mark.stack
def test_a_model_file_that_raises_names_the_line_and_the_error(tmp_path: Path) -> None:
    path = tmp_path / "raises.py"
    path.write_text("import torch\n\ndef make():\n    return 1 / 0\n\nModelUnderTest = make()\n")
    with pytest.raises(SpecError, match=f"^model file {path} failed to load at line 4: ZeroDivisionError: division by zero$"):
        spec_from_model_file(path)


# Issue 20: zoo.toml's values are named where they cause an error, and the CLI exits as shells expect.

def _config(tmp_path: Path, text: str) -> dict[str, str]:
    (tmp_path / "zoo.toml").write_text(text)
    return {"ZOO_CONFIG": str(tmp_path / "zoo.toml")}


def test_a_board_sram_that_is_not_whole_bytes_is_a_config_error(tmp_path: Path) -> None:
    env = _config(tmp_path, '[boards.tiny]\ntarget = "ethos-u55-128"\nsram = "0.5"\n')
    proc = run_zoo("targets", env=env)
    assert proc.returncode != 0
    line = _one_error_line(proc)
    assert f"{tmp_path / 'zoo.toml'}: key 'boards.tiny.sram': '0.5' is not a whole number of bytes" in line
    assert "write a size such as '512KiB'" in line


def test_a_board_name_that_target_cannot_take_is_a_config_error(tmp_path: Path) -> None:
    env = _config(tmp_path, '[boards."Bad Name"]\ntarget = "ethos-u55-128"\n')
    line = _one_error_line(run_zoo("targets", env=env))
    assert "key 'boards.Bad Name': a board name is lower-case letters" in line and "[boards.bad-name]" in line
    assert "Did you mean" not in line


@pytest.mark.parametrize(("toml", "args", "message"), [
    ('default_target = "u99"\n', ("fetch", "add", "--no-build"), "key 'default_target': unknown target 'u99'"),
    ('default_io = "pixels"\n', ("fetch", "add", "-t", "u55-128", "--no-build"), "key 'default_io' = 'pixels': "),
])
@pytest.mark.slow
def test_an_error_from_a_zoo_toml_default_names_zoo_toml(toml: str, args: tuple[str, ...], message: str,
                                                         tmp_path: Path) -> None:
    env = _config(tmp_path, toml)
    line = _one_error_line(run_zoo(*args, env=env))
    assert f"{tmp_path / 'zoo.toml'}: {message}" in line, line


@pytest.mark.slow
def test_zoo_load_plugins_naming_no_plugin_is_said(tmp_path: Path) -> None:
    proc = run_zoo("list", env={"ZOO_LOAD_PLUGINS": "tiyn"})
    assert proc.returncode == 0
    assert "zoo: warning: ZOO_LOAD_PLUGINS names 'tiyn', which matches no installed plugin" in proc.stderr
    strict = run_zoo("list", env={"ZOO_LOAD_PLUGINS": "tiyn", "ZOO_STRICT_PLUGINS": "1"})
    assert strict.returncode != 0 and "ZOO_LOAD_PLUGINS names 'tiyn'" in _one_error_line(strict)


# Where the Ctrl-C lands: each waits at a marker file, and the test sends SIGINT then.
# "torch swallows" and "torch converts" are what ``import torch`` does with a Ctrl-C that lands
# while numpy's C extension initialises (it goes on without numpy, or fails with numpy's
# "CPU dispatcher tracer already initlized"): zoo used to skip the plugin and go on to run
# the model file, which sleeps for a minute.
_PLUGINS = {
    "plugin import": "time.sleep(60)",
    "torch swallows": "try:\n    time.sleep(60)\nexcept KeyboardInterrupt:\n    pass",
    "torch converts": ("try:\n    time.sleep(60)\nexcept KeyboardInterrupt:\n"
                       "    raise RuntimeError('CPU dispatcher tracer already initlized') from None"),
}


@pytest.mark.stack
@pytest.mark.parametrize("where", ["model file", *_PLUGINS])
def test_ctrl_c_exits_130(where: str, tmp_path: Path) -> None:
    """Issue 43 item 24: a Ctrl-C at each of these moments ends zoo at once, with 130."""
    import signal
    import time

    marker = tmp_path / "started"
    wait = f"import pathlib, time\npathlib.Path({str(marker)!r}).touch()\n"
    slow = tmp_path / "slow_model.py"
    slow.write_text((wait if where == "model file" else "import time\n") + "time.sleep(60)\n")
    args = ["--model-file", str(slow), "list"]
    if where in _PLUGINS:
        (tmp_path / "waiting_plugin.py").write_text(wait + _PLUGINS[where] + "\n")
        args = ["-p", "waiting_plugin", *args]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(tmp_path), os.environ.get("PYTHONPATH")]))}
    # As from a terminal: a suite started in the background (nohup, `&` in a script) passes its
    # children SIGINT ignored, and zoo leaves an ignored SIGINT ignored, as a background job's should be.
    proc = subprocess.Popen([sys.executable, "-m", "zoo", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline = time.monotonic() + 300
        while not marker.exists():
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                pytest.fail(f"zoo never reached the {where}: {proc.communicate()[1]}")
            time.sleep(0.01)
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130, stderr
    assert "zoo: interrupted" in stderr and "Traceback" not in stderr and "skipped" not in stderr
