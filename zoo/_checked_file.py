"""Files a model pack reads by their sha256: data, weights, ONNX graphs.

A pack names the exact bytes it builds from (the digest goes into the build key), so it must
refuse any other bytes, and say which file, which digest it expected, which it found and what
to do. Only regular files are read: a FIFO or a device named in place of one would never end.
Torch-free: registration computes identities with it.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, BinaryIO

from zoo._errors import BuildError
from zoo._regular_file import open_regular

__all__ = ["PackageData", "checked_file", "file_sha256", "package_file"]


def file_sha256(path: Path | str, *, owner: str, remedy: str) -> str:
    """The sha256 (hex) of the file at ``path``.

    A missing file, or one that is not a regular file, raises `zoo.BuildError`
    ``"{owner}: {path} is missing; {remedy}"`` (or ``… is not a regular file; …``): ``owner``
    names the model or pack, ``remedy`` says what to do (``"reinstall zoo-audio"``)."""
    digest = hashlib.sha256()
    with open_for_pack(Path(path), owner=owner, remedy=remedy) as opened:
        while chunk := opened.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def open_for_pack(path: Path, *, owner: str, remedy: str) -> BinaryIO:
    """``path`` opened for reading, or `zoo.BuildError` as `file_sha256` raises it."""
    try:
        opened = open_regular(path)
    except FileNotFoundError:
        raise BuildError(f"{owner}: {path} is missing; {remedy}") from None
    except OSError as e:
        raise BuildError(f"{owner}: {path} cannot be read ({e.strerror or e}); {remedy}") from None
    if opened is None:
        raise BuildError(f"{owner}: {path} is not a regular file; {remedy}")
    return opened


def checked_file(path: Path | str, sha256: str, *, owner: str, remedy: str) -> Path:
    """``path``, once its bytes are checked to have ``sha256`` (hex, as ``hashlib`` writes it).

    Other bytes raise `zoo.BuildError` naming the file, the expected and the found digest and
    ``remedy``: ``"{owner}: {path} has sha256 {found}, expected {sha256}: refusing other bytes;
    {remedy}"``; a missing file raises as in `file_sha256`. Read the file only through the path
    this returns, right after the check."""
    path = Path(path)
    found = file_sha256(path, owner=owner, remedy=remedy)
    if found != sha256.lower():
        raise BuildError(f"{owner}: {path} has sha256 {found}, expected {sha256}: refusing other bytes; {remedy}")
    return path


def package_file(package: str, relative: str, *, owner: str, remedy: str) -> Path:
    """The file ``relative`` (``"datasets/data/digits.npz"``) inside the installed ``package``,
    found without importing it (its ``__init__`` may need what the pack does not install).

    A package that is not installed, or has no such file, raises `zoo.BuildError`
    ``"{owner}: {package}/{relative} is missing: …; {remedy}"``, ``remedy`` saying what to install."""
    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        spec = None
    for location in (spec.submodule_search_locations or []) if spec else []:
        path = Path(location) / relative
        if path.exists():
            return path
    why = f"{package} is not installed" if spec is None else f"the installed {package} has no such file"
    raise BuildError(f"{owner}: {package}/{relative} is missing: {why}; {remedy}")


@dataclass(frozen=True)
class PackageData:
    """A data file that another installed distribution ships and a model pack reads without
    importing that distribution, pinned by a snapshot the pack ships: a JSON file whose ``sha256``
    is the file's digest, beside whatever else registration needs (sizes, a split's counts), so
    that registration reads no data and refuses none.

    ``package`` and ``relative`` find the file (`package_file`; ``install`` says what to install
    when it is not there); ``remedy`` says what to do when its bytes are not the snapshot's
    (`checked_file`); ``owner`` names the pack in both errors, and ``name`` the data in its
    `identity`."""

    owner: str
    package: str
    relative: str
    install: str
    snapshot_file: Path
    remedy: str
    name: str

    def path(self) -> Path:
        """The file inside the installed ``package``, unchecked (what a snapshot is made from)."""
        return package_file(self.package, self.relative, owner=self.owner, remedy=self.install)

    def snapshot(self) -> dict[str, Any]:
        """``snapshot_file``'s JSON, read once."""
        return _read_snapshot(self.snapshot_file)

    def checked_path(self) -> Path:
        """The file, once its bytes are checked against the snapshot's ``sha256`` (hashed once)."""
        return _checked_path(self)

    def sha256(self, path: Path) -> str:
        """The digest of ``path`` (a snapshot's ``sha256``), or `zoo.BuildError` with ``remedy``."""
        return file_sha256(path, owner=self.owner, remedy=self.remedy)

    def identity(self, split: str, *details: str) -> str:
        """``{name}:sha256:{digest};{split}`` and then each of ``details`` (the split rule, the
        preprocessing), ``;``-separated: the data's identity for a `zoo.Dataset`, hashlib only."""
        return ";".join((f"{self.name}:sha256:{self.snapshot()['sha256']}", split, *details))

    @staticmethod
    def dumps(snapshot: dict[str, Any]) -> str:
        """A snapshot as its file holds it: indented, keys sorted, one line at the end."""
        return json.dumps(snapshot, indent=1, sort_keys=True) + "\n"


@cache
def _read_snapshot(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text())
    return data


@cache
def _checked_path(data: PackageData) -> Path:
    return checked_file(data.path(), data.snapshot()["sha256"], owner=data.owner, remedy=data.remedy)
