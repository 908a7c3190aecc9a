"""Executors map build units to their results.

``inline`` runs them one after another in this process. ``processes`` runs
them in spawned worker processes (``--jobs N``): spawned, not forked,
because the parent may hold threads (rich's live display) and must never
import torch itself. ``ray`` runs each unit as a task on a Ray cluster
(``ray_executor.py``; Ray is imported only there, inside its functions).
Workers only compile; the driver checks and stores what they return
(``accept.py``). All yield results as units finish.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import multiprocessing
import queue
import signal
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures.process import BrokenProcessPool
from typing import TYPE_CHECKING, Any, Protocol

from zoo._errors import UsageError
from zoo.registry.build_units.run import run_unit
from zoo.registry.build_units.unit import BuildUnit, UnitFailure, UnitResult

if TYPE_CHECKING:
    from zoo.registry.catalog.catalog import Catalog
    from zoo.registry.events import Progress

ProgressFor = Callable[[BuildUnit], "Progress | None"]
EXECUTORS = ("inline", "processes", "ray")


class Executor(Protocol):
    keeps_going: bool
    """Whether the other units still run after one fails."""

    def map(self, units: Sequence[BuildUnit], progress_for: ProgressFor) -> Iterator[UnitResult]:
        """Run every unit; yield each result as it is ready."""
        ...


class InlineExecutor:
    keeps_going = False

    def __init__(self, catalog: Catalog | None = None) -> None:
        self.catalog = catalog

    def map(self, units: Sequence[BuildUnit], progress_for: ProgressFor) -> Iterator[UnitResult]:
        for unit in units:
            yield run_unit(unit, catalog=self.catalog, progress=progress_for(unit))


class ProcessExecutor:
    keeps_going = True

    def __init__(self, jobs: int) -> None:
        self.jobs = jobs

    def map(self, units: Sequence[BuildUnit], progress_for: ProgressFor) -> Iterator[UnitResult]:
        context = multiprocessing.get_context("spawn")
        events = context.Queue()
        stop = threading.Event()
        by_label = {u.label: u for u in units}
        offline = bool(units) and all(u.offline for u in units)
        relay = threading.Thread(target=_relay, args=(events, stop, by_label, progress_for), daemon=True)
        relay.start()
        finished: set[int] = set()
        try:
            try:
                yield from self._pool(units, min(self.jobs, len(units)), context, events, finished, offline)
            except BrokenProcessPool:
                # A worker died (a crash in native code, or the OOM killer), which breaks
                # every unit still in the pool. Run those again, each alone, so only the
                # one that kills its worker fails.
                alone = _Alone(context, events, by_label, offline)
                for n, unit in enumerate(units):
                    if n not in finished:
                        yield alone.run(unit)
        finally:
            stop.set()
            relay.join()

    @staticmethod
    def _pool(units: Sequence[BuildUnit], workers: int, context: Any, events: Any,
              finished: set[int], offline: bool) -> Iterator[UnitResult]:
        with concurrent.futures.ProcessPoolExecutor(
            max_workers=workers, mp_context=context, initializer=_init, initargs=(events, offline)
        ) as pool:
            futures = {pool.submit(_run, unit): n for n, unit in enumerate(units)}
            try:
                for future in concurrent.futures.as_completed(futures):
                    result = future.result()
                    finished.add(futures[future])
                    yield result
            finally:
                for f in futures:
                    f.cancel()


# Signals by which native code kills its own process: the same graph crashes the same way
# every time, so the failure is recorded under its stage. SIGKILL (the OOM killer) is not.
_CRASHES = frozenset({signal.SIGSEGV, signal.SIGBUS, signal.SIGILL, signal.SIGFPE, signal.SIGABRT})
_MARK_BYTES = 256


class _Alone:
    """Units each in a worker of its own, whose exit status says how it died if it does,
    and whose stage, written to shared memory before the stage starts, says where: the
    progress queue may lose the worker's last event with it."""

    def __init__(self, context: Any, events: Any, by_label: dict[str, BuildUnit], offline: bool) -> None:
        self.context, self.events, self.by_label, self.offline = context, events, by_label, offline

    def run(self, unit: BuildUnit) -> UnitResult:
        result = self._once(unit)
        if len(unit.targets) == 1 or not any(isinstance(o, _Died) for o in result.outcomes):
            return result
        # One crash says nothing about the unit's other targets, which may never have run:
        # each builds alone, and only a target that crashes on its own fails.
        together = unit.built_with or tuple(t.target.name for t in unit.targets)
        outcomes = [self._once(dataclasses.replace(unit, targets=(t,), built_with=together)).outcomes[0]
                    for t in unit.targets]
        return UnitResult(unit, tuple(outcomes))

    def _once(self, unit: BuildUnit) -> UnitResult:
        self.by_label.setdefault(unit.label, unit)
        receive, send = self.context.Pipe(duplex=False)
        mark = self.context.RawArray("c", _MARK_BYTES)
        worker = self.context.Process(target=_run_alone, args=(unit, self.events, send, self.offline, mark),
                                      daemon=True)
        worker.start()
        send.close()
        try:
            result: UnitResult = receive.recv()
        except EOFError:  # the worker died before it could send
            worker.join()
            return _died(unit, worker.exitcode, mark.value.decode(errors="replace") or None)
        worker.join()
        return result


