"""Answer a repeated light command from a snapshot of its first answer.

``zoo list``, ``targets``, ``info``, ``plugins`` and a ``fetch`` answered from the
cache spend nearly all their time loading plugins and zoo's own modules, to print
what they printed last time. The first run records what it printed, and every file
its answer depended on: each file it opened for reading, each folder it listed,
the source of every module it imported, every folder on ``sys.path``, the working
folder and its parents (where ``zoo.toml`` is looked for) and the user's
``zoo.toml``. The snapshot is keyed by the arguments, the environment, the working
folder, ``sys.path`` and the interpreter. A later run with the same key replays it
only if none of those files changed (size, mtime and inode, as Python's own import
cache decides); anything else runs the command in full and records afresh.

Caches are shared, uploaded and baked into images, so a snapshot holds no secret and
cannot vouch for itself. The key is stored only as its hash, and variables whose
names say they hold a credential (``HF_TOKEN``, ``AWS_SECRET_ACCESS_KEY``, …) are left
out of it entirely. Each snapshot is sealed with a MAC (keyed BLAKE2b) under a key kept outside the
cache (``snapshot.key`` in the user's state folder, made on first use): a snapshot
edited, or copied from another machine, does not verify and the command runs in full.

A fetch is replayed only if it was answered from the cache without touching the
network; the replay hashes each file it hands out against the sha256 the full run
verified, and writes into ``-o`` only files that are missing there (a file that
differs goes back to the full command, which decides). ``ZOO_SNAPSHOTS=0`` turns
snapshots off; ``ZOO_SNAPSHOT_TRACE=1`` says on stderr why one was not used.

This module is the first zoo code a command runs: it imports nothing heavy.
"""

from __future__ import annotations

import contextlib
import io
import marshal
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any, TextIO

from zoo.cli import snapshot_seal as sealing

FORMAT = 2
COMMANDS = frozenset({"list", "targets", "info", "plugins", "fetch"})
# Differs between two shells that would print the same thing; the rest of the environment is keyed.
_VOLATILE_ENV = frozenset({"_", "OLDPWD", "PWD", "SHLVL", "ZOO_SNAPSHOT_TRACE", "PYTEST_CURRENT_TEST"})
_KEEP = 256  # snapshot files kept; the oldest half goes when there are more
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC

Stat = tuple[int, int, int] | None
Handout = tuple[str | None, str, str]
"""``(file written in -o or None, cache file it comes from, its sha256)``."""


def _enabled() -> bool:
    return os.environ.get("ZOO_SNAPSHOTS", "1").strip().lower() not in ("0", "false", "no", "off")


def _trace(message: str) -> None:
    if os.environ.get("ZOO_SNAPSHOT_TRACE"):
        sys.stderr.write(f"zoo: snapshot: {message}\n")


def _eligible(argv: Sequence[str]) -> bool:
    command = next((a for a in argv if not a.startswith("-")), None)
    # Global options before the command (-p, --model-file, --config) take a value: keep it simple.
    return bool(argv) and argv[0] in COMMANDS and command == argv[0] and "--json" not in argv


def _folder() -> str:
    root = os.environ.get("ZOO_CACHE_DIR")
    if root:  # as zoo._config reads it: absolute, ~ expanded
        return os.path.join(os.path.abspath(os.path.expanduser(root)), "snapshots")
    from zoo._dirs import user_cache_dir

    return os.path.join(user_cache_dir(), "snapshots")


def _stat(path: str) -> Stat:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino)


def _tty(fd: int) -> bool:
    try:
        return os.isatty(fd)
    except OSError:
        return False


def _key(argv: Sequence[str]) -> tuple[Any, ...]:
    try:
        columns, lines = os.get_terminal_size(sys.__stdout__.fileno() if sys.__stdout__ else 1)
    except (OSError, ValueError):
        columns = lines = 0
    env = tuple(sorted((k, v) for k, v in os.environ.items() if k not in _VOLATILE_ENV and not sealing.secret(k)))
    return (FORMAT, sys.executable, sys.version, tuple(sys.path), os.getcwd(), tuple(argv), env,
            (_tty(0), _tty(1), _tty(2)), (columns, lines))


def _path(digest: str) -> str:
    return os.path.join(_folder(), digest[:32] + ".snap")


# --- replay ------------------------------------------------------------------------------


