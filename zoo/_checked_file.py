"""Files a model pack reads by their sha256: data, weights, ONNX graphs.

A pack names the exact bytes it builds from (the digest goes into the build key), so it must
refuse any other bytes, and say which file, which digest it expected, which it found and what
to do. Only regular files are read: a FIFO or a device named in place of one would never end.
Torch-free: registration computes identities with it.
"""

from __future__ import annotations

import hashlib
import importlib.util
from pathlib import Path
from typing import BinaryIO

from zoo._errors import BuildError
from zoo._regular_file import open_regular

__all__ = ["checked_file", "file_sha256", "package_file"]


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
