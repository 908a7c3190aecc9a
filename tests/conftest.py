from __future__ import annotations

import contextlib
import dataclasses
import os
import socket
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from zoo.registry.request import (
    reproducible,  # Before anything in the test session computes with torch: the in-process builds
)

# below need the reproducible kernels, which torch fixes at its first computation.
reproducible.pin()

from tests.fake_compile import FakeCompile  # noqa: E402
from zoo import BuildError  # noqa: E402

if TYPE_CHECKING:
    from zoo import Artifact, PackageData

ROOT = Path(__file__).resolve().parents[1]
ZOO_ENV = ("ZOO_CONFIG", "ZOO_PLUGINS", "ZOO_LOAD_PLUGINS", "ZOO_STRICT_PLUGINS", "ZOO_OFFLINE", "ZOO_CACHE_DIR",
           "ZOO_DEBUG")


@pytest.fixture(scope="session")
def refusing_endpoint() -> Iterator[str]:
    """A loopback URL where connections are refused: a port held bound, never listened on."""
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        yield f"http://127.0.0.1:{held.getsockname()[1]}"


def isolate(monkeypatch: pytest.MonkeyPatch, root: Path, refusing_endpoint: str) -> None:
    """What every test runs in (``isolated``), for a fixture wider than a test to build in too."""
    for name in ZOO_ENV:
        monkeypatch.delenv(name, raising=False)
    # A pipe's whole lines unless a test asks for a width: pytest-xdist's workers inherit COLUMNS=80.
    for name in ("COLUMNS", "LINES"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HF_ENDPOINT", refusing_endpoint)
    monkeypatch.setenv("ZOO_CACHE_DIR", str(root / "cache"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(root / "xdg-config"))
    monkeypatch.chdir(root)


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, refusing_endpoint: str) -> Iterator[Path]:
    """No test sees the user's config, cache or plugin settings, or reaches the Hub: the default
    remote is tried where a test has no zoo.toml, and is refused at once."""
    isolate(monkeypatch, tmp_path, refusing_endpoint)
    yield tmp_path


@pytest.fixture(scope="session")
def plugin_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """tests/plugin_dist installed for real (dist-info and entry points) into a private folder."""
    target = tmp_path_factory.mktemp("plugin-site")
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation",
         "--target", str(target), str(ROOT / "tests" / "plugin_dist")],
        check=True, capture_output=True,
    )
    return target


def run_zoo(*args: str, env: dict[str, str] | None = None, pythonpath: Path | None = None,
            cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """Run the real CLI in a fresh interpreter."""
    full_env = {k: v for k, v in os.environ.items()}
    if pythonpath is not None:
        full_env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(pythonpath), full_env.get("PYTHONPATH")]))
    full_env.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "zoo", *args], capture_output=True, text=True, env=full_env, cwd=cwd, timeout=600,
    )


HEAVY = ("torch", "torchvision", "executorch", "torchao")

# Runs the CLI in this interpreter, then reports which watched packages got imported.
_PROBE = textwrap.dedent("""
    import sys
    watched = set(sys.argv[1].split(","))
    from zoo.cli import main
    try:
        main(sys.argv[2:], prog_name="zoo")
    finally:
        loaded = sorted({m.split(".")[0] for m in sys.modules} & watched)
        print("LOADED:" + ",".join(loaded), file=sys.stderr)
""")


@dataclass
class Probed:
    returncode: int
    stdout: str
    stderr: str
    """Without the probe's own line."""
    loaded: list[str]
    """The watched top-level packages the command imported (``<no report>`` if it died first)."""


def run_probed(*args: str, watch: tuple[str, ...] = HEAVY, env: dict[str, str] | None = None,
               base_env: dict[str, str] | None = None, cwd: Path | None = None, no_site: bool = False) -> Probed:
    """The real CLI in a fresh interpreter, reporting which of ``watch`` it imported.
    ``base_env`` replaces os.environ; ``no_site`` runs without site-packages (python -S)."""
    full_env = dict(os.environ if base_env is None else base_env)
    full_env.update(env or {})
    cmd = [sys.executable, *(["-S"] if no_site else []), "-c", _PROBE, ",".join(watch), *args]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=full_env, cwd=cwd, timeout=600)
    lines = proc.stderr.splitlines()
    reports = [line for line in lines if line.startswith("LOADED:")]
    loaded = [m for m in reports[-1].removeprefix("LOADED:").split(",") if m] if reports else ["<no report>"]
    stderr = "\n".join(line for line in lines if not line.startswith("LOADED:"))
    return Probed(proc.returncode, proc.stdout, stderr, loaded)


