"""Run build units as Ray tasks (``--executor ray``): one task per unit, on any
node of a Ray cluster. Ray is an optional extra (``ethosu-zoo[ray]``) and is
imported only inside the functions that run this executor.

A task runs ``run_unit`` and returns its ``UnitResult`` (every file's bytes and
manifest) through Ray's object store, or with ``results`` (``--ray-results URL``)
publishes the artifacts to that shared remote and returns their manifests, and
the driver downloads them from there with a remote fetch's checks
(``handover.py``). Either way the driver's ``accept`` checks each artifact before
the cache stores anything, as for any other executor. Before that, the
driver judges what each task sent (``ray_output.py``): a node with other tool
versions, or a task that raised, fails the unit's targets.

- **Failures.** A task that raises (a bug: ``run_unit`` turns every ZooError
  into data) fails its unit's targets. A worker process or node that dies is
  retried by Ray (``max_retries``); when the tries run out, the unit fails
  alone. Nothing partial reaches the cache: only complete results are accepted.
- **Ctrl-C** (or a caller that stops iterating) cancels every task still queued
  or running.

Progress: a small actor collects the stages each task reports (``ray node IP
(ID): lower``...), and each finished unit says how many tasks are done and
running.

Every node needs what the driver has: the same zoo, toolchain and plugins
(installed, or shipped with a Ray ``runtime_env`` or a container image), and the
same files at the paths a unit names (``--calibration-dir``, ``--eval-dir``,
``--model-file``: a shared filesystem).
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from zoo._errors import UsageError
from zoo.registry.build_units.handover import hand_over, results_remote, take_over
from zoo.registry.build_units.ray_output import (
    Node,
    TaskOutput,
    checked,
    differences,
    environment,
    failed,
    first_line,
)
from zoo.registry.build_units.run import run_unit
from zoo.registry.build_units.unit import BuildUnit, UnitResult
from zoo.registry.events import Notice, stderr_notice

if TYPE_CHECKING:
    from zoo.registry.events import Progress

ProgressFor = Callable[[BuildUnit], "Progress | None"]

INSTALL_HINT = "install it with: pip install 'ethosu-zoo[ray]'"
MAX_RETRIES = 2
"""Ray runs a unit whose worker process or node died up to this many times again."""
TRANSIENT = (ConnectionError, TimeoutError)
"""Exceptions Ray retries too (``retry_exceptions``); anything else a task raises is a bug and fails at once."""
CONNECT_SECONDS = 5.0
"""How long a cluster's address may take to answer before ``--ray-address`` is refused."""
POLL_SECONDS = 0.25
"""How often the driver collects progress while it waits for tasks."""
START_REPORT_SECONDS = 5.0
"""How long a task waits for the driver's progress actor to take its start; progress is best effort."""
STAGE_INTERVAL = 0.2
"""A task reports a stage's counts at most this often (a new stage at once)."""


def _ray() -> Any:
    """The ``ray`` module, or a UsageError that says how to install it."""
    try:
        import ray
    except ImportError:
        raise UsageError(f"--executor ray needs Ray, which is not installed: {INSTALL_HINT}") from None
    return ray


def check_installed() -> None:
    """Raise the UsageError of a missing Ray now, before anything is built."""
    import importlib.util

    try:
        found = importlib.util.find_spec("ray") is not None
    except ValueError:  # sys.modules["ray"] is None: imports of it are blocked
        found = False
    if not found:
        raise UsageError(f"--executor ray needs Ray, which is not installed: {INSTALL_HINT}")


