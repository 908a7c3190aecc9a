"""Stage progress for long compiles: a rich status line on a terminal, plain lines otherwise."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from types import TracebackType
from typing import Any

from zoo._text import printable
from zoo._units import human_bytes
from zoo.registry.events import DOWNLOAD_STAGE

DOWNLOAD = f"{DOWNLOAD_STAGE} "
"""Stages named ``download FILE`` count bytes, not samples."""


class StageReporter:
    """Callable as ``progress(stage, done, total)``; use as a context manager.

    ``for_label(label)`` gives another build its own line (``--target all``)."""

    def __init__(self, label: str, *, enabled: bool = True) -> None:
        self.label = label
        self.enabled = enabled
        self._live: Any = None
        self._tasks: dict[str, Any] = {}
        self._last: dict[str, str] = {}
        self._started = time.perf_counter()
        self.tty = sys.stderr.isatty()

    def __enter__(self) -> StageReporter:
        if self.enabled and self.tty:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                DownloadColumn,
                MofNCompleteColumn,
                Progress,
                ProgressColumn,
                SpinnerColumn,
                TextColumn,
                TimeElapsedColumn,
            )

            class Count(ProgressColumn):
                def __init__(self) -> None:
                    super().__init__()
                    self.samples, self.bytes = MofNCompleteColumn(), DownloadColumn()

                def render(self, task: Any) -> Any:
                    return (self.bytes if task.fields.get("bytes") else self.samples).render(task)

            self._live = Progress(
                SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), Count(), TimeElapsedColumn(),
                console=Console(stderr=True), transient=True,
            )
            self._live.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        if self._live is not None:
            self._live.stop()

    def __call__(self, stage: str, done: int | None = None, total: int | None = None) -> None:
        self.report(self.label, stage, done, total)

    def for_label(self, label: str) -> Callable[[str, int | None, int | None], None]:
        def progress(stage: str, done: int | None = None, total: int | None = None) -> None:
            self.report(label, stage, done, total)

        return progress

    def report(self, label: str, stage: str, done: int | None = None, total: int | None = None) -> None:
        if not self.enabled:
            return
        if self._live is not None:
            # rich would read [tags] in a stage that names a remote's file.
            from rich.markup import escape

            if label not in self._tasks:
                self._tasks[label] = self._live.add_task(escape(printable(label, one_line=True)), total=None)
            self._live.update(self._tasks[label], description=escape(printable(f"{label}: {stage}", one_line=True)), completed=done or 0, total=total,
                              bytes=stage.startswith(DOWNLOAD))
            return
        if stage != self._last.get(label):
            self._last[label] = stage
            if stage.startswith(DOWNLOAD):
                extra = f" ({human_bytes(total)})" if total else ""
            else:
                extra = f" ({total} {'steps' if stage == 'qat' else 'samples'})" if total else ""
            print(printable(f"zoo: {label}: {stage}{extra} [{time.perf_counter() - self._started:.1f}s]"), file=sys.stderr)
