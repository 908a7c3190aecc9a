"""``--executor ray`` on a real Ray cluster of two nodes on this machine (``ray
start --head`` and ``ray start --address``, started and stopped here): the artifacts
are byte-identical to local builds, a worker killed mid-build is retried and the
cache stays clean, a worker that always dies fails only its unit, a node with
other tool versions is refused, Ctrl-C cancels the tasks, and light commands
never import Ray.

This module is also the plugin of three test models: ``flaky`` kills its worker
the first time it is built (as a crash in native code would), ``sleeper``
builds for ten minutes, and ``picky``'s calibration loader raises an error that
is not zoo's.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT, run_probed
from tests.fake_compile import FakeCompile
from zoo import Artifact, ModelSpec, Zoo, ZooOptions, hookimpl
from zoo._errors import UsageError
from zoo.registry.build_units.executors import executor_for
from zoo.registry.build_units.ray_executor import recorded_cluster
from zoo.registry.build_units.run import run_unit
from zoo.registry.build_units.unit import (
    BuildUnit,
    BuiltArtifact,
    UnitFailure,
    UnitResult,
    UnitTarget,
)
from zoo.registry.request.keys import tool_versions
from zoo.registry.store.cache import sha256_bytes

THIS = "tests.registry.test_ray_executor"
WORK_DIR = "ZOO_TEST_RAY_DIR"
"""The cluster's scratch folder, in every worker's environment: ``flaky``'s marker lives there."""
RAY_EXECUTOR: Any = "ray"  # FetchOptions.executor's Literal does not list it yet


# --- the plugin --------------------------------------------------------------------------------------------

def _flaky(variant: str) -> Any:
    from zoo.plugins import add

    marker = Path(os.environ[WORK_DIR]) / "flaky-died"
    if not marker.exists():
        marker.write_text(str(os.getpid()))
        os._exit(1)  # the worker process dies mid-build
    return add.spec().build(variant)


def _flaky_json(variant: str) -> Any:
    from zoo.plugins import add

    marker = Path(os.environ[WORK_DIR]) / "flaky-json-died"
    if not marker.exists():
        marker.write_text(str(os.getpid()))
        os._exit(1)
    return add.spec().build(variant)


def _sleep(variant: str) -> Any:
    time.sleep(600)


def _no_samples(folder: Path) -> Any:
    with (Path(os.environ[WORK_DIR]) / "picky-calls").open("a") as calls:
        calls.write(f"{os.getpid()}\n")
    raise ValueError(f"picky: no samples in {folder.name}")  # not a ZooError: escapes run_unit


@hookimpl
def register_models(register: Callable[[ModelSpec], None]) -> None:
    from zoo.plugins import add

    register(dataclasses.replace(add.spec(), name="flaky", description="add, whose first build kills its worker",
                                 build=_flaky, aliases=()))
    register(dataclasses.replace(add.spec(), name="flaky-json", description="flaky, for the --json test",
                                 build=_flaky_json, aliases=()))
    register(dataclasses.replace(add.spec(), name="sleeper", description="add, building for ten minutes",
                                 build=_sleep, aliases=()))
    register(dataclasses.replace(add.spec(), name="picky", description="add, whose --calibration-dir always raises",
                                 calibration_from_dir=_no_samples, aliases=()))


# --- the cluster -------------------------------------------------------------------------------------------