class RayExecutor:
    """Each unit is one Ray task; results arrive as tasks finish."""

    keeps_going = True

    def __init__(self, address: str | None = None, *, results: str | None = None,
                 runtime_env: dict[str, Any] | None = None, max_retries: int = MAX_RETRIES,
                 address_from: str = "--ray-address", notice: Notice = stderr_notice) -> None:
        """``address``: a running cluster (``ray start --head`` prints it; ``ray://`` for Ray
        Client); None: RAY_ADDRESS, else the cluster ``ray start`` last started on this
        machine, else a local one for this run. Already connected (``ray.init`` in this
        process), the executor uses that connection and leaves it open.

        ``runtime_env`` is passed to every task (e.g. ``{"pip": [...]}``, ``{"env_vars": ...}``
        or ``{"image_uri": ...}``): how the nodes get the driver's environment.

        ``results``: a remote every node can write and the driver read (a shared
        directory, ``s3://BUCKET/PREFIX``, ``hf://ORG/REPO``) through which tasks hand
        their artifacts over; None: through Ray's object store.

        ``address_from`` names where ``address`` came from in errors (``--ray-address``,
        zoo.toml); ``notice`` is told when a dead recorded cluster is passed over."""
        if max_retries < 0:
            raise UsageError(f"max_retries must be at least 0, got {max_retries}")
        check_installed()
        self.results = results_remote(results) if results is not None else None
        self.address = address
        self.runtime_env = runtime_env
        self.max_retries = max_retries
        self.address_from = address_from
        self.notice = notice

    def map(self, units: Sequence[BuildUnit], progress_for: ProgressFor) -> Iterator[UnitResult]:
        ray = _ray()
        # Ray's driver threads print what the raylet reports ("(raylet) A worker died…") to whatever
        # sys.stdout is, log_to_driver or not; stdout is zoo's (--json), so they go to stderr.
        with contextlib.redirect_stdout(sys.stderr):
            connected_here = self._connect(ray)
            try:
                yield from _Run(ray, self, units, progress_for).results()
            finally:
                if connected_here:  # a cluster started here stops; one connected to stays up
                    ray.shutdown()

    def _connect(self, ray: Any) -> bool:
        """Connect (or start a local cluster); False if this process already was connected."""
        if ray.is_initialized():
            return False
        address, where = self.address_to_use()
        try:
            ray.init(address=address, include_dashboard=False, log_to_driver=False,
                     logging_level=logging.WARNING)
        except (ConnectionError, ValueError, RuntimeError) as exc:
            raise UsageError(
                f"{where}: cannot connect to Ray ({first_line(exc)}); start a cluster with 'ray start --head' "
                "and pass the address it prints"
            ) from None
        return True


    def address_to_use(self) -> tuple[str | None, str]:
        """(what ``ray.init`` gets, where it came from for errors), after a bounded check that a
        Ray cluster answers there: Ray itself waits minutes on a dead or foreign address, deaf
        to SIGTERM. With no address anywhere, a cluster ``ray start`` recorded on this machine
        is used if it answers, and a local one is started for this run if it is dead."""
        if self.address is not None:
            _reachable(self.address, self.address_from)
            return self.address, f"{self.address_from} {self.address}"
        from_env = os.environ.get("RAY_ADDRESS", "")
        if from_env.strip():
            _reachable(from_env, "RAY_ADDRESS")
            return from_env, f"RAY_ADDRESS {from_env}"
        record = recorded_cluster()
        if record is not None:
            path, recorded = record
            try:
                _reachable(recorded, f"the Ray cluster recorded in {path}")
            except UsageError:
                self.notice(f"the Ray cluster recorded in {path} ({recorded}) is not running; starting a local Ray "
                            "cluster for this run (pass --ray-address to use another)")
                return "local", "a local Ray cluster"
        return None, "a local Ray cluster"


def recorded_cluster() -> tuple[str, str] | None:
    """(the file, the address) of the cluster ``ray start`` last recorded on this machine, as Ray finds it."""
    temp = os.environ.get("RAY_TMPDIR") or (os.environ.get("TMPDIR") if sys.platform.startswith("linux") else None)
    path = os.path.join(temp or "/tmp", "ray", "ray_current_cluster")
    try:
        with open(path, encoding="utf-8") as f:
            address = f.read().strip()
    except OSError:
        return None
    return (path, address) if address else None


_HTTP2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes([0, 0, 0, 4, 0, 0, 0, 0, 0])  # and an empty SETTINGS
_SETTINGS = 4


