"""zoo.registry.offline: inside an offline build, no connection opens, whichever
library or thread tries, nor from native code or a child process where a network
namespace can be had; outside it, nothing changes. Checked against a
real HTTP server on loopback, which counts the requests that reach it."""

from __future__ import annotations

import http.server
import os
import shutil
import socket
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.fake_compile import FakeCompile
from zoo import Zoo, ZooOptions
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


def _tried(url: str) -> str:
    try:
        _get(url)
    except urllib.error.URLError as exc:
        return type(exc.reason).__name__
    return "connected"


@pytest.mark.slow
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
        # The whole process is offline while a unit builds: a plugin's own thread too.
        other: list[str] = []
        t = threading.Thread(target=lambda: other.append(_tried(server)))
        t.start()
        t.join()
        assert other == ["OfflineConnection"]
    assert _Counting.seen == 0
    with no_network(False):
        assert _get(server) == b"ok"
    assert _get(server) == b"ok" and _Counting.seen == 2


@pytest.mark.slow
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


@pytest.mark.parametrize("lookup", [
    lambda: socket.gethostbyname("localhost"),
    lambda: socket.gethostbyname_ex("localhost"),
    lambda: socket.gethostbyaddr("127.0.0.1"),
    lambda: socket.getnameinfo(("127.0.0.1", 80), 0),
    lambda: socket.getaddrinfo("localhost", 80),
], ids=["gethostbyname", "gethostbyname_ex", "gethostbyaddr", "getnameinfo", "getaddrinfo"])
def test_offline_refuses_every_name_lookup(lookup: Callable[[], object]) -> None:
    with no_network(True), pytest.raises(OfflineConnection, match="zoo is offline"):
        lookup()
    lookup()  # online again


needs_namespace = pytest.mark.skipif(
    not sys.platform.startswith("linux") or os.geteuid() != 0,
    reason="a network namespace per thread needs CAP_SYS_ADMIN (CI runs as root); docs/remotes.md says what holds without",
)


def _connect_in_c(port: int) -> int:
    """connect(2) to 127.0.0.1:port through libc, past Python's audit events; the errno, or 0."""
    import ctypes

    class SockaddrIn(ctypes.Structure):
        _fields_ = [("family", ctypes.c_ushort), ("port", ctypes.c_uint16), ("addr", ctypes.c_uint32),
                    ("zero", ctypes.c_char * 8)]

    libc = ctypes.CDLL(None, use_errno=True)
    fd = libc.socket(socket.AF_INET, socket.SOCK_STREAM, 0)
    address = SockaddrIn(socket.AF_INET, socket.htons(port), int.from_bytes(socket.inet_aton("127.0.0.1"), "little"))
    try:
        return 0 if libc.connect(fd, ctypes.byref(address), ctypes.sizeof(address)) == 0 else ctypes.get_errno()
    finally:
        os.close(fd)


@needs_namespace
@pytest.mark.slow
def test_offline_covers_native_code_and_child_processes(server: str) -> None:
    port = int(server.rsplit(":", 1)[1].split("/")[0])
    assert _connect_in_c(port) == 0  # online, libc reaches the server
    child = [sys.executable, "-c", f"import urllib.request; urllib.request.urlopen({server!r}, timeout=5)"]
    with no_network(True):
        assert _connect_in_c(port) != 0
        assert subprocess.run(child, capture_output=True).returncode != 0
        assert os.system(f"{sys.executable} -c 'import socket; socket.create_connection((\"127.0.0.1\", {port}), 5)' "
                         "2>/dev/null") != 0
    assert _Counting.seen == 0
    assert subprocess.run(child, capture_output=True).returncode == 0 and _Counting.seen == 1  # online again


@needs_namespace
@pytest.mark.slow
def test_a_worker_process_isolates_itself_without_cap_sys_admin(server: str) -> None:
    """A worker of --jobs/--executor processes, as an ordinary user would run it: without
    CAP_SYS_ADMIN (setpriv drops it), it takes a user namespace of its own."""
    if shutil.which("setpriv") is None:
        pytest.skip("needs util-linux's setpriv to drop CAP_SYS_ADMIN")
    code = ("import ctypes, urllib.request\n"
            "from zoo.registry.offline import isolate_process\n"
            "print('plain namespace allowed:', ctypes.CDLL(None).unshare(0x40000000) == 0)\n"
            f"urllib.request.urlopen({server!r}, timeout=5)\n"
            "print('isolated:', isolate_process(), flush=True)\n"
            f"urllib.request.urlopen({server!r}, timeout=5)\n")
    done = subprocess.run(["setpriv", "--bounding-set=-sys_admin", sys.executable, "-c", code], capture_output=True,
                          text=True, env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])})
    assert "plain namespace allowed: False" in done.stdout, done.stderr
    if "isolated: True" not in done.stdout:
        pytest.skip(f"this kernel allows no unprivileged user namespace: {done.stderr.strip()[-200:]}")
    assert done.returncode != 0 and "Network is unreachable" in done.stderr
    assert _Counting.seen == 1  # the request before it isolated itself


_NET_PLUGIN = """
import os, urllib.request
from zoo import hookimpl
from zoo.plugins import add

TRIED = []

def _try(when):
    try:
        urllib.request.urlopen(os.environ["NET_PLUGIN_URL"], timeout=5).read()
        TRIED.append((when, "connected"))
    except Exception as exc:
        TRIED.append((when, type(getattr(exc, "reason", exc)).__name__))

_try("import")

@hookimpl
def register_models(register):
    def identity():
        _try("identity")
        return "net"
    spec = add.spec()
    register(spec.__class__(**{**vars(spec), "name": "netty",
             "weights": (spec.weights[0].__class__(**{**vars(spec.weights[0]), "identity": identity}),)}))
"""


@pytest.mark.slow
def test_an_offline_zoo_covers_plugin_import_and_identity(
    fake_compile: FakeCompile, server: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "net_plugin.py").write_text(_NET_PLUGIN)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("NET_PLUGIN_URL", server)
    monkeypatch.delitem(sys.modules, "net_plugin", raising=False)
    fake_compile.stand_ins = ("netty",)
    Zoo(ZooOptions(plugins=("net_plugin",), offline=True)).fetch("netty", "u55-128")
    tried = sys.modules["net_plugin"].TRIED
    assert tried[0] == ("import", "OfflineConnection")
    assert {when for when, _ in tried[1:]} == {"identity"}
    assert {outcome for _, outcome in tried} == {"OfflineConnection"}
    assert _Counting.seen == 0
