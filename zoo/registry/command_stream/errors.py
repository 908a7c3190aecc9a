"""What a command stream the interpreter cannot run raises."""

from __future__ import annotations

from zoo._errors import ZooError

__all__ = ["NotInterpreted", "StreamError"]


class StreamError(ZooError):
    """The program is malformed, or does what the hardware would refuse or leave undefined."""


class NotInterpreted(StreamError):
    """A command or mode the interpreter does not model: it stops rather than guess."""

    def __init__(self, what: str) -> None:
        super().__init__(f"not implemented: {what}")
        self.what = what
