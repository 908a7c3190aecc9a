"""A firmware project into its folder, beside the user's own files.

zoo records the files it wrote in ``zoo-firmware.json``: a folder with that record is a project
zoo generated, whose files zoo may replace, and whose previous model's files it removes. Any
other non-empty folder is the user's, and zoo writes there only with ``--force``. Every file is
staged and renamed into place, and nothing is written through a symlink: one is refused before
any write, and the writes go through descriptors of folders opened without following one
(``replace_all_beneath``), so a symlink swapped in after that check is refused too.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path

from zoo._errors import UsageError
from zoo._fs import SymlinkInTheWay, replace_all_beneath

RECORD = "zoo-firmware.json"
"""The files zoo wrote into the project, by their paths inside it."""
_GENERATOR = "zoo firmware"


def write_project(folder: Path, files: Mapping[str, bytes], *, force: bool, about: Mapping[str, str]) -> None:
    """Write ``files`` (relative ``/`` paths) into ``folder``, replacing the previous project's files
    and removing those of them this one has not. UsageError for a folder that is not zoo's (unless
    ``force``) and for a symlink where zoo would write."""
    previous = _recorded(folder)
    _refuse_symlinks(folder, [*files, RECORD, *(previous or ())])
    if not force:
        _refuse_others(folder, files, previous)
    keep = set(previous or ())
    try:
        # The record first names both projects' files, so an interrupted run leaves every zoo file named.
        replace_all_beneath(folder, [(RECORD, _record(sorted(keep | set(files)), about))])
        replace_all_beneath(folder, sorted(files.items()), remove=sorted(keep - set(files)))
        replace_all_beneath(folder, [(RECORD, _record(sorted(files), about))])
    except SymlinkInTheWay as exc:  # swapped in after the check: the writes open no path that follows one
        raise _symlink_error(folder, str(exc.filename), "Nothing was written through it") from None


def _record(names: list[str], about: Mapping[str, str]) -> bytes:
    return (json.dumps({"generator": _GENERATOR, **about, "files": names}, indent=1) + "\n").encode()


def _path(folder: Path, name: str) -> Path:
    return folder.joinpath(*name.split("/"))


def _safe(name: object) -> bool:
    """A plain relative path inside the folder: a record is the user's file too, and never sends zoo outside."""
    if not isinstance(name, str) or not name or name.startswith("/") or "\\" in name:
        return False
    return all(part not in ("", ".", "..") for part in name.split("/"))


def _recorded(folder: Path) -> list[str] | None:
    """The files the previous ``zoo firmware`` wrote here, or None if no valid record says so."""
    try:
        data = json.loads((folder / RECORD).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    names = data.get("files") if isinstance(data, dict) and data.get("generator") == _GENERATOR else None
    if not isinstance(names, list) or not all(_safe(n) for n in names):
        return None
    return [str(n) for n in names]


def _refuse_symlinks(folder: Path, names: Iterable[str]) -> None:
    paths = {folder}
    for name in names:
        parts = name.split("/")
        paths.update(folder.joinpath(*parts[:i]) for i in range(1, len(parts) + 1))
    links = sorted(str(p) for p in paths if p.is_symlink())
    if links:
        raise _symlink_error(folder, links[0], "Nothing was written")


def _symlink_error(folder: Path, link: str, written: str) -> UsageError:
    return UsageError(f"-o {folder}: {link} is a symlink, and zoo never writes through one. {written}. Give the "
                      "real folder, or replace the symlink with a folder or file of its own")


def _refuse_others(folder: Path, files: Mapping[str, bytes], previous: list[str] | None) -> None:
    try:
        present = sorted(p.name for p in folder.iterdir())
    except FileNotFoundError:
        return
    except NotADirectoryError:
        raise UsageError(f"-o {folder} is a file: give a folder for the project") from None
    if previous is None:
        if present:
            raise UsageError(
                f"-o {folder} is not empty ({', '.join(present[:3])}{', ...' if len(present) > 3 else ''}) and "
                f"no {RECORD} there says zoo generated it. Nothing was written. Choose a new or empty folder, or "
                "pass --force to replace zoo's files there (CMakeLists.txt, main.cpp, README.md, model/, ...) "
                "and leave the others")
        return
    theirs = sorted(n for n in files if n not in previous and _path(folder, n).exists())
    if theirs:
        raise UsageError(f"-o {folder}: {theirs[0]} there is not one of the files {RECORD} says zoo wrote, and "
                         "this project would replace it. Nothing was written. Move it away, or pass --force to "
                         "replace it")
