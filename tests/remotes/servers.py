"""Loopback HTTP servers for the mirror tests.

``serve_directory`` runs the standard library's ``http.server`` in a
subprocess, exactly as a user would. ``StaticServer`` is the same handler in
a thread with knobs for failure cases: it counts requests, can answer 503 a
few times, stall without answering, die halfway through a file, redirect,
send a file cut short without a Content-Length, send an endless body, or
trickle a byte at a time.
"""

from __future__ import annotations

import re
import socket
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
        if self.path in s.redirects:
            self.send_response(302)
            self.send_header("Location", s.redirects[self.path])
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if s.cut_short and self.path.endswith(s.cut_short):
            # HTTP/1.0 without a Content-Length: the body ends where the connection does.
            data = Path(self.translate_path(self.path)).read_bytes()
            self.send_response(200)
            self.end_headers()
            self.wfile.write(data[: len(data) // 2])
            return
        if s.endless and self.path.endswith(s.endless):
            self._send_slowly(self.path, chunk=b"\0" * (1 << 16), pause=0.0)
            return
        if s.trickle and self.path.endswith(s.trickle):
            self._send_slowly(self.path, chunk=b"\0", pause=s.trickle_pause)
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

    def _send_slowly(self, path: str, *, chunk: bytes, pause: float) -> None:
        """``chunk`` after ``chunk``, with no Content-Length, until the client hangs up or the server's limits end it."""
        s = self.server
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 1 << 16)  # count what the client took, not a big buffer
        self.send_response(200)
        self.end_headers()
        start = time.monotonic()
        try:
            while s.sent.get(path, 0) < s.body_limit and time.monotonic() - start < s.body_seconds and not s.closing:
                self.wfile.write(chunk)
                self.wfile.flush()
                with s.lock:
                    s.sent[path] = s.sent.get(path, 0) + len(chunk)
                if pause:
                    time.sleep(pause)
        except OSError:
            pass  # the client hung up


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
        self.redirects: dict[str, str] = {}
        """Request path → Location of a 302."""
        self.cut_short: str | None = None
        self.endless: str | None = None
        self.trickle: str | None = None
        self.trickle_pause = 0.1
        self.body_limit = 128 << 20
        self.body_seconds = 30.0
        """How much and how long an endless or trickled body goes on, so a client that never hangs up still ends."""
        self.sent: dict[str, int] = {}
        self.closing = False
        self._thread = threading.Thread(target=self.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    def __enter__(self) -> StaticServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.closing = True
        if self._thread.is_alive():
            self.shutdown()
        self.server_close()


class MotoServer:
    """moto's standalone S3 server (``python -m moto.server``) on 127.0.0.1 and a free port,
    as a user would run it; ``env`` points boto at it, with dummy credentials."""

    def __init__(self) -> None:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._proc: subprocess.Popen[bytes] | None = None

    @property
    def env(self) -> dict[str, str]:
        return {
            "AWS_ENDPOINT_URL": self.url,
            "AWS_ACCESS_KEY_ID": "zooTestKeyId",
            "AWS_SECRET_ACCESS_KEY": "zooTestSecretNeverPrinted",
            "AWS_DEFAULT_REGION": "us-east-1",  # moto needs one to create a bucket
            "AWS_EC2_METADATA_DISABLED": "true",  # never ask an instance-metadata address for credentials
        }

    def __enter__(self) -> MotoServer:
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(self.port)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                raise RuntimeError(f"moto's server exited with {self._proc.returncode}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2):
                    return self
            except OSError:
                time.sleep(0.1)
        self.__exit__()
        raise RuntimeError("moto's server did not start within 30 s")

    def __exit__(self, *exc: object) -> None:
        if self._proc is not None:
            self._proc.terminate()
            try:
                self._proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()

    def client(self) -> Any:
        """A plain boto3 client, for the tests' own setup and tampering."""
        import boto3

        return boto3.client("s3", endpoint_url=self.url, region_name="us-east-1",
                            aws_access_key_id="zooTestKeyId", aws_secret_access_key="zooTestSecretNeverPrinted")


class TrickleServer:
    """A loopback TCP server that reads each request, then sends ``reply`` a byte every ``pause``
    seconds: a per-read timeout never fires. With no reply it takes connections and never answers,
    as a stuck proxy does."""

    def __init__(self, reply: bytes = b"", pause: float = 0.5) -> None:
        self.reply, self.pause = reply, pause
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        self.connections = 0
        self.closing = threading.Event()
        self._thread = threading.Thread(target=self._accept, daemon=True)

    def __enter__(self) -> TrickleServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.closing.set()
        self.listener.close()

    def _accept(self) -> None:
        while not self.closing.is_set():
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            self.connections += 1
            threading.Thread(target=self._answer, args=(conn,), daemon=True).start()

    def _answer(self, conn: socket.socket) -> None:
        with conn:
            try:
                conn.recv(65536)
                for byte in self.reply:
                    if self.closing.wait(self.pause):
                        return
                    conn.sendall(bytes([byte]))
                self.closing.wait()
            except OSError:
                pass  # the client hung up
