"""Loopback HTTP servers for the mirror tests.

``serve_directory`` runs the standard library's ``http.server`` in a
subprocess, exactly as a user would. ``StaticServer`` is the same handler in
a thread with knobs for failure cases: it counts requests, can answer 503 a
few times, stall without answering, or die halfway through a file.
"""

from __future__ import annotations

import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any


@contextmanager
def serve_directory(root: Path) -> Iterator[str]:
    """``python -m http.server`` on 127.0.0.1 and a free port; yields its URL."""
    proc = subprocess.Popen(
        [sys.executable, "-u", "-m", "http.server", "0", "--bind", "127.0.0.1", "--directory", str(root)],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        m = re.search(r"port (\d+)", line)
        assert m, f"http.server did not start: {line!r}"
        yield f"http://127.0.0.1:{m.group(1)}"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


class _Handler(SimpleHTTPRequestHandler):
    server: StaticServer

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        s = self.server
        with s.lock:
            s.requests.append(self.path)
            fail = s.fail_first > 0
            if fail:
                s.fail_first -= 1
        if s.stall_s:
            time.sleep(s.stall_s)
            return
        if fail:
            self.send_error(503, "try again")
            return
        if s.die_during and self.path.endswith(s.die_during):
            data = Path(self.translate_path(self.path)).read_bytes()
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data[: len(data) // 2])
            self.wfile.flush()
            self.close_connection = True
            threading.Thread(target=s.shutdown, daemon=True).start()
            s.socket.close()
            return
        super().do_GET()


class StaticServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, root: Path) -> None:
        super().__init__(("127.0.0.1", 0), partial(_Handler, directory=str(root)))
        self.url = f"http://127.0.0.1:{self.server_address[1]}"
        self.requests: list[str] = []
        self.lock = threading.Lock()
        self.fail_first = 0
        self.stall_s = 0.0
        self.die_during: str | None = None
        self._thread = threading.Thread(target=self.serve_forever, daemon=True)

    def __enter__(self) -> StaticServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._thread.is_alive():
            self.shutdown()
        self.server_close()
