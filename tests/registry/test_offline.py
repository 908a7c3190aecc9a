"""zoo.registry.offline: inside an offline build, no connection opens, whichever
library tries; outside it, and in other threads, nothing changes. Checked against a
real HTTP server on loopback, which counts the requests that reach it."""

from __future__ import annotations

import http.server
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator

import pytest

from tests.fake_compile import FakeCompile
from zoo import Zoo
from zoo.registry.offline import OfflineConnection, no_network


class _Counting(http.server.BaseHTTPRequestHandler):
    seen = 0

    def do_GET(self) -> None:
        type(self).seen += 1
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def server() -> Iterator[str]:
    _Counting.seen = 0
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Counting)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/weights.pth"
    finally:
        httpd.shutdown()
        httpd.server_close()


def _get(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=5) as r:
        return bytes(r.read())


def test_offline_refuses_before_connecting_and_online_is_untouched(server: str) -> None:
    with no_network(True):
        with pytest.raises(urllib.error.URLError) as caught:
            _get(server)
        assert isinstance(caught.value.reason, OfflineConnection)
        assert "refused a connection to 127.0.0.1:" in str(caught.value.reason)
        assert "--weights random" in str(caught.value.reason)
        with no_network(True):  # nested: still offline after the inner one ends
            pass
        with pytest.raises(urllib.error.URLError):
            _get(server)
        # Another thread (the test's HTTP server, a progress bar) is not this build's.
        other: list[bytes] = []
        t = threading.Thread(target=lambda: other.append(_get(server)))
        t.start()
        t.join()
        assert other == [b"ok"]
    assert _Counting.seen == 1
    with no_network(False):
        assert _get(server) == b"ok"
    assert _get(server) == b"ok" and _Counting.seen == 3


def test_an_offline_fetch_builds_its_units_offline(fake_compile: FakeCompile, server: str) -> None:
    tried: list[str] = []

    def download() -> None:
        try:
            _get(server)
            tried.append("connected")
        except urllib.error.URLError as exc:
            tried.append(type(exc.reason).__name__)

    fake_compile.on_call = download
    Zoo().fetch("add", "u55-128", offline=True)
    Zoo().fetch("add", "portable")
    assert tried == ["OfflineConnection", "connected"] and _Counting.seen == 1