# --- real builds of the built-in models, shared by every test file ------------------------------

BUILDS = [
    ("add", "u55-128"), ("add", "u85-256"), ("add", "portable"),
    ("softmax", "u55-128"), ("softmax", "u85-256"), ("softmax", "portable"),
    ("mnist", "u55-128"), ("mnist", "u85-256"), ("mnist", "portable"),
    ("mv2", "u55-128"), ("mv2", "u85-256"), ("mv2", "portable"),
    # The NXP i.MX93 learning path: U65-256, Ethos_U65_High_End, Shared_Sram, 640 KiB.
    ("add", "imx93"), ("mv2", "imx93"),
    # A board of the tests' own (zoo.toml below): u55-128 with 1000 KiB of SRAM, between
    # what mv2 needs with Vela's Size (about 354 KiB) and Performance (about 1474 KiB).
    ("mv2", "u55-1000k"),
]
# Built without the numerical check: mv2 on the host runtime takes about 2.4 s an
# image, and the imx93 builds are what tests/test_verify.py lowers again to add it.
UNVERIFIED = {("mv2", "portable"), ("add", "imx93"), ("mv2", "imx93")}
TEST_BOARDS = """
[boards.u55-1000k]
target = "ethos-u55-128"
sram = "1000KiB"
description = "tests: an Ethos-U55-128 with 1000 KiB of SRAM"
"""


def refusal_of_other_data(data: PackageData, tmp_path: Path) -> str:
    """What a pack's data (``zoo_audio.fsdd.DATA``, ``zoo.datasets.lfw_subset.DATA``) says when its snapshot
    expects other bytes (64 zeros)."""
    import json

    wrong = tmp_path / "snapshot.json"
    wrong.write_text(json.dumps({**data.snapshot(), "sha256": "0" * 64}))
    with pytest.raises(BuildError) as caught:
        dataclasses.replace(data, snapshot_file=wrong).checked_path()
    return str(caught.value)


def run_dir(factory: pytest.TempPathFactory, name: str) -> Path:
    """A folder of this test run that every pytest-xdist worker shares (each worker's own temporary
    folders sit inside the run's), made if it is new. What the workers build there goes through a
    file lock: the zoo cache's for builds, ``file(LOCK)`` for the firmware's runtime."""
    base = factory.getbasetemp()
    path = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / name
    path.mkdir(exist_ok=True)
    return path


def worker_index() -> int:
    """This pytest-xdist worker's number (gw1 is 1), 0 without xdist."""
    return int(os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw") or 0)


@pytest.fixture(scope="session")
def shared_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One zoo cache for the whole run, every worker's builds included: a build one worker
    made is a cache hit for the other, and its lock keeps two workers from making it twice."""
    return run_dir(tmp_path_factory, "shared-cache")


@pytest.fixture(scope="session")
def boards_config(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("boards") / "zoo.toml"
    path.write_text(TEST_BOARDS)
    return path


@pytest.fixture(scope="session")
def built(shared_cache: Path, boards_config: Path) -> dict[tuple[str, str], Artifact]:
    """Every (model, target) in BUILDS, built the way ``zoo build MODEL --target a,b,c``
    builds: one pipeline run per model and TOSA specification (so mv2's u55-128 and
    u55-1000k builds share one lowering)."""
    from zoo import Zoo, ZooOptions

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ZOO_CACHE_DIR", str(shared_cache))
        for name in ("ZOO_CONFIG", "ZOO_PLUGINS", "ZOO_LOAD_PLUGINS"):
            mp.delenv(name, raising=False)
        zoo = Zoo(ZooOptions(config_path=boards_config))
        out = {}
        runs = [(model, verify, targets) for model in dict.fromkeys(m for m, _ in BUILDS) for verify in (True, None)
                if (targets := [t for m, t in BUILDS if m == model and ((m, t) in UNVERIFIED) is (verify is None)])]
        # Workers take the runs from opposite ends: each builds what the other has not reached (mv2's
        # two runs, the longest, on both at once), and finds the rest in the shared cache.
        for model, verify, targets in runs[::-1] if worker_index() % 2 else runs:
            arts = zoo.fetch_many([model], targets, weights="random" if model == "mv2" else None, verify=verify)
            out.update({(model, t): a for t, a in zip(targets, arts, strict=True)})
        return out


@contextlib.contextmanager
def in_shared_cache(shared_cache: Path, folder: Path | None = None) -> Iterator[None]:
    """A session build's surroundings: the run's shared cache, no user config or extra plugins,
    and ``folder`` as the working directory where given."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ZOO_CACHE_DIR", str(shared_cache))
        for name in ("ZOO_CONFIG", "ZOO_PLUGINS", "ZOO_LOAD_PLUGINS"):
            mp.delenv(name, raising=False)
        if folder is not None:
            mp.chdir(folder)
        yield