def replay(argv: Sequence[str]) -> bool:
    """Print the recorded answer and do the recorded hand-out, if nothing it depended on
    changed. False: run the command in full."""
    if not (_eligible(argv) and _enabled()):
        return False
    try:
        digest = sealing.digest(_key(argv))
        path = _path(digest)
        with open(path, "rb") as f:
            sealed = f.read()
        seal_key = sealing.seal_key()
        if seal_key is None:
            return False
        from _operator import _compare_digest  # hmac.compare_digest's own; hmac would load OpenSSL

        if not _compare_digest(sealed[:32], sealing.seal(seal_key, sealed[32:])):
            _trace(f"{path} is not sealed by this user's key (edited, or from another machine); running the command")
            return False
        stored = marshal.loads(sealed[32:])
    except (OSError, EOFError, ValueError, TypeError):
        return False
    if not (isinstance(stored, tuple) and len(stored) == 4 and stored[0] == digest):
        return False
    _, deps, handouts, chunks = stored
    for dep, recorded in deps:
        if _stat(dep) != recorded:
            _trace(f"{dep} changed since {path}; running the command")
            return False
    if handouts and not _hand_out(handouts):
        return False
    for fd, data in chunks:
        _emit(sys.stdout if fd == 1 else sys.stderr, data)
    _trace(f"replayed {path}")
    return True


def _hand_out(handouts: Sequence[tuple[str | None, str, str, Stat]]) -> bool:
    from hashlib import sha256

    writes: list[tuple[str, bytes]] = []
    for dest, source, digest, written in handouts:
        try:
            with open(source, "rb") as f:
                data = f.read()
        except OSError:
            return False
        if sha256(data).hexdigest() != digest:
            _trace(f"{source} no longer has the sha256 the full run verified; running the command")
            return False
        if dest is None:
            continue
        present = _stat(dest)
        if present is None:
            writes.append((dest, data))
            continue
        if present == written:
            continue  # the very file the full run wrote: its bytes were hashed then
        try:
            with open(dest, "rb") as f:
                same = sha256(f.read()).hexdigest() == digest
        except OSError:
            return False
        if not same:
            _trace(f"{dest} differs from the artifact; running the command")
            return False
    if writes:
        from pathlib import Path

        from zoo._fs import replace_all

        try:
            replace_all([(Path(dest), data) for dest, data in writes])
        except OSError:
            return False
    return True


def _emit(stream: TextIO | None, data: bytes) -> None:
    if not data or stream is None:
        return
    try:
        stream.buffer.write(data)
        stream.flush()
    except BrokenPipeError:  # `zoo list | head`: the reader is done; no second error at exit
        os.dup2(os.open(os.devnull, os.O_WRONLY), stream.fileno())


# --- record ------------------------------------------------------------------------------


class _Tee(io.TextIOBase):
    """A text stream that writes through to the real one and keeps a copy, in order
    with the other stream's: ``chunks`` holds ``(1 or 2, bytes)``."""

    def __init__(self, real: TextIO, fd: int, chunks: list[tuple[int, bytes]]) -> None:
        self.real = real
        self.fd = fd
        self.chunks = chunks
        self.buffer = _BytesTee(real.buffer, fd, chunks) if hasattr(real, "buffer") else None

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return self.real.encoding

    @property
    def errors(self) -> str | None:  # type: ignore[override]
        return self.real.errors

    def write(self, s: str) -> int:
        self.chunks.append((self.fd, s.encode(self.real.encoding or "utf-8", self.real.errors or "strict")))
        return self.real.write(s)

    def flush(self) -> None:
        self.real.flush()

    def isatty(self) -> bool:
        return self.real.isatty()

    def fileno(self) -> int:
        return self.real.fileno()


class _BytesTee(io.RawIOBase):
    def __init__(self, real: Any, fd: int, chunks: list[tuple[int, bytes]]) -> None:
        self.real = real
        self.fd = fd
        self.chunks = chunks

    def writable(self) -> bool:
        return True

    def write(self, b: Any) -> int:
        self.chunks.append((self.fd, bytes(b)))
        written: int = self.real.write(b)
        return written

    def flush(self) -> None:
        self.real.flush()