def _reachable(address: str, origin: str = "--ray-address") -> None:
    """A UsageError unless a gRPC server (a Ray cluster's GCS, or Ray Client) answers at
    ``HOST:PORT`` (or ``ray://HOST:PORT``) within seconds: the TCP connection, then the
    server's first HTTP/2 frame, which must be its SETTINGS."""
    import socket

    host, _, port = address.removeprefix("ray://").rpartition(":")
    if not host or not port.isdigit():
        return  # "auto", "local", or a form Ray may know: let it judge
    hint = "start the cluster with 'ray start --head' and pass the address it prints"
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=CONNECT_SECONDS) as conn:
            try:
                conn.sendall(_HTTP2_PREFACE)
                frame = _read_exactly(conn, 9)
            except OSError:
                frame = b""
    except OSError as exc:
        raise UsageError(f"{origin} {address}: nothing answers there ({exc.strerror or exc}); {hint}") from None
    if len(frame) < 9 or frame[3] != _SETTINGS:
        raise UsageError(f"{origin} {address}: something listens there, but it is not a Ray cluster (no gRPC answer "
                         f"within {CONNECT_SECONDS:g} s); check the address and port, or {hint}")


def _read_exactly(conn: Any, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = conn.recv(size - len(data))
        if not chunk:
            break
        data += chunk
    return data


class _Run:
    """One ``map``: the tasks in flight and what the driver knows about them."""

    def __init__(self, ray: Any, executor: RayExecutor, units: Sequence[BuildUnit], progress_for: ProgressFor) -> None:
        self.ray = ray
        self.executor = executor
        self.units = units
        self.reporters = [progress_for(u) for u in units]
        self.driver = environment()
        self.starts = [0] * len(units)
        self.nodes: list[str | None] = [None] * len(units)
        self.finished = 0
        self.draining: Any = None
        """The board's answer still to come, if one was asked for."""

    def results(self) -> Iterator[UnitResult]:
        ray = self.ray
        board = ray.remote(num_cpus=0)(_Board).remote() if any(self.reporters) else None
        task = ray.remote(_task).options(
            max_retries=self.executor.max_retries, retry_exceptions=list(TRANSIENT), scheduling_strategy="SPREAD",
            **({"runtime_env": self.executor.runtime_env} if self.executor.runtime_env else {}),
        )
        pending: dict[Any, int] = {}
        try:
            for n, unit in enumerate(self.units):
                pending[task.remote(unit, n, self.driver, board, self.executor.results)] = n
                self._report(n, "ray: queued")
            while pending:
                # Never an unbounded wait: Ctrl-C must reach this loop, and progress must flow.
                ready, _ = ray.wait(list(pending), num_returns=1, timeout=POLL_SECONDS)
                if board is not None:
                    self._relay(board)
                for ref in ready:
                    n = pending.pop(ref)
                    result = self._collect(ref, n)
                    self.finished += 1
                    running = sum(1 for m in pending.values() if self.starts[m])
                    self._report(n, f"{self.nodes[n] or 'ray'}: finished ({self.finished} of {len(self.units)} "
                                    f"tasks done, {running} running)")
                    yield result
        finally:
            # Ctrl-C, or the caller stopped: nothing goes on running for nobody. A lost connection
            # must not hide why we stopped.
            with contextlib.suppress(ray.exceptions.RayError, ConnectionError):
                for ref in pending:
                    ray.cancel(ref, force=True)
                if board is not None:
                    ray.kill(board)

    def _collect(self, ref: Any, n: int) -> UnitResult:
        ray, unit = self.ray, self.units[n]
        try:
            output: TaskOutput = ray.get(ref)
        except ray.exceptions.RayTaskError as exc:  # a transient error on every try (or a bug outside run_unit)
            cause = getattr(exc, "cause", None) or exc
            ip = vars(exc).get("ip")  # the exception Ray raises may stand in for the cause, without it
            raised = (f"{unit.label}: the build raised {type(cause).__name__}: {first_line(cause)}"
                      f"{f' on ray node {ip}' if ip else ''}")
            if isinstance(cause, TRANSIENT):
                return failed(unit, f"{raised}, on every try; check the nodes' network and build it again")
            return failed(unit, f"{raised}; the Ray worker's log has the traceback: please report it")
        except ray.exceptions.TaskCancelledError:
            return failed(unit, f"{unit.label}: its Ray task was cancelled outside zoo; build it again")
        except ray.exceptions.RuntimeEnvSetupError as exc:
            return failed(unit, f"{unit.label}: Ray could not set up the runtime_env for its task "
                                 f"({first_line(exc)}); fix the runtime_env, or ship a container image")
        except (ray.exceptions.WorkerCrashedError, ray.exceptions.NodeDiedError, ray.exceptions.OutOfMemoryError,
                ray.exceptions.LocalRayletDiedError, ray.exceptions.ObjectLostError) as exc:
            tries = self.executor.max_retries + 1
            return failed(unit, f"{unit.label}: the Ray worker died while building, {tries} tr"
                                 f"{'y' if tries == 1 else 'ies'} ({type(exc).__name__}: {first_line(exc)}); run it "
                                 "alone with --executor processes to see how it died")
        except ray.exceptions.RayError as exc:
            return failed(unit, f"{unit.label}: Ray could not run its task ({type(exc).__name__}: "
                                 f"{first_line(exc)}); run it alone with --jobs 1")
        self.nodes[n] = str(output.node)
        result = checked(output, unit, self.driver)
        if self.executor.results is None:
            return result
        self._report(n, f"{output.node}: downloading from {self.executor.results}")
        return take_over(result, self.executor.results)

    def _relay(self, board: Any) -> None:
        """Report what the tasks told the board, without waiting for it."""
        ray = self.ray
        if self.draining is None:
            self.draining = board.drain.remote()
        ready, _ = ray.wait([self.draining], timeout=0)
        if not ready:
            return
        try:
            events = ray.get(self.draining)
        except ray.exceptions.RayError:
            return  # progress is best effort; the results still arrive
        finally:
            self.draining = None
        for n, node, stage, done, total in events:
            self.nodes[n] = node
            if stage is None:
                self.starts[n] += 1
                again = f" (try {self.starts[n]}: the last worker died)" if self.starts[n] > 1 else ""
                self._report(n, f"{node}: started{again}")
            else:
                self._report(n, f"{node}: {stage}", done, total)

    def _report(self, n: int, stage: str, done: int | None = None, total: int | None = None) -> None:
        report = self.reporters[n]
        if report is not None:
            report(stage, done, total)


class _Board:
    """A Ray actor that collects the tasks' progress until the driver drains it."""

    def __init__(self) -> None:
        self.events: list[tuple[int, str, str | None, int | None, int | None]] = []

    def put(self, event: tuple[int, str, str | None, int | None, int | None]) -> None:
        self.events.append(event)

    def drain(self) -> list[tuple[int, str, str | None, int | None, int | None]]:
        events, self.events = self.events, []
        return events


def _task(unit: BuildUnit, n: int, driver: dict[str, str | None], board: Any, results: str | None) -> TaskOutput:
    """A Ray task: build ``unit`` on this node, unless its versions differ from ``driver``;
    with ``results``, hand the artifacts over through that remote."""
    import ray

    util: Any = ray.util  # untyped
    node = Node(ray.get_runtime_context().get_node_id(), util.get_node_ip_address())
    here = environment()
    if differences(driver, here):
        return TaskOutput(node, here, None)  # its artifacts would be refused: do not spend the lowering
    progress = None
    if board is not None:
        # Waited for, unlike the stages: a worker that dies a moment later (a crash in native code) must
        # still have said it started, or the driver cannot tell the user that this is a retry.
        with contextlib.suppress(ray.exceptions.RayError):
            ray.get(board.put.remote((n, str(node), None, None, None)), timeout=START_REPORT_SECONDS)
        progress = _reporter(board, n, str(node))
    try:
        result = run_unit(unit, progress=progress)
        if results is not None:
            if progress is not None:
                progress(f"publishing to {results}", None, None)
            result = hand_over(result, results, node=str(node))
        return TaskOutput(node, here, result)
    except TRANSIENT:
        raise  # Ray tries it again (retry_exceptions)
    except Exception as exc:  # run_unit turns every ZooError into data: this is a bug, reported as data too
        logging.getLogger(__name__).exception("%s: run_unit raised", unit.label)  # the traceback, in the worker's log
        return TaskOutput(node, here, None, f"{type(exc).__name__}: {first_line(exc)}")


def _reporter(board: Any, n: int, node: str) -> Progress:
    last: dict[str, Any] = {"stage": None, "at": 0.0}

    def progress(stage: str, done: int | None = None, total: int | None = None) -> None:
        now = time.monotonic()
        if stage == last["stage"] and done != total and now - last["at"] < STAGE_INTERVAL:
            return
        last.update(stage=stage, at=now)
        board.put.remote((n, node, stage, done, total))

    return progress