@pytest.fixture(scope="session")
def mnist_u65(shared_cache: Path, tmp_path_factory: pytest.TempPathFactory) -> Artifact:
    """mnist int8 for u65-256 (its own lowering: about 70 s) with its self-test bundle, verified: the
    Dedicated_Sram build that tests/command_stream's interpreter and NPU-program tests share."""
    from zoo import Zoo

    with in_shared_cache(shared_cache, tmp_path_factory.mktemp("mnist-u65")):
        return Zoo().fetch("mnist", "u65-256", verify=True, io="int8", bundle=True)


@pytest.fixture(scope="session")
def mnist_io_builds(shared_cache: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Artifact]:
    """mnist for u55-128 with int8 I/O (and its u55-64 retarget, with the self-test bundle) and
    with camera pixels, verified: the integer-I/O builds that tests/test_io_modes.py and the
    Cortex-M55 firmware test (tests/firmware/) share."""
    from zoo import Zoo

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ZOO_CACHE_DIR", str(shared_cache))
        for name in ("ZOO_CONFIG", "ZOO_PLUGINS", "ZOO_LOAD_PLUGINS"):
            mp.delenv(name, raising=False)
        mp.chdir(tmp_path_factory.mktemp("mnist-io-builds"))
        zoo = Zoo()
        # u55-64 shares the u55-128 lowering: integer I/O is set before Vela, so retargeting keeps it.
        int8, retargeted = zoo.fetch_many(["mnist"], ["u55-128", "u55-64"], verify=True, io="int8", bundle=True)
        return {"mnist int8": int8, "mnist int8 u55-64": retargeted,
                "mnist pixels": zoo.fetch("mnist", "u55-128", verify=True, io="pixels")}


@pytest.fixture(scope="session")
def ds_cnn_int8(shared_cache: Path, tmp_path_factory: pytest.TempPathFactory) -> Artifact:
    """ds-cnn-fsdd for u55-128 with int8 I/O, verified, with its self-test bundle: the whole program is one
    delegate, so its NPU-program level and its bundle hold the TOSA reference model's outputs of the
    delegate itself (the firmware test of the stand-in's model of the NPU, tests/firmware/)."""
    from zoo import Zoo

    with in_shared_cache(shared_cache, tmp_path_factory.mktemp("ds-cnn-int8")):
        return Zoo().fetch("ds-cnn-fsdd", "u55-128", verify=True, io="int8", bundle=True)


@pytest.fixture
def use_shared_cache(shared_cache: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("ZOO_CACHE_DIR", str(shared_cache))
    yield shared_cache


# --- the fast tier: a compile step that lowers nothing ------------------------------------------


@pytest.fixture
def fake_compile(monkeypatch: pytest.MonkeyPatch) -> FakeCompile:
    """Builds go through the real resolver, executor, checks and cache, but the
    compile step hands out stored results of ``add`` (see tests/fake_compile.py)."""
    import zoo.registry.compile

    fake = FakeCompile()
    monkeypatch.setattr(zoo.registry.compile, "compile_targets", fake)
    return fake

