"""A local Ray cluster for the benchmarks: N nodes of one CPU each on this
machine (``ray start --head`` plus ``ray start --address``), stopped on exit."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from zoo.registry.build_units.ray_executor import recorded_cluster

RAY = Path(sys.executable).with_name("ray")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _start_node(args: list[str], log: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    with log.open("wb") as out:
        node = subprocess.Popen([str(RAY), "start", "--block", "--num-cpus=1", "--disable-usage-stats", *args],
                                stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    deadline = time.monotonic() + 90
    while "Ray runtime started" not in log.read_text(errors="replace"):
        if node.poll() is not None or time.monotonic() > deadline:
            node.terminate()
            raise SystemExit(f"ray start {' '.join(args)} did not start: {log.read_text(errors='replace')[-1500:]}")
        time.sleep(0.2)
    return node


@contextlib.contextmanager
def local_cluster(nodes: int, work: Path, env: dict[str, str]) -> Iterator[str]:
    """The address of a cluster of ``nodes`` one-CPU nodes, logging into ``work``."""
    address = f"127.0.0.1:{_free_port()}"
    started = time.perf_counter()
    before = recorded_cluster()
    running = []
    try:
        running.append(_start_node(["--head", f"--port={address.split(':')[1]}", "--include-dashboard=false"],
                                   work / "head.log", env))
        for n in range(1, nodes):
            running.append(_start_node([f"--address={address}"], work / f"node{n}.log", env))
        print(f"ray cluster of {nodes} nodes started in {time.perf_counter() - started:.1f} s (not included below)",
              flush=True)
        yield address
    finally:
        for node in running:
            node.terminate()
            node.wait(timeout=60)
        # `ray start --head` recorded this cluster as the machine's current one; stopped by SIGTERM it
        # leaves that record naming a dead cluster, which a later `ray.init()` would wait on.
        now = recorded_cluster()
        if now is not None and now[1].endswith(f":{address.split(':')[1]}"):
            if before is not None and before[1] != now[1]:
                Path(now[0]).write_text(before[1])
            else:
                Path(now[0]).unlink(missing_ok=True)
