"""Stage progress for long compiles: a rich status line on a terminal, plain lines otherwise."""

from __future__ import annotations

import sys
import time
from types import TracebackType
from typing import Any


class StageReporter:
    """Callable as ``progress(stage, done, total)``; use as a context manager."""

    def __init__(self, label: str, *, enabled: bool = True) -> None:
        self.label = label
        self.enabled = enabled
        self._live: Any = None
        self._task: Any = None
        self._last: str | None = None
        self._started = time.perf_counter()
        self.tty = sys.stderr.isatty()

    def __enter__(self) -> StageReporter:
        if self.enabled and self.tty:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                SpinnerColumn,
                TextColumn,
                TimeElapsedColumn,
            )

            self._live = Progress(
                SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                console=Console(stderr=True), transient=True,
            )
            self._live.start()
            self._task = self._live.add_task(self.label, total=None)
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        if self._live is not None:
            self._live.stop()

    def __call__(self, stage: str, done: int | None = None, total: int | None = None) -> None:
        if not self.enabled:
            return
        if self._live is not None:
            self._live.update(self._task, description=f"{self.label}: {stage}", completed=done or 0, total=total)
            return
        if stage != self._last:
            self._last = stage
            extra = f" ({total} samples)" if total else ""
            print(f"zoo: {self.label}: {stage}{extra} [{time.perf_counter() - self._started:.1f}s]", file=sys.stderr)