def _run_alone(unit: BuildUnit, events: Any, send: Any, offline: bool, mark: Any) -> None:
    global _mark
    _init(events, offline)
    _mark = mark
    send.send(_run(unit))


class _Died(UnitFailure):
    """The worker building this died."""


def _died(unit: BuildUnit, exitcode: int | None, stage: str | None) -> UnitResult:
    where = f" during {stage}" if stage else ""
    crashed = False
    if exitcode is not None and exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
            crashed = signal.Signals(-exitcode) in _CRASHES
        except ValueError:
            name = f"signal {-exitcode}"
        why = (f"it crashed with {name}{where}: a fault in native code (Vela, the TOSA serializer or torch), "
               "not a Python error" if crashed else
               f"it was killed with {name}{where}, from outside (the out-of-memory killer, or a user)")
    else:
        why = f"it exited with status {exitcode}{where} without returning a result"
    failure = _Died("BuildError", f"{unit.label}: the worker process died: {why}", stage=stage if crashed else None)
    return UnitResult(unit, tuple(failure for _ in unit.targets))


def executor_for(name: str | None, *, jobs: int, units: int, catalog: Catalog | None = None,
                 ray_address: str | None = None, ray_results: str | None = None,
                 ray_address_from: str = "--ray-address") -> Executor:
    """``name`` (None: ``processes`` for ``jobs`` > 1); one unit runs inline, where a
    worker process would only add its start-up, unless an executor is named (Ray to
    build on the cluster, ``processes`` to contain a crash). ``ray_address``: the Ray
    cluster (None: RAY_ADDRESS, else a local one); ``ray_results``: the shared remote
    Ray tasks hand their artifacts over through (None: Ray's object store);
    ``ray_address_from`` names where the address came from in errors. The other
    executors ignore them."""
    chosen = name or ("processes" if jobs > 1 else "inline")
    if chosen not in EXECUTORS:
        raise UsageError(f"unknown executor {chosen!r}: choose one of {', '.join(EXECUTORS)}")
    if chosen == "ray":
        from zoo.registry.build_units.ray_executor import RayExecutor

        return RayExecutor(ray_address, results=ray_results, address_from=ray_address_from)
    # One unit runs inline unless worker processes were asked for by name: a worker then
    # contains a crash in native code, which inline would take the whole command down with.
    if chosen == "inline" or (units <= 1 and name is None):
        return InlineExecutor(catalog)
    return ProcessExecutor(jobs)


_events: Any = None  # the worker's end of the progress queue
_mark: Any = None  # alone, where the worker records its stage before entering it


def _init(events: Any, offline: bool) -> None:
    """A worker's start. Offline, while it still has one thread, the worker and every
    child it starts get a network namespace of their own where the OS allows one."""
    global _events
    _events = events
    if offline:
        from zoo.registry.offline import isolate_process

        isolate_process()


def _run(unit: BuildUnit) -> UnitResult:
    def report(stage: str, done: int | None = None, total: int | None = None) -> None:
        if _mark is not None:
            _mark.value = stage.encode()[:_MARK_BYTES - 1]
        _events.put((unit.label, stage, done, total))

    return run_unit(unit, progress=report)


def _relay(events: Any, stop: threading.Event, units: dict[str, BuildUnit], progress_for: ProgressFor) -> None:
    reporters: dict[str, Progress | None] = {}
    while not (stop.is_set() and events.empty()):
        try:
            label, stage, done, total = events.get(timeout=0.1)
        except queue.Empty:
            continue
        except (EOFError, OSError):
            return
        if label not in reporters:
            reporters[label] = progress_for(units[label])
        report = reporters[label]
        if report is not None:
            report(stage, done, total)
