"""Run builds in worker processes (``--jobs N``).

Each task is one model for the targets of one TOSA specification, which is
one lowering (``pipeline.compile_targets``); a worker runs it through the
ordinary ``Zoo.fetch_many``, so the cache's per-key locks keep concurrent
builds of the same key to one. The caller then reads everything from the
cache. Workers are spawned, not forked: the parent may hold threads (rich's
live display) and must never import torch itself.
"""

from __future__ import annotations

import concurrent.futures
import multiprocessing
import queue
import sys
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from zoo import _errors
from zoo._errors import BuildError, ZooError

if TYPE_CHECKING:
    from zoo._api import ZooOptions
    from zoo.registry.fetcher import Progress
    from zoo.registry.keys import BuildRequest

_events: Any = None  # the worker's end of the progress queue


def tasks_for(requests: Sequence[BuildRequest]) -> list[tuple[str, list[str]]]:
    """(model, target names) per model and TOSA specification, in request order."""
    groups: dict[tuple[str, str], list[str]] = {}
    for r in requests:
        names = groups.setdefault((r.spec.name, r.target.tosa_spec or "portable"), [])
        if r.target.name not in names:
            names.append(r.target.name)
    return [(model, names) for (model, _), names in groups.items()]


def build_in_processes(
    options: ZooOptions,
    tasks: Sequence[tuple[str, list[str]]],
    fetch_options: dict[str, Any],
    *,
    jobs: int,
    progress_for: Callable[[str], Progress] | None,
) -> set[str]:
    """Run ``Zoo(options).fetch_many([model], targets, **fetch_options)`` for each
    task in up to ``jobs`` processes and return the keys they built; raise the
    first failure as the worker saw it."""
    context = multiprocessing.get_context("spawn")
    events = context.Queue()
    stop = threading.Event()
    relay = threading.Thread(target=_relay, args=(events, stop, progress_for), daemon=True)
    relay.start()
    failures: list[tuple[str, str, str]] = []
    built: set[str] = set()
    try:
        with concurrent.futures.ProcessPoolExecutor(
            max_workers=min(jobs, len(tasks)), mp_context=context, initializer=_init, initargs=(events,)
        ) as pool:
            futures = [pool.submit(_run, options, model, targets, fetch_options) for model, targets in tasks]
            for future in futures:
                keys, failure = future.result()
                built.update(keys)
                if failure is not None:
                    failures.append(failure)
    finally:
        stop.set()
        relay.join()
    if failures:
        kind, label, message = failures[0]
        more = f" ({len(failures) - 1} more build(s) failed too)" if len(failures) > 1 else ""
        error = getattr(_errors, kind, None)
        if isinstance(error, type) and issubclass(error, ZooError) and error.__init__ is Exception.__init__:
            raise error(f"{message}{more}")
        raise BuildError(f"{label}: {message}{more}")  # a type whose constructor takes other arguments
    return built


def _init(events: Any) -> None:
    global _events
    _events = events


def _run(
    options: ZooOptions, model: str, targets: list[str], fetch_options: dict[str, Any]
) -> tuple[list[str], tuple[str, str, str] | None]:
    from zoo._api import Zoo

    label = f"{model} → {', '.join(targets)}"

    def progress_for(name: str) -> Progress:
        def report(stage: str, done: int | None = None, total: int | None = None) -> None:
            _events.put((name, stage, done, total))

        return report

    def notice(message: str) -> None:
        _events.put((None, message, None, None))

    try:
        arts = Zoo(options).fetch_many([model], list(targets), progress_for=progress_for, notice=notice, **fetch_options)
    except ZooError as exc:
        return [], (type(exc).__name__, label, str(exc))
    return [a.key for a in arts if a.source == "build"], None


def _relay(events: Any, stop: threading.Event, progress_for: Callable[[str], Progress] | None) -> None:
    reporters: dict[str, Progress] = {}
    while not (stop.is_set() and events.empty()):
        try:
            label, stage, done, total = events.get(timeout=0.1)
        except queue.Empty:
            continue
        except (EOFError, OSError):
            return
        if label is None:
            print(f"zoo: {stage}", file=sys.stderr)
        elif progress_for is not None:
            if label not in reporters:
                reporters[label] = progress_for(label)
            reporters[label](stage, done, total)