class Recorder:
    """Watches one full run; ``offer`` says its answer may be replayed."""

    def __init__(self, argv: Sequence[str]) -> None:
        self.argv = tuple(argv)
        self.digest = sealing.digest(_key(argv))
        self.read: set[str] = set()
        self.listed: set[str] = set()
        self.network = False
        self.offered: list[Handout] | None = None
        self.active = True
        self.chunks: list[tuple[int, bytes]] = []
        self.out = _Tee(sys.stdout, 1, self.chunks)
        self.err = _Tee(sys.stderr, 2, self.chunks)
        sys.stdout, sys.stderr = self.out, self.err
        sys.addaudithook(self._audit)

    def _audit(self, event: str, args: tuple[Any, ...]) -> None:
        if not self.active:
            return
        if event == "open":
            path, mode, flags = args
            if isinstance(path, str) and not path.endswith(".pyc") and \
                    not (mode and any(c in mode for c in "wax+")) and not (flags or 0) & _WRITE_FLAGS:
                self.read.add(path)
        elif event in ("os.listdir", "os.scandir"):
            path = args[0]
            self.listed.add(path if isinstance(path, str) else ".")
        elif event.startswith("socket.") and event in ("socket.connect", "socket.getaddrinfo"):
            self.network = True

    def offer(self, handouts: Sequence[Handout] = ()) -> None:
        self.offered = list(handouts)

    def finish(self, code: object) -> None:
        self.active = False
        sys.stdout, sys.stderr = self.out.real, self.err.real
        if code not in (0, None) or self.offered is None or self.network:
            if self.network:
                _trace("not recorded: the command used the network")
            return
        try:
            self._save()
        except OSError as exc:  # a snapshot is only ever a shortcut
            _trace(f"not recorded: {exc}")

    def _deps(self) -> list[tuple[str, Stat]]:
        paths = {os.path.abspath(p) for p in self.read | self.listed}
        paths.update(os.path.abspath(p) for p in sys.path if p)
        for module in list(sys.modules.values()):
            file = getattr(module, "__file__", None)
            if isinstance(file, str):
                paths.add(file)
        here = os.getcwd()
        while True:  # zoo.toml is looked for here and in every parent: a new one must count
            paths.add(os.path.join(here, "zoo.toml"))
            parent = os.path.dirname(here)
            if parent == here:
                break
            here = parent
        paths.add(_user_config())
        paths.difference_update(os.path.abspath(dest) for dest, _, _ in self.offered or () if dest is not None)
        own = _folder() + os.sep
        return sorted((p, _stat(p)) for p in paths if not p.startswith(own) and not _stdlib(p))

    def _save(self) -> None:
        import tempfile

        seal_key = sealing.seal_key()
        if seal_key is None:
            _trace("not recorded: no key to seal snapshots with")
            return
        path = _path(self.digest)
        folder = os.path.dirname(path)
        os.makedirs(folder, exist_ok=True)
        handouts = [(dest, source, digest, _stat(dest) if dest is not None else None)
                    for dest, source, digest in self.offered or []]
        body = marshal.dumps((self.digest, self._deps(), handouts, self.chunks))
        fd, tmp = tempfile.mkstemp(dir=folder, suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(sealing.seal(seal_key, body) + body)
            os.replace(tmp, path)
        except BaseException:
            os.unlink(tmp)
            raise
        _prune(folder)


_STDLIB = os.path.dirname(os.__file__) + os.sep


def _stdlib(path: str) -> bool:
    """The interpreter's own library, which the key's ``sys.version`` and executable cover."""
    return path.startswith(_STDLIB) and "-packages" + os.sep not in path


def _user_config() -> str:
    from zoo._dirs import user_config_dir

    return os.path.join(user_config_dir(), "zoo.toml")


def _prune(folder: str) -> None:
    names = [n for n in os.listdir(folder) if n.endswith(".snap")]
    if len(names) <= _KEEP:
        return
    by_age = sorted(names, key=lambda n: _stat(os.path.join(folder, n)) or (0, 0, 0))
    for name in by_age[: len(names) // 2]:
        with contextlib.suppress(OSError):  # another zoo pruned it first
            os.unlink(os.path.join(folder, name))


_recorder: Recorder | None = None


def record(argv: Sequence[str]) -> Recorder | None:
    """Start watching this run, if its answer could be replayed next time."""
    global _recorder
    if _eligible(argv) and _enabled():
        _recorder = Recorder(argv)
    return _recorder


def offer(handouts: Sequence[Handout] = ()) -> None:
    """Called by a command whose answer may be replayed: listing, or a fetch from the cache."""
    if _recorder is not None:
        _recorder.offer(handouts)


def run(main: Callable[[], object], argv: Sequence[str]) -> None:
    """Replay, or run ``main`` (a click command in standalone mode) and record it."""
    if replay(argv):
        sys.exit(0)
    recorder = record(argv)
    code: object = 0
    try:
        main()
    except SystemExit as exc:
        code = exc.code
        raise
    except BaseException:
        code = 1
        raise
    finally:
        if recorder is not None:
            recorder.finish(code)