@dataclass
class Cluster:
    address: str
    work: Path


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _start_node(args: list[str], log: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    """``ray start ARGS --block``: the node lives as long as this process, and stops with it."""
    ray = Path(sys.executable).parent / "ray"
    with log.open("wb") as out:
        node = subprocess.Popen(
            [str(ray), "start", "--block", "--num-cpus=1", "--disable-usage-stats", *args],
            stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True,
        )
    deadline = time.monotonic() + 90
    while "Ray runtime started" not in log.read_text(errors="replace"):
        if node.poll() is not None or time.monotonic() > deadline:
            _stop(node)
            raise RuntimeError(f"ray start {' '.join(args)} did not start: {log.read_text(errors='replace')[-2000:]}")
        time.sleep(0.2)
    return node


def _stop(node: subprocess.Popen[bytes]) -> None:
    if node.poll() is None:
        node.terminate()  # `ray start --block` stops its node's processes on SIGTERM
        try:
            node.wait(timeout=30)
        except subprocess.TimeoutExpired:
            node.kill()
            node.wait()


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """Two Ray nodes of one CPU each, and this process connected as the driver. (Ray registers
    a node under the machine's address even when told 127.0.0.1.)"""
    ray = pytest.importorskip("ray")
    work = tmp_path_factory.mktemp("ray")
    address = f"127.0.0.1:{_free_port()}"
    # Loopback only, so no token (a real cluster keeps Ray's token authentication on).
    env = {**os.environ, WORK_DIR: str(work), "RAY_AUTH_MODE": "disabled"}
    # The nodes' workers import this module and tests.crash_plugin as plugins, as every node must have the plugins.
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    env.pop("RAY_ADDRESS", None)
    before = recorded_cluster()
    nodes = []
    try:
        nodes.append(_start_node(["--head", f"--port={address.split(':')[1]}", "--include-dashboard=false"],
                                 work / "head.log", env))
        nodes.append(_start_node([f"--address={address}"], work / "second.log", env))
        ray.init(address=address, log_to_driver=False)
        deadline = time.monotonic() + 60
        while len([n for n in ray.nodes() if n["Alive"]]) < 2:
            assert time.monotonic() < deadline, f"the second node never joined: {ray.nodes()}"
            time.sleep(0.2)
        yield Cluster(address, work)
    finally:
        ray.shutdown()
        for node in reversed(nodes):
            _stop(node)
        leftovers = _forget(address, before)
        assert leftovers == [], f"the cluster at {address} left processes behind: {leftovers}"


def _forget(address: str, before: tuple[str, str] | None) -> list[str]:
    """Leave no Ray state: ``ray start --head`` recorded this cluster as the machine's current one
    (``ray_current_cluster``), and stopping it with SIGTERM leaves that record naming a dead cluster,
    which a later ``ray.init()`` would wait on. Put back what was there; return the processes of the
    cluster still alive (none, or the check fails)."""
    now = recorded_cluster()
    if now is not None and now[1].endswith(f":{address.split(':')[1]}"):
        path = Path(now[0])
        if before is not None and before[1] != now[1]:
            path.write_text(before[1])
        else:
            path.unlink(missing_ok=True)
    port = address.split(":")[1]
    alive = []
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if (f":{port}" in cmdline or f"={port}" in cmdline) and ("gcs_server" in cmdline or "raylet" in cmdline or "ray start" in cmdline):
            alive.append(cmdline[:120])
    return alive


def unit_for(zoo: Zoo, model: str, *targets: str) -> BuildUnit:
    requests = [zoo.request(model, t) for t in targets]
    return BuildUnit(
        model=model, weights=requests[0].weights.name,
        targets=tuple(UnitTarget(r.target, r.key_inputs()) for r in requests),
        plugins=zoo.load_options, boundary=requests[0].boundary,
    )


class Stages:
    """A ``progress_for``: every stage reported, per unit label."""

    def __init__(self) -> None:
        self.seen: dict[str, list[str]] = {}

    def __call__(self, unit: BuildUnit) -> Callable[[str, int | None, int | None], None]:
        def progress(stage: str, done: int | None = None, total: int | None = None) -> None:
            self.seen.setdefault(unit.label, []).append(stage)

        return progress


def _files(result: UnitResult) -> list[dict[str, bytes]]:
    out = []
    for outcome in result.outcomes:
        assert isinstance(outcome, BuiltArtifact), outcome
        out.append(outcome.files)
    return out


# --- the tests ---------------------------------------------------------------------------------------------

@pytest.mark.ray
@pytest.mark.compile
def test_a_ray_build_is_byte_identical_to_an_inline_build(
    cluster: Cluster, isolated: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import ray

    stages: list[str] = []
    [on_ray] = Zoo().fetch_outcomes(["add"], ["u55-128"], executor=RAY_EXECUTOR, force_build=True,
                                    progress=lambda stage, done, total: stages.append(stage))
    monkeypatch.setenv("ZOO_CACHE_DIR", str(isolated / "inline-cache"))
    [inline] = Zoo().fetch_outcomes(["add"], ["u55-128"], executor="inline", force_build=True)
    assert isinstance(on_ray, Artifact) and isinstance(inline, Artifact)
    assert on_ray.manifest.key == inline.manifest.key
    assert sha256_bytes(on_ray.pte.read_bytes()) == sha256_bytes(inline.pte.read_bytes())
    assert sha256_bytes(on_ray.header.read_bytes()) == sha256_bytes(inline.header.read_bytes())
    assert [(f.name, f.sha256) for f in on_ray.manifest.files] == [(f.name, f.sha256) for f in inline.manifest.files]
    assert stages[0] == "ray: queued"
    ips = {n["NodeManagerAddress"] for n in ray.nodes()}
    assert any(s.startswith(tuple(f"ray node {ip} (" for ip in ips)) and s.endswith(": started") for s in stages), stages
    assert any("finished (1 of 1 tasks done, 0 running)" in s for s in stages), stages


@pytest.mark.ray
@pytest.mark.compile
def test_results_handed_over_through_a_shared_directory_reach_the_cache_checked(cluster: Cluster, isolated: Path) -> None:
    results = cluster.work / "results"  # every node of this cluster sees this folder
    stages: list[str] = []
    [built] = Zoo().fetch_outcomes(["add"], ["u55-256"], ray_results=str(results), force_build=True,
                                   progress=lambda stage, done, total: stages.append(stage))
    assert isinstance(built, Artifact), built
    # The worker published it (its own progress line may arrive after its result: the index says it).
    assert any(s.endswith(f": downloading from {results}") for s in stages), stages
    index = (results / "index.json").read_text()
    assert built.manifest.key in index
    [folder] = [p for p in results.rglob(built.manifest.key) if p.is_dir()]
    for f in built.manifest.files:
        assert sha256_bytes((folder / f.name).read_bytes()) == f.sha256
    assert sha256_bytes(built.pte.read_bytes()) == built.manifest.file("pte").sha256  # type: ignore[union-attr]


@pytest.mark.ray
@pytest.mark.compile
def test_a_worker_killed_mid_build_is_retried_and_the_cache_stays_clean(cluster: Cluster, isolated: Path) -> None:
    marker = cluster.work / "flaky-died"
    zoo = Zoo(ZooOptions(plugins=(THIS,)))
    stages: list[str] = []
    [built] = zoo.fetch_outcomes(["flaky"], ["u55-128"], executor=RAY_EXECUTOR,
                                 progress=lambda stage, done, total: stages.append(stage))
    assert marker.exists(), "the first try never killed its worker"
    assert isinstance(built, Artifact), built
    assert any("started (try 2: the last worker died)" in s for s in stages), stages
    assert list(zoo.cache.keys()) == [built.manifest.key]
    assert list(zoo.cache.failures()) == []
    assert [p for p in zoo.cache.root.rglob("*") if p.name.endswith(".zoo-tmp")] == []


@pytest.mark.ray
@pytest.mark.compile
def test_a_worker_that_always_dies_fails_only_its_own_unit(cluster: Cluster) -> None:
    zoo = Zoo(ZooOptions(plugins=("tests.crash_plugin",)))
    from zoo.registry.build_units.ray_executor import RayExecutor

    units = [unit_for(zoo, "crasher", "u55-128"), unit_for(zoo, "add", "u85-256")]
    results = {r.unit.model: r for r in RayExecutor(max_retries=1).map(units, lambda u: None)}
    [died] = results["crasher"].failures
    assert died.message.startswith("crasher → ethos-u55-128: the Ray worker died while building, 2 tries (")
    assert died.message.endswith("run it alone with --executor processes to see how it died")
    assert died.stage is None  # never recorded as the key's failure: another try may succeed
    assert isinstance(results["add"].outcomes[0], BuiltArtifact)


@pytest.mark.ray
@pytest.mark.compile  # the worker imports the compile stack before it loads the calibration
def test_a_task_that_raises_fails_its_targets_once_without_a_retry(cluster: Cluster, tmp_path: Path) -> None:
    from zoo.registry.build_units.ray_executor import RayExecutor

    zoo = Zoo(ZooOptions(plugins=(THIS,)))
    unit = dataclasses.replace(unit_for(zoo, "picky", "u55-128", "u55-256"), calibration_dir=tmp_path)
    [result] = RayExecutor().map([unit], lambda u: None)
    assert len((cluster.work / "picky-calls").read_text().splitlines()) == 1  # not a transient kind: no retry
    assert [f.message for f in result.failures] == [result.failures[0].message] * 2
    message = result.failures[0].message
    assert message.startswith(f"picky → ethos-u55-128, ethos-u55-256: the build raised ValueError: picky: no samples "
                              f"in {tmp_path.name} on ray node ")
    assert message.endswith("; that node's Ray worker log has the traceback: please report it")


@pytest.mark.ray
def test_a_node_with_other_tool_versions_is_refused_before_it_builds(cluster: Cluster, tmp_path: Path) -> None:
    # A worker environment whose ethos-u-vela is another release: its metadata comes first on sys.path,
    # exactly what a node with `pip install ethos-u-vela==0.0.1` would report.
    other = tmp_path / "other-vela" / "ethos_u_vela-0.0.1.dist-info"
    other.mkdir(parents=True)
    (other / "METADATA").write_text("Metadata-Version: 2.1\nName: ethos-u-vela\nVersion: 0.0.1\n")
    from zoo.registry.build_units.ray_executor import RayExecutor

    executor = RayExecutor(runtime_env={"env_vars": {"PYTHONPATH": str(other.parent)}})
    started = time.perf_counter()
    [result] = executor.map([unit_for(Zoo(), "add", "u55-128", "u55-256")], lambda u: None)
    seconds = time.perf_counter() - started
    assert len(result.failures) == 2
    message = result.failures[0].message
    assert message.startswith("add → ethos-u55-128, ethos-u55-256: ray node ")
    assert f"has ethos-u-vela 0.0.1 where the driver has {tool_versions()['ethos-u-vela']}" in message
    assert "refused" in message and "Ray runtime_env" in message and "container image" in message
    assert seconds < 30  # refused before the lowering, not after


@pytest.mark.compile
def test_the_driver_refuses_manifests_built_with_other_tool_versions(isolated: Path) -> None:
    from zoo.registry.build_units.ray_output import Node, TaskOutput, checked, environment

    unit = unit_for(Zoo(), "add", "u55-128")
    result = run_unit(unit)
    node = Node("f" * 56, "10.0.0.2")
    assert checked(TaskOutput(node, environment(), result), unit, environment()) == result
    [built] = result.outcomes
    assert isinstance(built, BuiltArtifact)
    inputs = {**built.manifest.key_inputs, "tools": {**built.manifest.tools, "torch": "2.0.0"}}
    other = dataclasses.replace(built, manifest=dataclasses.replace(built.manifest, key_inputs=inputs))
    [refused] = checked(TaskOutput(node, environment(), UnitResult(unit, (other,))), unit, environment()).outcomes
    assert isinstance(refused, UnitFailure)
    assert refused.message.startswith("add → ethos-u55-128: ray node 10.0.0.2 (ffffffff) has built ethos-u55-128 with torch 2.0.0 "
                                      f"where the driver has {tool_versions()['torch']}")


@pytest.mark.ray
@pytest.mark.compile
def test_units_spread_over_both_nodes_and_a_cluster_it_did_not_start_stays_up(cluster: Cluster) -> None:
    import ray

    from zoo.registry.build_units.ray_executor import RayExecutor

    zoo = Zoo()
    units = [unit_for(zoo, "add", "u55-128"), unit_for(zoo, "add", "u85-256")]
    ray.shutdown()  # the executor connects by itself, and leaves again
    try:
        stages = Stages()
        results = list(RayExecutor(cluster.address).map(units, stages))
        assert not ray.is_initialized()
    finally:
        ray.init(address=cluster.address, log_to_driver=False)
    assert len([n for n in ray.nodes() if n["Alive"]]) == 2
    nodes = {u.label: {s.split(": ")[0] for s in stages.seen[u.label] if s.startswith("ray node")} for u in units}
    assert all(len(n) == 1 for n in nodes.values()), nodes
    assert len(set.union(*nodes.values())) == 2, f"both units ran on one node: {nodes}"
    inline = {u.label: run_unit(u) for u in units}
    for result in results:
        assert _files(result) == _files(inline[result.unit.label])


@pytest.mark.ray
def test_ctrl_c_cancels_the_tasks_still_running(cluster: Cluster) -> None:
    import ray

    from zoo.registry.build_units.ray_executor import RayExecutor

    def interrupt_once_started(unit: BuildUnit) -> Callable[[str, int | None, int | None], None]:
        def progress(stage: str, done: int | None = None, total: int | None = None) -> None:
            if stage.endswith(": load"):  # the task is in the model's build(), for ten minutes
                raise KeyboardInterrupt

        return progress

    unit = unit_for(Zoo(ZooOptions(plugins=(THIS,))), "sleeper", "u55-128")
    with pytest.raises(KeyboardInterrupt):
        results = list(RayExecutor().map([unit], interrupt_once_started))
        pytest.fail(f"the build ended without reaching its model's build(): {results}")
    deadline = time.monotonic() + 30
    while ray.available_resources().get("CPU", 0) < 2:
        assert time.monotonic() < deadline, f"the task still holds its CPU: {ray.available_resources()}"
        time.sleep(0.2)


def test_without_ray_the_executor_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # as if it were not installed
    with pytest.raises(UsageError, match=r"^--executor ray needs Ray, which is not installed: "
                                         r"install it with: pip install 'ethosu-zoo\[ray\]'$"):
        executor_for("ray", jobs=1, units=2)


@pytest.mark.slow
def test_light_commands_and_the_executor_modules_never_import_ray() -> None:
    probed = run_probed("list", watch=("ray",))
    assert probed.returncode == 0, probed.stderr
    assert probed.loaded == []
    imports = ("import sys, zoo.registry.build_units.executors, zoo.registry.build_units.ray_executor, zoo.registry.build_units.shard; "
               "print(sorted(m for m in sys.modules if m.split('.')[0] == 'ray'))")
    out = subprocess.run([sys.executable, "-c", imports], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_a_failure_message_names_the_unit_for_every_target() -> None:
    from zoo.registry.build_units.ray_output import Node, TaskOutput, checked, environment

    unit = unit_for(Zoo(), "add", "u55-128", "u55-256")
    node = Node("a" * 56, "10.0.0.2")
    driver = environment()
    elsewhere = {**driver, "ethosu-zoo": "0.0.9", "tosa-tools": None}
    result = checked(TaskOutput(node, elsewhere, None), unit, driver)
    assert [f.error for f in result.failures] == ["BuildError", "BuildError"]
    assert (f"ray node 10.0.0.2 (aaaaaaaa) has ethosu-zoo 0.0.9 where the driver has {driver['ethosu-zoo']}; "
            f"tosa-tools not installed where the driver has {driver['tosa-tools']}") in result.failures[0].message


@pytest.fixture
def not_connected() -> Iterator[None]:
    """For the tests of how the executor connects: the module's ``cluster`` fixture may
    have left this process connected, and a connected executor checks no address."""
    ray = pytest.importorskip("ray")
    address = ray.get_runtime_context().gcs_address if ray.is_initialized() else None
    if address:
        ray.shutdown()
    yield
    if address and not ray.is_initialized():
        ray.init(address=address, log_to_driver=False)


def test_an_address_where_nothing_answers_is_refused_at_once() -> None:
    pytest.importorskip("ray")
    from zoo.registry.build_units.ray_executor import _reachable

    address = f"127.0.0.1:{_free_port()}"  # free: nothing listens there
    started = time.perf_counter()
    with pytest.raises(UsageError, match=rf"^--ray-address {address}: nothing answers there \(.*\); start the cluster "
                                         r"with 'ray start --head' and pass the address it prints$"):
        _reachable(address)
    assert time.perf_counter() - started < 5
    _reachable("auto")  # not HOST:PORT: Ray judges it


@pytest.fixture
def foreign_server() -> Iterator[str]:
    """A TCP server that takes connections and never speaks: not Ray."""
    import threading

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            with contextlib.suppress(OSError):
                held.append(server.accept()[0])

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield f"127.0.0.1:{server.getsockname()[1]}"
    stop.set()
    thread.join()
    for conn in held:
        conn.close()
    server.close()


@pytest.mark.server
def test_an_address_where_something_else_listens_is_refused_within_seconds(foreign_server: str, not_connected: None) -> None:
    pytest.importorskip("ray")
    from zoo.registry.build_units.ray_executor import RayExecutor

    started = time.perf_counter()
    with pytest.raises(UsageError, match=rf"^--ray-address {foreign_server}: something listens there, but it is "
                                         r"not a Ray cluster \(no gRPC answer within 5 s\)"):
        list(RayExecutor(foreign_server).map([], lambda u: None))
    assert time.perf_counter() - started < 15


def test_ray_address_from_the_environment_is_checked_and_named(monkeypatch: pytest.MonkeyPatch, not_connected: None) -> None:
    pytest.importorskip("ray")
    from zoo.registry.build_units.ray_executor import RayExecutor

    address = f"127.0.0.1:{_free_port()}"
    monkeypatch.setenv("RAY_ADDRESS", address)
    started = time.perf_counter()
    with pytest.raises(UsageError, match=rf"^RAY_ADDRESS {address}: nothing answers there"):
        list(RayExecutor().map([], lambda u: None))
    assert time.perf_counter() - started < 10


def test_a_dead_recorded_cluster_is_passed_over_for_a_local_one_and_said(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("ray")
    from zoo.registry.build_units.ray_executor import RayExecutor

    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    monkeypatch.setenv("RAY_TMPDIR", str(tmp_path))
    record = tmp_path / "ray" / "ray_current_cluster"
    record.parent.mkdir()
    dead = f"127.0.0.1:{_free_port()}"
    record.write_text(dead)
    notes: list[str] = []
    started = time.perf_counter()
    assert RayExecutor(notice=notes.append).address_to_use() == ("local", "a local Ray cluster")
    assert time.perf_counter() - started < 10
    assert notes == [f"the Ray cluster recorded in {record} ({dead}) is not running; starting a local Ray cluster "
                     "for this run (pass --ray-address to use another)"]
    record.unlink()
    assert RayExecutor(notice=notes.append).address_to_use() == (None, "a local Ray cluster")


@pytest.mark.ray
@pytest.mark.compile
def test_json_stays_json_when_a_worker_dies(cluster: Cluster, isolated: Path) -> None:
    import json

    from tests.conftest import run_zoo

    proc = run_zoo("fetch", "flaky-json", "-t", "u55-128", "--ray-address", cluster.address, "--json",
                   env={"ZOO_PLUGINS": THIS, "ZOO_CACHE_DIR": str(isolated / "json-cache")}, pythonpath=ROOT)
    assert (cluster.work / "flaky-json-died").exists(), "the first try never killed its worker"
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["manifest"]["model"] == "flaky-json", proc.stdout[:500]


def test_an_address_from_zoo_toml_is_named_as_zoo_tomls(tmp_path: Path, fake_compile: FakeCompile, not_connected: None) -> None:
    pytest.importorskip("ray")
    address = f"127.0.0.1:{_free_port()}"
    config = tmp_path / "zoo.toml"
    config.write_text(f'[executor]\nname = "ray"\nray_address = "{address}"\n')
    with pytest.raises(UsageError, match=rf"^{re.escape(str(config))}'s \[executor\] ray_address {address}: "
                                         "nothing answers there"):
        Zoo(ZooOptions(config_path=config)).fetch("add", "u55-128")
    assert fake_compile.calls == []
