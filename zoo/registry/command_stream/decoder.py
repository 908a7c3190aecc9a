"""``ethosu.mlw_codec.decode`` kept out of the interpreter's process.

On a malformed stream the codec prints ``bitbuf_getbit: underrun`` and ends its process, so it
runs in a forked child: one per run, which serves every stream the run decodes, and is replaced
when a stream ends it. Results are kept by the stream's bytes: a run over many samples decodes
the same streams each time, and a fork costs a quarter of a second in a process that has loaded
torch.
"""

from __future__ import annotations

import contextlib
import os
import struct
from collections import OrderedDict
from typing import IO, Any

import numpy as np

__all__ = ["Decoder"]

_KEPT = 1024
_decoded: OrderedDict[bytes, tuple[bytes, str | None]] = OrderedDict()
_LENGTH = struct.Struct("<I")


def _serve(requests: IO[bytes], replies: IO[bytes]) -> None:
    from ethosu import mlw_codec

    while head := requests.read(4):
        data = requests.read(_LENGTH.unpack(head)[0])
        values = np.asarray(mlw_codec.decode(bytearray(data)), dtype=np.int16).tobytes()
        replies.write(_LENGTH.pack(len(values)) + values)
        replies.flush()


class Decoder:
    """``decode(data)`` gives the stream's values as int16 bytes, or the reason it does not decode."""

    def __init__(self) -> None:
        self._pid = 0
        self._requests: IO[bytes] | None = None
        self._replies: IO[bytes] | None = None
        self._said: IO[bytes] | None = None

    def __enter__(self) -> Decoder:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def decode(self, data: bytes) -> tuple[bytes, str | None]:
        if data in _decoded:
            _decoded.move_to_end(data)
            return _decoded[data]
        result = self._ask(data)
        _decoded[data] = result
        if len(_decoded) > _KEPT:
            _decoded.popitem(last=False)
        return result

    def close(self) -> None:
        if self._pid:
            self._stop()

    def _start(self) -> None:
        requests_r, requests_w = os.pipe()
        replies_r, replies_w = os.pipe()
        said_r, said_w = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: serve until the parent closes its end; never run the parent's cleanup
            status = 0
            try:
                for fd in (requests_w, replies_r, said_r):
                    os.close(fd)
                os.dup2(said_w, 1)
                os.dup2(said_w, 2)
                with os.fdopen(requests_r, "rb") as requests, os.fdopen(replies_w, "wb") as replies:
                    _serve(requests, replies)
            except BaseException as exc:  # the parent reads the reason from this pipe
                os.write(said_w, f"{type(exc).__name__}: {exc}\n".encode())
                status = 1
            finally:
                os._exit(status)
        for fd in (requests_r, replies_w, said_w):
            os.close(fd)
        self._pid = pid
        self._requests = os.fdopen(requests_w, "wb")
        self._replies = os.fdopen(replies_r, "rb")
        self._said = os.fdopen(said_r, "rb")

    def _ask(self, data: bytes) -> tuple[bytes, str | None]:
        if not self._pid:
            self._start()
        assert self._requests is not None and self._replies is not None
        try:
            self._requests.write(_LENGTH.pack(len(data)) + data)
            self._requests.flush()
            head = self._replies.read(4)
        except BrokenPipeError:
            head = b""
        if len(head) == 4:
            values = self._replies.read(_LENGTH.unpack(head)[0])
            if len(values) == _LENGTH.unpack(head)[0]:
                return values, None
        return b"", self._stop() or "the decoder stopped without a message"

    def _stop(self) -> str:
        """End the child (closing its requests ends its loop), reap it, and return the last line it printed."""
        assert self._requests is not None and self._replies is not None and self._said is not None
        with contextlib.suppress(BrokenPipeError):
            self._requests.close()
        said = self._said.read().decode("utf-8", "replace").strip()
        self._replies.close()
        self._said.close()
        os.waitpid(self._pid, 0)
        self._pid = 0
        self._requests = self._replies = self._said = None
        return said.splitlines()[-1].strip() if said else ""
